"""The rules the Slurm front-ends share, as tables: getopt's reading of command lines (and its
messages, which users and clients see), XCE's states and end codes as Slurm's words, Slurm's time
and host-list spellings."""

from __future__ import annotations

import pytest

from xce import hostlist
from xce.compat.slurm import _format as fmt, _states as states
from xce.compat.slurm._getopt import NONE, OPTIONAL, REQUIRED, UsageError, parse

LONGS = {"job-name": REQUIRED, "job-array": REQUIRED, "parsable": NONE, "ntasks": REQUIRED, "nodes": REQUIRED,
         "noheader": NONE, "user": REQUIRED, "exclusive": OPTIONAL}
SHORTS = {"J": "job-name", "n": "ntasks", "N": "nodes", "h": "noheader", "u": "user"}


@pytest.mark.parametrize("argv, opts, operands", [
    (["--job-name=a b", "job.sh", "-n", "3"], [("job-name", "a b")], ["job.sh", "-n", "3"]),
    (["--job-name", "x", "--parsable", "s.sh"], [("job-name", "x"), ("parsable", None)], ["s.sh"]),
    (["--parsab", "--ntasks=2"], [("parsable", None), ("ntasks", "2")], []),  # unambiguous prefixes
    (["-n4", "-Jname"], [("ntasks", "4"), ("job-name", "name")], []),
    (["-hu", "ann"], [("noheader", None), ("user", "ann")], []),  # bundled letters, then a value
    (["--exclusive", "--exclusive=user"], [("exclusive", None), ("exclusive", "user")], []),
    (["--", "-n", "1"], [], ["-n", "1"]),
])
def test_command_lines_are_read_as_getopt_reads_them(argv, opts, operands):
    assert parse(argv, LONGS, SHORTS, stop_at_operand=True) == (opts, operands)


def test_without_posix_order_options_may_follow_operands():
    assert parse(["12", "-h", "13"], LONGS, SHORTS) == ([("noheader", None)], ["12", "13"])


@pytest.mark.parametrize("argv, message", [
    (["--bogus"], "unrecognized option '--bogus'"),
    (["--job"], "option '--job' is ambiguous; possibilities: '--job-name' '--job-array'"),
    (["-z"], "invalid option -- 'z'"),
    (["--job-name"], "option '--job-name' requires an argument"),
    (["-n"], "option requires an argument -- 'n'"),
    (["--parsable=yes"], "option '--parsable' doesn't allow an argument"),
])
def test_refusals_say_what_getopt_says(argv, message):
    with pytest.raises(UsageError) as err:
        parse(argv, LONGS, SHORTS)
    assert str(err.value) == message


@pytest.mark.parametrize("state, end, word, code", [
    ("PEND", None, "PENDING", "PD"), ("RUN", None, "RUNNING", "R"), ("UNKWN", None, "RUNNING", "R"),
    ("USUSP", None, "SUSPENDED", "S"), ("SSUSP", None, "SUSPENDED", "S"), ("DONE", "DONE", "COMPLETED", "CD"),
    ("EXIT", "EXIT", "FAILED", "F"), ("EXIT", "KILLED", "CANCELLED", "CA"), ("EXIT", "RUNLIMIT", "TIMEOUT", "TO"),
    ("EXIT", "MEMLIMIT", "OUT_OF_MEMORY", "OOM"), ("EXIT", "NODE_FAIL", "NODE_FAIL", "NF"),
    ("EXIT", "PREEMPTED", "PREEMPTED", "PR"), ("EXIT", "NOT_STARTED", "FAILED", "F"), ("EXIT", None, "FAILED", "F"),
])
def test_xce_states_and_end_codes_are_slurms_words(state, end, word, code):
    job = {"state": state, "end": {"code": end, "by": None} if end else None}
    assert (states.word(job), states.code(job)) == (word, code)


@pytest.mark.parametrize("exit_code, signal, text", [
    (0, None, "0:0"), (3, None, "3:0"), (None, "SIGTERM", "0:15"), (143, "SIGTERM", "0:15"), (None, "KILL", "0:9"),
    (None, None, "0:0"),
])
def test_exit_codes_are_code_colon_signal(exit_code, signal, text):
    assert states.exit_code({"exit_code": exit_code, "exit_signal": signal}) == text


@pytest.mark.parametrize("category, held_by, text, reason", [
    (None, None, "", "None"), ("held", "ann", "", "JobHeldUser"), ("held", "root", "", "JobHeldAdmin"),
    ("depend", None, "waiting for 12 to end DONE (afterok:12)", "Dependency"),
    ("depend", None, "dependency can never be met: afterok: job 12 ended EXIT", "DependencyNeverSatisfied"),
    ("begin", None, "", "BeginTime"), ("limit", None, "", "JobArrayTaskLimit"),
    ("slots", None, "needs slots 4, short by slots 2", "Resources"), ("span", None, "", "Resources"),
    ("fcfs", None, "waiting behind job 3, the head of queue normal (strict FCFS)", "Priority"),
    ("select", None, "no host is available", "ReqNodeNotAvail"), ("cluster", None, "", "BadConstraints"),
    ("queue", None, "queue closed", "PartitionInactive"), ("queue", None, "queue inactive", "PartitionDown"),
    ("queue", None, "queue limit: 4 of 4 running", "QOSGrpJobsLimit"), ("queue", None, "", "PartitionInactive"),
    ("user", None, "", "QOSMaxJobsPerUserLimit"), ("a-step-added-later", None, "", "Resources"),
])
def test_pending_reasons(category, held_by, text, reason):
    assert states.pend_reason({"state": "PEND", "user": "ann", "pend_category": category, "held_by": held_by,
                               "pend_reasons": [{"step": category, "text": text}] if text else []}) == reason


@pytest.mark.parametrize("text, wanted", [
    ("PD,R", {"PENDING", "RUNNING"}), ("pending,CD", {"PENDING", "COMPLETED"}), ("all", None),
    ("OOM", {"OUT_OF_MEMORY"}),
])
def test_state_lists_take_words_and_codes(text, wanted):
    assert states.parse_states(text) == (wanted, None)


@pytest.mark.parametrize("seconds, squeue, sacct", [
    (0, "0:00", "00:00:00"), (65, "1:05", "00:01:05"), (3661, "1:01:01", "01:01:01"),
    (90061, "1-01:01:01", "1-01:01:01"),
])
def test_durations(seconds, squeue, sacct):
    assert (fmt.duration(seconds), fmt.elapsed(seconds)) == (squeue, sacct)


@pytest.mark.parametrize("value, width, text", [("COMPLETED", 10, " COMPLETED"), ("averylongname", 10, "averylong+"),
                                                ("1.batch", -12, "1.batch     ")])
def test_sacct_cells_justify_and_mark_what_they_cut(value, width, text):
    assert fmt.sacct_cell(value, width) == text


@pytest.mark.parametrize("names, text", [
    (["n1", "n2", "n3", "n5"], "n[1-3,5]"), (["a", "n1"], "a,n1"), (["n01", "n02"], "n[01-02]"),
    (["vm-w1"], "vm-w1"),
])
def test_host_lists_compress_and_expand_back(names, text):
    assert hostlist.compress(names) == text
    assert hostlist.expand(text) == names


def test_dates_as_sacct_reads_them():
    import time

    now = time.mktime((2026, 3, 4, 15, 30, 0, 0, 0, -1))
    assert fmt.parse_date("now", now) == now
    assert fmt.parse_date("now-2hours", now) == now - 7200
    assert fmt.parse_date("midnight", now) == time.mktime((2026, 3, 4, 0, 0, 0, 0, 0, -1))
    assert fmt.parse_date("2026-03-01T10:00", now) == time.mktime((2026, 3, 1, 10, 0, 0, 0, 0, -1))
    assert fmt.parse_date("03/01", now) == time.mktime((2026, 3, 1, 0, 0, 0, 0, 0, -1))
    assert fmt.parse_date("yesterdayish", now) is None
