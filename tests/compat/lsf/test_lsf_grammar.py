"""The LSF programs' readings that need no cluster: option words, ``-o`` formats, the end codes'
LSF words, and LSF_UNIT_FOR_LIMITS in ``rusage[mem=N]``."""

from __future__ import annotations

import pytest

from xce.cli.jobscript import lsf_resreq
from xce.compat.lsf import _states, _table
from xce.compat.lsf._args import Usage, parse

FLAGS = frozenset({"a", "d", "p", "r", "w", "l", "noheader", "json"})
VALUED = frozenset({"o", "J", "q", "u"})


@pytest.mark.parametrize("argv, opts, rest", [
    (["-a", "12"], {"a": 1}, ["12"]),
    (["-aJ", "sweep*"], {"a": 1, "J": ["sweep*"]}, []),
    (["-pr", "-noheader", "-json"], {"p": 1, "r": 1, "noheader": 1, "json": 1}, []),
    (["-Jname", "-u", "all", "7", "-w"], {"J": ["name"], "u": ["all"], "w": 1}, ["7"]),
    (["-o", "jobid stat", "--", "-5"], {"o": ["jobid stat"]}, ["-5"]),
    (["-q", "a", "-q", "b"], {"q": ["a", "b"]}, []),
])
def test_options_as_lsf_reads_them(argv, opts, rest):
    assert parse(argv, FLAGS, VALUED) == (opts, rest)


@pytest.mark.parametrize("argv, message", [
    (["-z"], "illegal option -- z"), (["-az"], "illegal option -- z"), (["-json2"], "illegal option -- json2"),
    (["-o"], "option requires an argument -- o"), (["-aJ"], "option requires an argument -- J"),
])
def test_options_refused(argv, message):
    with pytest.raises(Usage, match=f"^{message}$"):
        parse(argv, FLAGS, VALUED)


@pytest.mark.parametrize("text, fields, delimiter", [
    ("jobid stat", [("jobid", 7, False), ("stat", 5, False)], None),
    ("id:12 name:-20 cmd", [("jobid", 12, False), ("job_name", 20, True), ("command", 15, False)], None),
    ("JOBID STAT exit_code delimiter='|'", [("jobid", 7, False), ("stat", 5, False), ("exit_code", 9, False)], "|"),
    ('jobid delimiter=","', [("jobid", 7, False)], ","),
    ("jobid delimiter=';'  ", [("jobid", 7, False)], ";"),
])
def test_output_formats(text, fields, delimiter):
    columns, delim = _table.parse_format(text)
    assert [(c.field, c.width, c.right) for c in columns] == fields
    assert delim == delimiter


@pytest.mark.parametrize("text, message", [
    ("jobid bogus", "bogus: Illegal field name in -o"), ("jobid:x", "jobid:x: Illegal field width in -o"),
    ("delimiter='|'", "no field named"),
])
def test_output_formats_refused(text, message):
    with pytest.raises(Usage, match=message):
        _table.parse_format(text)


def _job(state="EXIT", code=None, by=None, exit_code=None, signal=None, held=None, reason=""):
    return {"state": state, "user": "ann", "end": {"code": code, "by": by} if code else None,
            "exit_code": exit_code, "exit_signal": signal, "held_by": held, "reason": reason}


@pytest.mark.parametrize("job, stat, code, reason", [
    (_job("DONE", "DONE", exit_code=0), "DONE", "", ""),
    (_job("EXIT", "EXIT", exit_code=3), "EXIT", "3", ""),
    (_job("EXIT", "RUNLIMIT", signal="SIGKILL"), "EXIT", "137",
     "TERM_RUNLIMIT: job killed after reaching LSF run time limit"),
    (_job("EXIT", "MEMLIMIT", exit_code=137), "EXIT", "137",
     "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit"),
    (_job("EXIT", "KILLED", by="ann", signal="SIGTERM"), "EXIT", "143", "TERM_OWNER: job killed by owner"),
    (_job("EXIT", "KILLED", by="root"), "EXIT", "", "TERM_ADMIN: job killed by root or LSF administrator"),
    (_job("EXIT", "PREEMPTED"), "EXIT", "", "TERM_PREEMPT: job killed after preemption"),
    (_job("EXIT", "NOT_STARTED", reason="no working directory /x"), "EXIT", "127",
     "TERM_CWD_NOTEXIST: current working directory not accessible or does not exist on the execution host"),
    (_job("PEND", held="ann"), "PSUSP", "", ""),
    (_job("PEND"), "PEND", "", ""),
    (_job("USUSP"), "USUSP", "", ""),
])
def test_end_codes_in_lsf_words(job, stat, code, reason):
    assert (_states.stat(job), _states.exit_code(job), _states.exit_reason(job)) == (stat, code, reason)


@pytest.mark.parametrize("unit, text, expected", [
    ("KB", "rusage[mem=4000]", "rusage[mem=4000K]"),
    ("MB", "rusage[mem=4000]", "rusage[mem=4000M]"),
    ("KB", "select[mem>4000] rusage[mem=2G:duration=5]", "select[mem>4000] rusage[mem=2G:duration=5]"),
    ("KB", "rusage[swp=10,mem=1.5]", "rusage[swp=10,mem=1.5K]"),
    ("GB", "rusage[tmem=3, mem=2]", "rusage[tmem=3, mem=2G]"),
])
def test_bare_rusage_memory_is_in_lsf_unit_for_limits(monkeypatch, unit, text, expected):
    monkeypatch.setenv("LSF_UNIT_FOR_LIMITS", unit)
    assert lsf_resreq(text) == expected
