"""The preempt hook's event names the signal the victim was sent (SIGSTOP or the queue's
``preempt_signal``): a suspended job has no exit signal, so the event must carry the one sent."""

from __future__ import annotations

import time
import uuid

from test_controller_store import open_controller, submit

from xce import hooks
from xce.controller.hosts import fleet
from xce.controller.sched import decisions
from xce.controller.web.models import DecisionEnvelope, RegisterRequest


def test_the_preempt_event_carries_the_signal_sent(tmp_path):
    seen: list[dict] = []
    name = f"preempt-signal-{uuid.uuid4().hex}"
    hooks.register(name, seen.append)
    ctl = open_controller(tmp_path, None)
    try:
        fleet.register(ctl, RegisterRequest(name="h1", resources={"slots": 2}, load={}))
        victim, other = submit(ctl)["jobid"], submit(ctl)["jobid"]
        for seq, (jobid, d) in enumerate(((victim, "DISPATCH"), (other, "DISPATCH")), 1):
            decisions.apply(ctl, [DecisionEnvelope(id=uuid.uuid4().hex, ts=1, decision={
                "op": d, "seq": seq, "jobid": jobid, "placement": [["h1", 1]]})])
        decisions.apply(ctl, [DecisionEnvelope(id=uuid.uuid4().hex, ts=1, decision={
            "op": "PREEMPT", "seq": 3, "preempting_jobid": 99, "victim_jobids": [victim], "signal": "SIGTSTP"})])
        deadline = time.monotonic() + 10
        while not any(e["event"] == "preempt" for e in seen):
            assert time.monotonic() < deadline, seen
            time.sleep(0.02)
        (event,) = [e for e in seen if e["event"] == "preempt"]
        assert (event["jobid"], event["state"], event["signal"]) == (victim, "SSUSP", "SIGTSTP")
        assert event["end_reason"] == "preempted by job 99"
    finally:
        ctl.close()
        hooks.unregister(name)
