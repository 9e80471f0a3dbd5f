"""Job mail without I/O: what a job asks for, which move mails what, and the words (issue 49)."""

from __future__ import annotations

import json

import pytest

from xce.mail import messages
from xce.mail.asked import ALL, LSF, SLURM, Asked, asked, parse_mail_type

S = 1_000_000_000
T0 = 1_800_000_000 * S


def job(state="DONE", **kw):
    row = {"id": 123, "name": "foo", "user": "ann", "queue": "normal", "state": state, "submit_time": T0,
           "start_time": T0 + 3 * S, "end_time": T0 + 8 * S, "exit_code": 0, "end_code": "DONE",
           "reason": "finished", "cwd": "/home/ann/run", "command": json.dumps(["./run.sh", "x"]),
           "stdout": "slurm-%j.out", "stderr": None, "placement": json.dumps([["h1", 2], ["h2", 2]]),
           "head_host": "h1", "array_id": None, "array_index": None}
    return {**row, **kw}


def slurm(types, to=None):
    return Asked(SLURM, parse_mail_type(types), to)


def subjects(j, verb, types, family=SLURM, **kw):
    a = slurm(types) if family == SLURM else Asked(LSF, frozenset(types), None)
    return [m.subject for m in messages.of_move(j, verb, j["state"], a, cluster="c1", domain=None, **kw)]


def test_mail_type_is_read_as_slurm_reads_it():
    assert parse_mail_type("begin,End") == {"BEGIN", "END"}
    assert parse_mail_type("ALL") == set(ALL)
    assert parse_mail_type("END,NONE,FAIL") == {"FAIL"}
    assert parse_mail_type("NONE") == set()
    with pytest.raises(ValueError, match="--mail-type=END,SOMETIMES invalid"):
        parse_mail_type("END,SOMETIMES")


def test_what_the_recorded_options_ask():
    assert asked({"mail_type": "END", "mail_user": "u@example.org"}) == Asked(SLURM, frozenset({"END"}), "u@example.org")
    assert asked({"mail_begin": "yes", "mail_end": "yes", "mail_user": "a@b"}) == \
        Asked(LSF, frozenset({"BEGIN", "END"}), "a@b")
    assert asked({"mail_user": "u@example.org"}) is None  # an address alone asks for nothing
    assert asked({"mail_type": "NONE"}) is None
    assert asked({"wckey": "w"}) is None and asked(None) is None


def test_slurm_subjects_have_slurmctld_shape():
    assert subjects(job(), "finish", "END") == ["Slurm Job_id=123 Name=foo Ended, Run time 00:00:05, COMPLETED, ExitCode 0"]
    began = job("RUN", end_time=None, exit_code=None, end_code=None)
    assert subjects(began, "dispatch", "BEGIN,END") == ["Slurm Job_id=123 Name=foo Began, Queued time 00:00:03"]
    failed = job("EXIT", exit_code=3, end_code="EXIT")
    assert subjects(failed, "fail", "END") == ["Slurm Job_id=123 Name=foo Ended, Run time 00:00:05, FAILED, ExitCode 3"]
    # END and FAIL: a failure is the one Failed mail, as job_completion_logger sends it
    assert subjects(failed, "fail", "END,FAIL") == [
        "Slurm Job_id=123 Name=foo Failed, Run time 00:00:05, FAILED, ExitCode 3"]
    timeout = job("EXIT", exit_code=None, end_code="RUNLIMIT")
    assert subjects(timeout, "fail", "TIME_LIMIT,FAIL") == [
        "Slurm Job_id=123 Name=foo Reached time limit, Run time 00:00:05",
        "Slurm Job_id=123 Name=foo Failed, Run time 00:00:05, TIMEOUT, ExitCode 0"]
    cancelled = job("EXIT", start_time=None, end_code="KILLED", exit_code=None)
    assert subjects(cancelled, "kill", "ALL") == ["Slurm Job_id=123 Name=foo Ended, Run time 00:00:00, CANCELLED, ExitCode 0"]
    requeued = job("PEND", end_time=None)
    assert subjects(requeued, "rerun", "REQUEUE") == ["Slurm Job_id=123 Name=foo Requeued, Run time 00:00:00"]


def test_fail_mails_only_on_failure():
    assert subjects(job(), "finish", "FAIL") == []
    assert subjects(job("EXIT", exit_code=1, end_code="EXIT"), "fail", "FAIL") != []
    assert subjects(job("EXIT", end_code="KILLED"), "kill", "FAIL") == []  # CANCELLED is an END, not a FAIL
    assert subjects(job("RUN"), "dispatch", "END,FAIL") == []


def test_arrays_mail_per_task_or_once_for_the_whole_array():
    el = job(id=12, array_id=10, array_index=2)
    assert subjects(el, "finish", "END,ARRAY_TASKS") == [
        "Slurm Array Task Job_id=10_2 (12) Name=foo Ended, Run time 00:00:05, COMPLETED, ExitCode 0"]
    assert subjects(el, "finish", "END", last=False) == []
    summary = {"states": ["COMPLETED", "FAILED", "COMPLETED"], "exit_codes": [0, 2, 0]}
    assert subjects(el, "finish", "END", summary=summary) == [
        "Slurm Array Summary Job_id=10_* (10) Name=foo Ended, Mixed, ExitCode [0-2]"]
    started = job("RUN", id=12, array_id=10, array_index=2)
    assert subjects(started, "dispatch", "BEGIN") == ["Slurm Array Summary Job_id=10_* (10) Name=foo Began"]
    assert subjects(started, "dispatch", "BEGIN", first=False) == []


def test_lsf_subjects_and_when():
    assert subjects(job("RUN"), "dispatch", {"BEGIN", "END"}, LSF) == ["Job 123: <foo> in cluster <c1> Started"]
    assert subjects(job(), "finish", {"BEGIN", "END"}, LSF) == ["Job 123: <foo> in cluster <c1> Done"]
    failed = job("EXIT", exit_code=1, end_code="EXIT")
    assert subjects(failed, "fail", {"END"}, LSF) == ["Job 123: <foo> in cluster <c1> Exited"]
    assert subjects(failed, "fail", {"FAIL"}, LSF) == ["Job 123: <foo> in cluster <c1> Exited"]  # -Ne
    assert subjects(job(), "finish", {"FAIL"}, LSF) == []
    assert subjects(job("PEND"), "rerun", {"BEGIN", "END"}, LSF) == []
    assert subjects(job(id=12, array_id=10, array_index=2), "finish", {"END"}, LSF) == [
        "Job 10[2]: <foo> in cluster <c1> Done"]


def test_recipient_is_the_address_asked_else_the_user_at_the_domain():
    assert messages.recipient(slurm("END", "u@example.org"), "ann", "site.org") == "u@example.org"
    assert messages.recipient(slurm("END"), "ann", "site.org") == "ann@site.org"
    assert messages.recipient(slurm("END"), "ann", None) == "ann"
    [m] = messages.of_move(job(), "finish", "DONE", slurm("END"), cluster="c1", domain="site.org")
    assert (m.to, m.jobid) == ("ann@site.org", 123)


def test_body_says_what_happened_and_where_to_look():
    [m] = messages.of_move(job("EXIT", exit_code=3, end_code="EXIT", reason="exited with code 3"), "fail", "EXIT",
                           slurm("END"), cluster="c1", domain=None)
    for text in ("123 (foo)", "FAILED, exit code 3", "exited with code 3", "h1 h2", "/home/ann/run/slurm-123.out",
                 "./run.sh x", "Run time:  00:00:05", "scontrol show job 123", "sacct -j 123"):
        assert text in m.body, text
    [m] = messages.of_move(job(), "finish", "DONE", Asked(LSF, frozenset({"END"}), None), cluster="c1", domain=None)
    assert "Successfully completed." in m.body and "bjobs -l 123" in m.body
