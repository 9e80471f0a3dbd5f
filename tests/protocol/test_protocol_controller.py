"""What a real controller queues for its workers, read as a worker reads it: every action of a job's
life decodes into its class, and a start's output files are named as LSF and Slurm name them."""

from __future__ import annotations

import uuid

import pytest

from xce.controller.api import attach
from xce.controller.auth.tokens import Principal
from xce.controller.hosts import fleet
from xce.controller.jobs import control, submission
from xce.controller.sched import decisions
from xce.controller.service import Controller, Settings
from xce.controller.web.models import ActRequest, DecisionEnvelope, ModifyRequest, RegisterRequest, SubmitRequest
from xce.protocol.actions import AttachKey, KillJob, ResumeJob, SetRunLimit, SignalJob, StartJob, SuspendJob, decode

ANN = Principal("user", "ann")
HEAD, OTHER = "node1.example.org", "node2"


@pytest.fixture
def ctl(tmp_path):
    c = Controller(Settings(state_dir=tmp_path / "state"))
    c.open()
    for name in (HEAD, OTHER):
        fleet.register(c, RegisterRequest(name=name, resources={"slots": 8}, load={},
                                          task_address="127.0.0.1:7000" if name == HEAD else None))
    yield c
    c.close()


def dispatch(ctl, jobid, placement):
    (res,) = decisions.apply(ctl, [DecisionEnvelope(id=uuid.uuid4().hex, ts=1, decision={
        "op": "DISPATCH", "seq": 1, "jobid": jobid, "placement": placement})])
    assert res["status"] == "applied", res


def worker_reads(ctl, host):
    """The host's actions not acknowledged yet, decoded as its worker decodes them."""
    return [decode(a) for a in fleet.fetch_actions(ctl, host, 0, 1000)["actions"]]


def test_every_action_of_a_parallel_jobs_life_reaches_each_of_its_hosts_as_its_class(ctl):
    jobid = submission.submit(ctl, "ann", SubmitRequest(command=["sleep", "100"], tasks=3, env={"X": "1"},
                                                        limits={"pids": 64}, run_limit=300))["jobid"]
    dispatch(ctl, jobid, [[HEAD, 2], [OTHER, 1]])
    for host in (HEAD, OTHER):  # fetched: a start never fetched would be taken back, not killed
        worker_reads(ctl, host)
    control.suspend(ctl, ANN, jobid)
    control.resume(ctl, ANN, jobid)
    control.act(ctl, ANN, ActRequest(action="kill", jobs=[str(jobid)], signal="USR1"))
    control.modify(ctl, ANN, jobid, ModifyRequest(run_limit=600))
    control.kill(ctl, ANN, jobid)

    head, other = worker_reads(ctl, HEAD), worker_reads(ctl, OTHER)
    assert [type(a) for a in head] == [StartJob, SuspendJob, ResumeJob, SignalJob, SetRunLimit, KillJob]
    assert [type(a) for a in other] == [StartJob, SuspendJob, ResumeJob, SignalJob, KillJob]  # its limit: the head's
    assert {a.jobid for a in head + other} == {jobid}
    start = head[0]
    assert start == other[0]  # the same start everywhere: each host finds its own part in the placement
    assert (start.user, start.command, start.env, start.limits, start.run_limit) == \
        ("ann", ["sleep", "100"], {"X": "1"}, {"pids": 64}, 300)
    assert start.placement == [(HEAD, 2), (OTHER, 1)] and start.tasks == 3 and start.run == ctl.job(jobid)["start_time"]
    assert start.task_servers == {HEAD: "127.0.0.1:7000"} and len(start.launch_key) == 32
    assert (head[1].signal, head[2].signal, head[3].signal) == ("SIGSTOP", "SIGCONT", "SIGUSR1")
    assert head[4].run_limit == 600
    assert head[5] == KillJob(jobid=jobid, run=start.run, reason="killed by ann", signal="SIGTERM", grace_s=10)
    assert {a.run for a in head + other} == {start.run}  # every action names the run it is for


def test_an_attach_key_goes_to_the_head_host_for_this_run_only(ctl):
    jobid = submission.submit(ctl, "ann", SubmitRequest(command=["bash"], interactive=True))["jobid"]
    dispatch(ctl, jobid, [[HEAD, 1]])
    granted = attach.grant(ctl, ANN, jobid)
    start, key = worker_reads(ctl, HEAD)
    assert key == AttachKey(jobid=jobid, key=granted["key"], run=start.run) and start.options["interactive"]


def test_a_start_names_an_array_elements_files_as_lsf_and_slurm_do(ctl):
    """%J %I are LSF's (the array's id, the index), %j %A %a Slurm's (the element's own id, the array's,
    the index), %N the first host's short name, %x the name; all expanded once, so %% is one %."""
    out = submission.submit(ctl, "ann", SubmitRequest(
        command=["./task.sh"], name="sweep", array="1-3", stdout="lsf.%J.%I.out",
        stderr="/logs/%x-%A_%a-%j.%N.%%.err"))
    element = out["jobids"][1]
    array = ctl.job(element)["array_id"]
    dispatch(ctl, element, [[HEAD, 1]])
    (start,) = worker_reads(ctl, HEAD)
    assert (start.array_id, start.array_index) == (array, 2)
    assert start.stdout == f"lsf.{array}.2.out"
    assert start.stderr == f"/logs/sweep-{array}_2-{element}.node1.%.err"


def test_a_start_names_a_plain_jobs_files_as_lsf_and_slurm_do(ctl):
    jobid = submission.submit(ctl, "ann", SubmitRequest(command=["./run.sh"], stdout="o.%J.%I", stderr="e.%A_%a.%x"))[
        "jobid"]
    dispatch(ctl, jobid, [[OTHER, 1]])
    (start,) = worker_reads(ctl, OTHER)
    assert (start.stdout, start.stderr) == (f"o.{jobid}.0", f"e.{jobid}_4294967294.run.sh")
