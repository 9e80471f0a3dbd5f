"""A job the cluster can never run is refused, and one the cluster shrank under is told so, in
job-resources.md's form ("needs R N, short by R M"), naming the resource that is short: the
controller's wording replaces the scheduler's shortfall but keeps its shape."""

from __future__ import annotations

import json
import uuid

import pytest
from test_controller_store import open_controller, submit

from xce.controller.errors import FieldErrors
from xce.controller.hosts import fleet
from xce.controller.sched import decisions
from xce.controller.web.models import DecisionEnvelope, RegisterRequest

GIB = 1024**3


def test_refusals_and_the_rewritten_pend_reason_name_what_is_short(tmp_path):
    ctl = open_controller(tmp_path, None)
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 4, "maxmem": 8 * GIB}, load={}))
        with pytest.raises(FieldErrors) as refused:
            submit(ctl, tasks=6)
        assert refused.value.errors[0]["msg"] == (
            "the job can never run on this cluster: needs slots 6, short by slots 2 (the cluster has 4 slots on "
            "1 host); --allow-pending-forever submits it anyway")
        with pytest.raises(FieldErrors) as refused:
            submit(ctl, request="rusage[mem=12G]")
        assert "needs mem 12G, short by mem 4G (for one task; the largest host has 8G)" in refused.value.errors[0]["msg"]
        jobid = submit(ctl, tasks=4)["jobid"]
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 3, "maxmem": 8 * GIB}, load={}))
        decisions.apply(ctl, [DecisionEnvelope(id=uuid.uuid4().hex, ts=1, decision={
            "op": "PEND", "seq": 1, "jobid": jobid, "reasons": [
                {"step": "slots", "text": "needs slots 4, short by slots 1 (closest host has 3)"}]})])
        (reason,) = json.loads(ctl.job(jobid)["pend_reasons"])
        assert reason == {"step": "cluster", "text": "cannot run on the current cluster: needs slots 4, short by "
                                                     "slots 1 (the cluster has 3 slots on 1 host)"}
    finally:
        ctl.close()
