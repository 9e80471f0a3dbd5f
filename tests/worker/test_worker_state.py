"""The worker's rules, fed events and read back as instructions: no process, no controller, no clock.

The last tests run a real agent (real processes, no controller) and replay what it was fed.
"""

from __future__ import annotations

import logging
import signal
import time

from xce.endcodes import RUNLIMIT
from xce.protocol.actions import KillJob, ResumeJob, SetRunLimit, SignalJob, StartJob, SuspendJob
from xce.worker import stimuli
from xce.worker.agent import Agent
from xce.worker.jobstate import read_journal
from xce.worker.runlimit import RUN_LIMIT_KEY
from xce.worker.state import (
    ActionArrived,
    Adopt,
    BatchReady,
    Booted,
    CloseHost,
    DevicesFound,
    Discard,
    Forget,
    Found,
    JobExited,
    JobStarted,
    JournalFailed,
    JournalWritable,
    Leftovers,
    OpenHost,
    PostReports,
    Release,
    Report,
    ReportsAnswered,
    Reregister,
    Restarted,
    RetryJournal,
    SetLimits,
    SignalProcs,
    Spawn,
    StartFailed,
    Terminate,
    Tick,
    WorkerState,
    WriteRecord,
)

END = {"exit_code": 0, "signal": None, "reason": ""}


def _worker(*gpus: str) -> WorkerState:
    ws = WorkerState()
    ws.handle(Booted("h1", "n0"), DevicesFound(gpus))
    return ws


def _start(jobid: int, **fields) -> ActionArrived:
    return ActionArrived(StartJob(jobid=jobid, user="x", command=["true"], **fields))


def _of(kind: type, instructions: list) -> list:
    return [i for i in instructions if isinstance(i, kind)]


def _reports(instructions: list) -> list[dict]:
    return [i.body for i in _of(Report, instructions)]


def test_a_start_delivered_again_starts_nothing_but_a_later_run_starts_again():
    ws = _worker()
    (spawn,) = ws.handle(_start(1, run=5))
    assert isinstance(spawn, Spawn) and spawn.job.jobid == 1
    assert ws.handle(_start(1, run=5)) == []  # still starting
    assert ws.starting(1) and ws.knows(1)
    ws.handle(JobStarted(1, 100, 10.0, journaled=True))
    assert not ws.starting(1)
    assert ws.handle(_start(1, run=5)) == []  # running
    ws.handle(JobExited(1, END))
    assert ws.handle(_start(1, run=5)) == []  # that run ended here
    assert _of(Spawn, ws.handle(_start(1, run=6)))  # requeued: its next run


def test_an_action_for_another_run_of_a_job_touches_nothing_of_the_run_held_here():
    """A requeued job runs again under its id: a kill (suspend, resume, signal, run limit) for its old
    run must not reach its new one, here or anywhere."""
    ws = _worker()
    ws.handle(_start(1, run=6), JobStarted(1, 100, 10.0, journaled=True))
    for old in (KillJob(jobid=1, run=5), SuspendJob(jobid=1, run=5), ResumeJob(jobid=1, run=5),
                SignalJob(jobid=1, run=5, signal="USR1"), SetRunLimit(jobid=1, run=5, run_limit=60)):
        assert ws.handle(ActionArrived(old)) == [], old
    assert ws.handle(ActionArrived(KillJob(jobid=9, run=6))) == []  # not a job of this host
    assert _of(Terminate, ws.handle(ActionArrived(KillJob(jobid=1, run=6, reason="killed by ann"))))
    # A controller that names no run speaks of the job whatever its run (as it always did).
    ws.handle(_start(2, run=7), JobStarted(2, 101, 10.0, journaled=True))
    assert _of(Terminate, ws.handle(ActionArrived(KillJob(jobid=2))))


def test_every_report_names_its_run_and_an_old_runs_answer_forgets_no_newer_run():
    ws = _worker()
    out = ws.handle(_start(1, run=5), JobStarted(1, 100, 10.0, journaled=True), JobExited(1, END))
    assert [(b["status"], b["run"]) for b in _reports(out)] == [("started", 5), ("finished", 5)]
    (post,) = ws.handle(BatchReady(tuple(i.seq for i in _of(Report, out))))
    # Requeued and dispatched here again before the old run's end was taken: the answer about run 5
    # must not forget the record of run 6 (one journal record per job).
    ws.handle(_start(1, run=6), JobStarted(1, 101, 11.0, journaled=True))
    assert ws.handle(ReportsAnswered(post.key, 200)) == []
    assert ws.runs() == {"1": 6}


def test_a_start_of_a_newer_run_discards_what_is_left_of_the_old_one_first():
    """``host down --requeue`` of a host whose worker still runs the job (stopped, or alive): the job
    comes back to it as a new run while the old one is held. The old one goes, its end unreported
    (it is not the new run's end), before the new one starts; a start of the old run delivered again
    starts nothing."""
    ws = _worker("0")
    ws.handle(_start(1, run=5, requests={"xce.io/gpu": 1}), JobStarted(1, 100, 10.0, journaled=True))
    out = ws.handle(_start(1, run=6, requests={"xce.io/gpu": 1}))
    assert [type(i) for i in out] == [Discard, Spawn] and out[0] == Discard(1)
    assert out[1].job.run == 6 and out[1].gpus == ("0",)  # the old run's device is free again
    assert ws.handle(_start(1, run=5)) == []  # the old run's start, delivered again
    assert ws.handle(_start(1, run=6)) == []  # the new one's
    started = ws.handle(JobStarted(1, 101, 11.0, journaled=True))
    assert [(b["status"], b["run"]) for b in _reports(started)] == [("started", 6)]


def test_the_runs_a_worker_holds_include_those_still_starting():
    """The load report lists them: the controller declares lost no run whose start is under way."""
    ws = _worker()
    ws.handle(_start(1, run=5))
    assert ws.starting(1) and ws.runs() == {"1": 5}
    found = (Found(2, alive=True, exited=False, limits={}, gpus=(), started=900.0, run=8),)
    ws.handle(Restarted(found, 1000.0))
    assert ws.runs() == {"1": 5, "2": 8}  # an adopted job is reported for the run it was journaled with


def test_a_jobs_reports_go_in_order_and_its_record_stays_until_its_end_is_taken():
    ws = _worker()
    ws.handle(_start(1))
    started = ws.handle(JobStarted(1, 100, 10.0, journaled=True))
    assert started[0] == WriteRecord(1)  # recorded before it is reported
    ended = ws.handle(JobExited(1, END))
    assert Release(1) in ended and not _of(Forget, ended)
    seqs = [i.seq for i in _of(Report, started + ended)]
    (post,) = ws.handle(BatchReady(tuple(reversed(seqs))))
    assert [(r["jobid"], r["status"]) for r in post.reports] == [(1, "started"), (1, "finished")]
    assert ws.handle(ReportsAnswered(post.key, 200)) == [Forget(1)]


def test_an_attach_is_told_to_retry_until_the_controller_has_heard_how_the_job_ended():
    """``xce submit -I`` of a command that cannot start reads the job's end from the controller once
    the head host has no terminal for it: until that report is taken, the host must say "retry"."""
    ws = _worker()
    assert not ws.knows(1)  # its start is on its way: retry
    ws.handle(_start(1))
    failed = ws.handle(StartFailed(1, "no such command"))
    assert ws.knows(1) and ws.telling_end(1)  # ended here, the controller not told yet: retry
    (post,) = ws.handle(BatchReady(tuple(i.seq for i in _of(Report, failed))))
    assert ws.telling_end(1)  # sent, not answered
    ws.handle(ReportsAnswered(post.key, 200))
    assert not ws.telling_end(1)  # now the controller says how it ended
    ws.handle(_start(2))
    started = ws.handle(JobStarted(2, 100, 10.0, journaled=True))
    ws.handle(BatchReady(tuple(i.seq for i in _of(Report, started))))
    assert ws.knows(2) and not ws.telling_end(2)  # a running batch job: retrying changes nothing


def test_an_end_seen_before_the_start_was_reported_is_reported_after_it():
    ws = _worker()
    ws.handle(_start(1))
    assert ws.handle(JobExited(1, END)) == []  # its start is still being reported
    out = ws.handle(JobStarted(1, 100, 10.0, journaled=True))
    assert [type(i) for i in out] == [WriteRecord, Report, Release, Report]
    assert [b["status"] for b in _reports(out)] == ["started", "finished"]
    assert ws.handle(JobExited(1, END)) == []  # seen again before its process was let go: said once


def test_a_batch_the_controller_cannot_take_goes_again_under_the_same_key_until_it_is_taken():
    ws = _worker()
    ws.handle(_start(1), JobStarted(1, 100, 10.0, journaled=True))
    out = ws.handle(JobExited(1, END))
    (post,) = ws.handle(BatchReady(tuple(i.seq for i in _of(Report, out))))
    for status in (503, 500, 429, 0):  # 0: unreachable
        (again,) = ws.handle(ReportsAnswered(post.key, status))
        assert again == PostReports(post.key, post.reports, again.attempt) and again.attempt > 1
    not_registered = ws.handle(ReportsAnswered(post.key, 404))  # after a takeover: register, then again
    assert not_registered == [Reregister(), PostReports(post.key, post.reports, 6)]
    assert ws.handle(ReportsAnswered(post.key, 200)) == [Forget(1)]
    assert ws.handle(ReportsAnswered(post.key, 200)) == []  # answered once only


def test_a_batch_refused_for_good_is_not_sent_again():
    ws = _worker()
    ws.handle(_start(1), JobStarted(1, 100, 10.0, journaled=True))
    out = ws.handle(JobExited(1, END))
    (post,) = ws.handle(BatchReady(tuple(i.seq for i in _of(Report, out))))
    assert ws.handle(ReportsAnswered(post.key, 400)) == [Forget(1)]


def test_batches_have_keys_of_their_own():
    ws = _worker()
    a = ws.handle(_start(1), JobStarted(1, 100, 10.0, journaled=True))
    (first,) = ws.handle(BatchReady(tuple(i.seq for i in _of(Report, a))))
    b = ws.handle(_start(2), JobStarted(2, 101, 10.0, journaled=True))
    (second,) = ws.handle(BatchReady(tuple(i.seq for i in _of(Report, b))))
    assert first.key != second.key and first.key.startswith("n0.")


def test_gpus_go_lowest_free_first_per_task_here_and_a_short_host_refuses_the_start():
    ws = _worker("0", "1", "2", "3", "10")
    (a,) = ws.handle(_start(1, requests={"xce.io/gpu": 1}, tasks=3, placement=[("h1", 2), ("h2", 1)]))
    assert a.gpus == ("0", "1") and not a.secondary
    (b,) = ws.handle(_start(2, requests={"xce.io/gpu": 1}, tasks=2, placement=[("h0", 1), ("h1", 1)]))
    assert b.gpus == ("2",) and b.secondary
    refused = ws.handle(_start(3, requests={"xce.io/gpu": 3}))
    assert not _of(Spawn, refused)
    (body,) = _reports(refused)
    assert body["status"] == "start_failed" and "3 GPU(s)" in body["reason"] and "only 2 of 5" in body["reason"]
    ws.handle(JobStarted(1, 100, 10.0, journaled=True), JobExited(1, END))
    (c,) = ws.handle(_start(4, requests={"xce.io/gpu": 3}))
    assert c.gpus == ("0", "1", "3")  # numerically: 10 after 3


def test_the_end_of_a_run_discarded_for_a_newer_one_is_not_the_newer_ones_end():
    """An old run's leader, killed, can be reaped just as the new run's start discards it: its end,
    which names its run, must not end the new run (CI: RUN -> EXIT "job 1 must not run on H")."""
    ws = _worker()
    ws.handle(_start(1, run=5), JobStarted(1, 100, 10.0, journaled=True))
    ws.handle(_start(1, run=6))
    late = ws.handle(JobExited(1, dict(END, reason="job 1 must not run on h1"), run=5))
    assert not [i for i in late if isinstance(i, Report)] and ws.runs() == {"1": 6}
    ws.handle(JobStarted(1, 101, 11.0, journaled=True))
    ended = [i.body for i in ws.handle(JobExited(1, END, run=6)) if isinstance(i, Report)]
    assert [(b["status"], b["run"]) for b in ended] == [("finished", 6)]


def test_a_registrations_leftovers_are_the_runs_it_named_not_a_newer_one():
    ws = _worker()
    ws.handle(_start(1, run=5), JobStarted(1, 100, 10.0, journaled=True))
    ws.handle(_start(1, run=6), JobStarted(1, 101, 11.0, journaled=True))  # the registration named run 5
    assert not [i for i in ws.handle(Leftovers((1,), {1: 5})) if isinstance(i, Discard)]
    assert ws.runs() == {"1": 6}
    assert [i.jobid for i in ws.handle(Leftovers((1,), {1: 6})) if isinstance(i, Discard)] == [1]


def test_a_start_waits_for_devices_a_job_being_killed_here_still_holds():
    """The controller frees a parallel job's devices when it ends on its head host, and its kill
    reaches the other hosts first; a start that comes meanwhile waits for them, not fails."""
    ws = _worker("0", "1", "2", "3")
    (a,) = ws.handle(_start(1, run=5, host_requests={"xce.io/gpu": 4}, tasks=2, placement=[("h0", 1), ("h1", 1)]))
    assert a.gpus == ("0", "1", "2", "3") and a.secondary
    ws.handle(ActionArrived(KillJob(jobid=1, run=5, reason="job 1 ended on h0")))
    assert ws.handle(_start(2, run=7, host_requests={"xce.io/gpu": 4}, tasks=1)) == []  # waits: no start, no refusal
    assert ws.starting(2) and ws.knows(2) and ws.runs() == {"1": 5, "2": 7}
    out = ws.handle(JobExited(1, END))
    spawned = [i for i in out if isinstance(i, Spawn)]
    assert [(i.job.jobid, i.gpus) for i in spawned] == [(2, ("0", "1", "2", "3"))]
    assert not ws.parked


def test_a_start_short_of_devices_nobody_is_giving_back_fails_and_a_killed_waiting_start_never_starts():
    ws = _worker("0", "1")
    ws.handle(_start(1, run=5, requests={"xce.io/gpu": 2}))
    refused = ws.handle(_start(2, run=6, requests={"xce.io/gpu": 1}))  # job 1 is not ending: no wait
    assert [i.body["status"] for i in refused if isinstance(i, Report)] == ["start_failed"]
    ws.handle(ActionArrived(KillJob(jobid=1, run=5)))
    assert ws.handle(_start(3, run=8, requests={"xce.io/gpu": 2})) == []
    out = ws.handle(ActionArrived(KillJob(jobid=3, run=8, reason="killed by ann")))
    assert [(i.body["status"], i.body["run"]) for i in out if isinstance(i, Report)] == [("start_failed", 8)]
    assert not any(isinstance(i, Spawn) for i in ws.handle(JobExited(1, END)))  # job 3 never starts
    assert not ws.parked and ws.knows(3)


def test_gpus_per_host_are_given_once_on_each_host_of_the_job_whatever_its_tasks_there():
    ws = _worker("0", "1", "2")
    (a,) = ws.handle(_start(1, host_requests={"xce.io/gpu": 1}, tasks=8, placement=[("h1", 8)]))
    assert a.gpus == ("0",)
    (b,) = ws.handle(_start(2, host_requests={"xce.io/gpu": 2}, tasks=4, placement=[("h0", 2), ("h1", 2)]))
    assert b.gpus == ("1", "2") and b.secondary


def test_a_restarted_worker_takes_back_its_jobs_that_run_or_left_their_status():
    ws = _worker("0", "1")
    now = 1000.0
    found = (Found(1, alive=True, exited=False, limits={}, gpus=("0",), started=900.0),
             Found(2, alive=False, exited=True, limits={}, gpus=(), started=900.0),
             Found(3, alive=False, exited=False, limits={}, gpus=("1",), started=900.0))
    assert ws.handle(Restarted(found, now)) == [Adopt(1), Adopt(2), Forget(3)]
    assert ws.handle(_start(1)) == []  # its start delivered again
    (spawn,) = ws.handle(_start(4, requests={"xce.io/gpu": 1}))
    assert spawn.gpus == ("1",)  # device 0 is the adopted job's
    out = ws.handle(JobExited(2, {"exit_code": 3, "signal": None, "reason": "exit code 3"}))
    assert _reports(out) == [{"jobid": 2, "status": "finished", "exit_code": 3, "signal": None,
                              "reason": "exit code 3"}]


def test_an_adopted_job_past_its_warning_time_is_not_warned_again_and_still_ends_at_its_limit():
    ws = _worker()
    limits = {RUN_LIMIT_KEY: 100, "xce.io/warn-signal": 10, "xce.io/warn-before-s": 10, "xce.io/warn-batch": 0}
    ws.handle(Restarted((Found(1, alive=True, exited=False, limits=limits, gpus=(), started=1000.0),), 1095.0))
    assert ws.handle(Tick(1096.0)) == []
    (end,) = ws.handle(Tick(1100.0))
    assert isinstance(end, Terminate) and end.code == RUNLIMIT


def test_a_run_limit_warns_once_before_and_ends_the_job_once_at_the_limit():
    ws = _worker()
    ws.handle(_start(1, run_limit=60, options={"warn_signal": "SIGUSR1", "warn_time": 10}))
    assert ws.handle(Tick(2000.0)) == []  # still starting: its limit counts from its start
    ws.handle(JobStarted(1, 100, 1000.0, journaled=True))
    assert ws.handle(Tick(1049.0)) == []
    assert ws.handle(Tick(1050.0)) == [SignalProcs(1, signal.SIGUSR1, "steps")]
    assert ws.handle(Tick(1059.0)) == []
    (end,) = ws.handle(Tick(1060.0))
    assert end == Terminate(1, 10.0, "killed: run limit 0:01:00 reached (TERM_RUNLIMIT)", RUNLIMIT)
    assert ws.handle(Tick(1070.0)) == []


def test_a_changed_run_limit_is_journaled_and_counts_from_the_start():
    ws = _worker()
    ws.handle(_start(1), JobStarted(1, 100, 1000.0, journaled=True))
    assert ws.handle(Tick(5000.0)) == []
    out = ws.handle(ActionArrived(SetRunLimit(jobid=1, run_limit=30)))
    assert out == [SetLimits(1, {RUN_LIMIT_KEY: 30}), WriteRecord(1)]
    assert _of(Terminate, ws.handle(Tick(5000.0)))


def test_a_killed_job_is_not_ended_again_by_its_run_limit():
    ws = _worker()
    ws.handle(_start(1, run_limit=5), JobStarted(1, 100, 1000.0, journaled=True))
    assert ws.handle(ActionArrived(KillJob(jobid=1, grace_s=3.0))) == [Terminate(1, 3.0, "killed")]
    assert ws.handle(Tick(1010.0)) == []


def test_a_journal_that_cannot_be_written_closes_the_host_keeps_its_jobs_and_reopens_it_when_it_can():
    ws = _worker()
    ws.handle(_start(1), JobStarted(1, 100, 1000.0, journaled=True))
    assert ws.handle(JournalFailed("disk full")) == [CloseHost("disk full")]
    assert ws.handle(JournalFailed("disk full")) == []  # said once
    assert ws.handle(Tick(1001.0)) == [RetryJournal()]  # and tried again every tick, no job touched
    assert ws.handle(_start(1)) == []  # the running job is still known: not started twice
    out = ws.handle(JobExited(1, END))
    assert _reports(out)[0]["status"] == "finished"  # its end still reported
    assert ws.handle(JournalWritable()) == [OpenHost()]
    assert ws.handle(Tick(1002.0)) == []
    assert ws.handle(JournalWritable()) == []


def test_an_action_that_does_not_decode_is_refused_loudly(tmp_path, caplog):
    a = Agent("http://127.0.0.1:9", "t", name="h1", job_state=tmp_path / "jobs", run_as_self=True)
    with caplog.at_level(logging.ERROR, logger="xce.worker"):
        a.handle({"id": 7, "kind": "explode", "jobid": 1})
        a.handle({"id": 8, "kind": "kill"})
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 2 and "action 7 refused: unknown action kind 'explode'" in errors[0]
    assert "missing field 'jobid'" in errors[1]


def test_a_live_workers_stimuli_replay_to_the_same_instructions(tmp_path):
    turns: list[tuple] = []
    a = Agent("http://127.0.0.1:9", "t", name="h1", job_state=tmp_path / "jobs", run_as_self=True,
              record=lambda ev, ins: turns.append((ev, ins)))
    job = {"jobid": 1, "user": "x", "command": ["true"], "cwd": str(tmp_path), "placement": [["h1", 1]], "run": 9}
    try:
        a.handle({"id": 1, "kind": "start", "job": job})
        a.handle({"id": 2, "kind": "start", "job": job})  # delivered again
        a.handle({"id": 3, "kind": "start", "job": dict(job, jobid=2, command=["sleep", "30"])})
        a.handle({"id": 4, "kind": "kill", "jobid": 2, "grace_s": 1})
        deadline = time.monotonic() + 10
        while a.jobs:
            assert time.monotonic() < deadline, "the jobs did not end"
            a._reap()
            time.sleep(0.02)
        seqs = []
        while not a.outbox.empty():
            seqs.append(a.outbox.get_nowait()[3].seq)
        (post,) = a._feed(BatchReady(tuple(seqs)))
        said = [(r["jobid"], r["status"]) for r in post.reports]
        assert said[:2] == [(1, "started"), (2, "started")] and sorted(said[2:]) == [(1, "finished"), (2, "finished")]
        a._feed(ReportsAnswered(post.key, 503), ReportsAnswered(post.key, 200))
    finally:
        for jp in list(a.jobs.values()):
            jp.kill_now("test over")
    assert read_journal(tmp_path / "jobs") == {}  # their records forgotten once their ends were taken
    recording = tmp_path / "stimuli.jsonl"
    recording.write_text("".join(stimuli.dumps(ev) + "\n" for ev, _ in turns))
    assert stimuli.replay(recording.read_text().splitlines()) == [ins for _, ins in turns]
    assert sum(isinstance(i, Spawn) for _, ins in turns for i in ins) == 2
