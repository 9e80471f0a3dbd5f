"""Every event and decision has a lossless JSON form."""

import json

import pytest

from xce.core import decisions as dec, events as ev
from xce.core.specs import HostSpec, JobSpec, ProjectSpec, QueueSpec, ResourceDef, SchedConfig

EVENTS = [
    ev.ConfigPush(ts=1, config=SchedConfig(
        job_pick_plugin="builtin_fcfs",
        queues=(QueueSpec("high", 50, preemptible_queues=("low",), max_running=3, preempt_signal="SIGTSTP"),),
        projects=(ProjectSpec("p", 2),), resources=(ResourceDef("example.com/lic", consumable=True, shared=True, total=4),),
        resource_names={"memory_rss": "mem"})),
    ev.JobsPush(ts=2, jobs=(JobSpec(1, "ann", "high", request="rusage[mem=1G]", tasks=4, placement=(("h1", 4),)),)),
    ev.WorkersPush(ts=3, hosts=(HostSpec("h1", values={"slots": 8, "type": "X86_64"}),)),
    ev.ResourcesPush(ts=4, resources=(ResourceDef("example.com/gpu", consumable=True),)),
    ev.ResvalsFull(ts=5, values={"h1": {"mem": 123, "r1m": 0.5}}),
    ev.ResvalsDelta(ts=6, values={"h1": {"mem": 99}}),
    ev.JobStateChange(ts=7, jobid=1, state="SSUSP", reason="preempted by job 2"),
    ev.JobUpdate(ts=8, jobid=1, priority=5, queue="low"),
    ev.JobUpdate(ts=8, jobid=1, run_limit=1200),
    ev.QueueUpdate(ts=9, queue=QueueSpec("low", 1, active=False)),
    ev.JobRusage(ts=10, jobid=1, usage={"memory_rss": 1000, "cpu_time": 3}),
    ev.BeginRound(ts=11),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.TYPE)
def test_event_round_trips_through_json_text(event):
    text = json.dumps(event.to_json())
    assert ev.from_json(json.loads(text)) == event


def test_every_event_type_is_covered():
    assert {e.TYPE for e in EVENTS} == set(ev.EVENT_TYPES)


@pytest.mark.parametrize("bad,message", [
    ({"type": "NOPE", "ts": 1}, "unknown event type 'NOPE'"),
    ({"type": "BEGIN_ROUND", "ts": -1}, "'ts' must be a non-negative integer"),
    ({"type": "BEGIN_ROUND", "ts": "12"}, "'ts' must be a non-negative integer"),
    ({"type": "JOBS_PUSH", "ts": 1, "payload": {}}, "JOBS_PUSH: bad payload"),
    ({"type": "JOBS_PUSH", "ts": 1, "payload": {"jobs": [{"jobid": 1, "user": "a", "queue": "q", "colour": 1}]}},
     "unknown field(s) colour"),
    ([1, 2], "expected a JSON object"),
])
def test_malformed_events_say_what_is_wrong(bad, message):
    with pytest.raises(ev.EventFormatError) as err:
        ev.from_json(bad)
    assert message in str(err.value)


DECISIONS = [
    dec.Dispatch(ts=1, seq=1, jobid=3, placement=(("a", 2), ("b", 1))),
    dec.Pend(ts=1, seq=2, jobid=4, reasons=(dec.PendReason("rusage", "needs mem 4G, short by mem 1G", "mem", 4, 1),
                                            dec.PendReason("slots", "x", proven_by=3))),
    dec.Preempt(ts=1, seq=3, preempting_jobid=9, victim_jobids=(1, 2), signal="SIGSTOP"),
    dec.Resume(ts=1, seq=4, jobid=1),
]


@pytest.mark.parametrize("decision", DECISIONS, ids=lambda d: d.OP)
def test_decision_round_trips(decision):
    assert dec.from_json(json.loads(json.dumps(decision.to_json())), decision.ts) == decision


def test_decision_key_ignores_time_and_sequence():
    a = dec.Dispatch(ts=1, seq=1, jobid=3, placement=(("a", 2),))
    b = dec.Dispatch(ts=9, seq=7, jobid=3, placement=(("a", 2),))
    c = dec.Dispatch(ts=1, seq=1, jobid=3, placement=(("b", 2),))
    assert a.key() == b.key() != c.key()
