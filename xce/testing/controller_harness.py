"""A real controller in this process, driven the way its callers drive it, with what it said recorded.

The controller's rules (gates, dependencies, what a decision or a report does to a job) are
otherwise tested over HTTP against a controller process: a second or more per test. Here the test
plays the user, the scheduler and the workers by calling the same functions the API's endpoints
call, on a controller over a temporary SQLite file, so such a test takes milliseconds::

    h = ControllerHarness(tmp_path)
    h.host("h1", slots=4)
    jobid = h.submit(command=["true"])
    h.dispatch(jobid, ("h1", 1))
    h.report("h1", jobid, "started", pid=7)
    h.report("h1", jobid, "finished", exit_code=0)
    assert [type(e).__name__ for e in h.feed] == [..., "JobsPush", "JobStateChange", "JobStateChange"]

As Nomad's scheduler harness records the plans it is handed, this one records, in order, what the
controller told the others: ``feed``, every event it published for the scheduler, decoded as the
scheduler decodes it (strictly: a malformed event fails the test where it is read), and
``actions``, every worker action, as ``(host, action)`` decoded as the worker decodes it. The
workers are attentive: after every step each host fetches what was queued for it, as a worker's
long-poll would at once, so an action is recorded once its transaction commits.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from xce.controller.auth.tokens import Principal
from xce.controller.hosts import fleet
from xce.controller.jobs import control, gates, submission
from xce.controller.sched import decisions, feed
from xce.controller.service import Controller, Settings
from xce.controller.web import views
from xce.controller.web.models import (
    ActRequest,
    DecisionEnvelope,
    JobReport,
    ModifyRequest,
    RegisterRequest,
    SubmitRequest,
)
from xce.core import decisions as core_decisions, events as ev
from xce.protocol.actions import Action, decode

#: Queues and projects most rules need: a default queue, a second one, and a closed one.
CONFIG = """
cluster_name = "harness"
default_queue = "normal"

[queues.normal]
priority = 30

[queues.high]
priority = 50

[queues.closed]
status = "closed"

[projects.default]
"""


class ControllerHarness:
    """One controller over ``tmp_path``; :meth:`close` (or ``with``) releases its database and lock."""

    def __init__(self, tmp_path: Path, config: str = CONFIG, worker_timeout: float = 600.0) -> None:
        path = tmp_path / "xce.toml"
        path.write_text(config)
        self.ctl = Controller(Settings(state_dir=tmp_path / "state", config_path=path,
                                       worker_timeout=worker_timeout))
        self.ctl.open()
        #: What the scheduler has read from the feed, in order.
        self.feed: list[ev.Event] = []
        #: What the workers have fetched, in order: ``(host, action)``.
        self.actions: list[tuple[str, Action]] = []
        self._seq = 0
        self._cursor: dict[str, int] = {}  # each worker's last fetched action id
        self._listening: set[str] = set()
        self._decision_ids = itertools.count(1)
        self._record()

    def close(self) -> None:
        self.ctl.close()

    def __enter__(self) -> ControllerHarness:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the workers ------------------------------------------------------------------------

    def host(self, name: str, slots: int = 4, **resources: Any) -> None:
        """Register a worker (or register it again, as one that restarted does)."""
        fleet.register(self.ctl, RegisterRequest(name=name, resources={"slots": slots, "ncpus": slots,
                                                                       "maxmem": 16 << 30, **resources},
                                                 load={"mem": 8 << 30, "r1m": 0.25}, running=[]))
        self._cursor.setdefault(name, 0)
        self._listening.add(name)
        self._record()

    def report(self, host: str, jobid: int, status: str, **fields: Any) -> dict[str, Any]:
        """A worker's report about one job (``started``, ``finished``, ``rejected`` ...): its result."""
        (result,) = fleet.job_reports(self.ctl, host, [JobReport(jobid=jobid, status=status, **fields)])["results"]
        self._record()
        return result

    def silence(self, host: str) -> None:
        """``host``'s worker stops fetching its actions (what was queued for it stays undelivered)."""
        self._listening.discard(host)

    def lost(self, host: str) -> list[str]:
        """``host`` falls silent for longer than the worker timeout, and the controller notices."""
        self.silence(host)
        h = self.ctl.hosts[host]
        h.seen_mono -= self.ctl.settings.worker_timeout + 1
        given_up = fleet.check_liveness(self.ctl)
        self._record()
        return given_up

    # -- the users --------------------------------------------------------------------------

    def submit(self, user: str = "alice", **fields: Any) -> int:
        """Submit as ``user`` (fields of the submission request; the command defaults to ``sleep 100``)."""
        fields.setdefault("command", ["sleep", "100"])
        answer = submission.submit(self.ctl, user, SubmitRequest(**fields))
        self._record()
        return answer["jobid"]

    def act(self, action: str, *jobs: int | str, user: str = "alice", **fields: Any) -> list[dict[str, Any]]:
        """``xce kill/suspend/resume/hold/release/requeue`` as ``user``: one result per job."""
        req = ActRequest(action=action, jobs=[str(j) for j in jobs], **fields)
        results = control.act(self.ctl, self._principal(user), req)["results"]
        self._record()
        return results

    def modify(self, jobid: int, user: str = "alice", **fields: Any) -> dict[str, Any]:
        row = control.modify(self.ctl, self._principal(user), jobid, ModifyRequest(**fields))
        self._record()
        return row

    def job(self, jobid: int) -> dict[str, Any]:
        """The job as ``GET /v1/jobs/ID`` answers it, history included."""
        return json.loads(json.dumps(views.job_detail(self.ctl.job(jobid), views.history_of(self.ctl, jobid))))

    def moves(self, since: int = 0) -> list[tuple[int, str]]:
        """(job, new state) of each state change the feed carried from entry ``since`` on."""
        return [(e.jobid, e.state) for e in self.feed[since:] if isinstance(e, ev.JobStateChange)]

    # -- the scheduler ----------------------------------------------------------------------

    def decide(self, *made: core_decisions.Decision) -> list[dict[str, Any]]:
        """Post decisions as the scheduler does, one batch: one result per decision."""
        envelopes = [DecisionEnvelope(id=f"h-{next(self._decision_ids)}", ts=d.ts, decision=d.to_json())
                     for d in made]
        results = decisions.apply(self.ctl, envelopes)
        self._record()
        return results

    def dispatch(self, jobid: int, *placement: tuple[str, int]) -> dict[str, Any]:
        (result,) = self.decide(core_decisions.Dispatch(ts=1, seq=0, jobid=jobid, placement=tuple(placement)))
        return result

    def pend(self, jobid: int, step: str, text: str) -> dict[str, Any]:
        reason = core_decisions.PendReason(step=step, text=text)
        (result,) = self.decide(core_decisions.Pend(ts=1, seq=0, jobid=jobid, reasons=(reason,)))
        return result

    def tick(self) -> None:
        """The leader's periodic look at gated jobs (begin times, array limits, dependencies)."""
        gates.tick(self.ctl)
        self._record()

    # -- recording --------------------------------------------------------------------------

    def _principal(self, user: str) -> Principal:
        return Principal(role="admin" if user == "admin" else "user", name=user)

    def _record(self) -> None:
        body, _ = feed.read_events(self.ctl, self._seq, 100_000)
        page = json.loads(body)
        self.feed.extend(ev.from_json(item["event"]) for item in page["events"])
        self._seq = page["last_seq"]
        for name in sorted(self._listening):
            got = fleet.fetch_actions(self.ctl, name, self._cursor[name], 100_000)
            self.actions.extend((name, decode(a)) for a in got["actions"])
            self._cursor[name] = got["last_id"]
