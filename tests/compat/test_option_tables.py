"""Every option of sbatch's and bsub's tables, written on the command line and as a directive line
of the script: the same text is accepted with the same job, or refused with the same message.

Generated from the tables themselves (:mod:`xce.compat.slurm.options`, :mod:`xce.compat.lsf.options`),
so an option added to a table is tested here. The bodies are built by the programs' own functions
(``sbatch.build``, ``bsub.build``: everything but the request to the controller), and the directive
line is also read by ``xce submit`` (``job_request``)."""

from __future__ import annotations

import os

import pytest

from xce.cli.jobscript import Refused
from xce.cli.submit import SUBMIT, job_request
from xce.compat.lsf import bsub
from xce.compat.lsf._args import Failed, Usage
from xce.compat.lsf.options import BSUB_OPTIONS
from xce.compat.slurm import sbatch
from xce.compat.slurm._getopt import NONE, OPTIONAL, REQUIRED, UsageError, parse
from xce.compat.slurm.options import KEEP, OWN, REFUSE, SBATCH_OPTIONS, getopt_table

ENV = {"HOME": "/home/ann", "PATH": "/usr/bin", "USER": "ann"}

#: A value each option takes (the rest take "1"), and options it needs beside it.
SLURM_VALUES = {
    "account": "cfd", "array": "1-3%2", "begin": "2031-01-02T03:04", "chdir": "/scratch", "constraint": "a&[b|c]",
    "dependency": "afterok:12", "error": "e.%j", "exclude": "n[3-4]", "export": "NONE", "gid": str(os.getgid()),
    "gpus": "a100:2", "gpus-per-node": "2", "gpus-per-task": "1", "gres": "gpu:v100:2", "job-name": "fit",
    "mail-type": "END", "mem": "1G", "mem-per-cpu": "1G", "mem-per-gpu": "2G", "nodelist": "n[1-2]", "nodes": "2",
    "ntasks": "4", "ntasks-per-node": "2", "open-mode": "append", "output": "o.%j", "partition": "short,long",
    "signal": "B:USR1@90", "time": "1-02:00", "uid": str(os.getuid()), "get-user-env": "L", "exclusive": "user",
    "nice": "5", "cpus-per-gpu": "1",
}
SLURM_WITH = {"mem-per-gpu": ["--gpus=1"], "cpus-per-gpu": ["--gpus-per-task=1"], "ntasks-per-gpu": ["--gpus=1"]}
LSF_VALUES = {
    "-b": "12:30", "-cwd": "/scratch", "-e": "e.%J", "-eo": "e.%J", "-env": "all, ~PATH", "-gpu": "num=2:gmodel=A100",
    "-J": "fit", "-M": "2GB", "-m": "n1 n2", "-n": "2,4", "-nnodes": "2", "-o": "o.%J", "-oo": "o.%J",
    "-q": "short", "-R": "select[mem>1G] rusage[mem=100]", "-W": "1:30", "-w": "done(12)", "-wa": "USR1",
    "-wt": "5", "-sp": "10", "-We": "10",
}
LSF_WITH = {"-wa": ["-wt", "5"], "-wt": ["-wa", "USR1"]}


def _forms(option) -> list[list[str]]:
    """The ways getopt lets a user write this option (sbatch)."""
    value = SLURM_VALUES.get(option.name, "1")
    longs, _ = getopt_table()
    prefix = next(option.name[:k] for k in range(1, len(option.name) + 1)
                  if option.name == option.name[:k] or
                  [n for n in longs if n.startswith(option.name[:k])] == [option.name])
    if option.takes == NONE:
        forms = [[f"--{option.name}"], [f"--{prefix}"]]
        return forms + ([[f"-{option.short}"]] if option.short else [])
    if option.takes == OPTIONAL:
        return [[f"--{option.name}"], [f"--{option.name}={value}"], [f"--{prefix}={value}"]]
    forms = [[f"--{option.name}={value}"], [f"--{option.name}", value], [f"--{prefix}={value}"]]
    if option.short:
        forms += [[f"-{option.short}{value}"], [f"-{option.short}", value]]
    return forms


def _quote(words: list[str]) -> str:
    import shlex

    return " ".join(shlex.quote(w) for w in words)


def _script(directory, lines: list[str]) -> str:
    directory.mkdir(exist_ok=True)
    path = directory / "job.sh"
    path.write_text("#!/bin/sh\n" + "".join(f"{line}\n" for line in lines) + "echo hello\n")
    return str(path)


def _sbatch(argv: list[str], cwd) -> dict | str:
    """sbatch's body for ``argv``, or the message it refuses it with."""
    try:
        opts, operands = parse(argv, *getopt_table(), stop_at_operand=True)
        body = sbatch.build(opts, operands, environ=ENV, cwd=str(cwd), host="login1", stdin=lambda: b"")
    except (UsageError, Refused) as exc:
        return str(exc)
    body.pop("command"), body.pop("script", None)
    return body


SLURM_CASES = [(o, form) for o in SBATCH_OPTIONS if o.does != OWN for form in _forms(o)]


@pytest.mark.parametrize("option,form", SLURM_CASES, ids=[" ".join(f) for _, f in SLURM_CASES])
def test_sbatch_option_means_the_same_on_the_command_line_and_in_the_script(option, form, tmp_path):
    extra = SLURM_WITH.get(option.name, [])
    plain = _script(tmp_path / "a", [])
    with_line = _script(tmp_path / "b", [f"#SBATCH {_quote([*extra, *form])}"])
    on_line = _sbatch([*extra, *form, plain], tmp_path)
    in_script = _sbatch([with_line], tmp_path)
    if isinstance(on_line, str):
        assert in_script == f"{with_line} line 2: {on_line}", form
        assert option.does == REFUSE or option.name in ("uid", "gid", "exclusive"), on_line
    else:
        assert in_script == on_line
        if option.does == KEEP:  # kept with the job, under its own name
            assert option.how in on_line["recorded"]
    # xce submit reads the same line the same way
    try:
        job_request(SUBMIT.parse([with_line]), environ=ENV, cwd=str(tmp_path), host="login1")
    except Refused as exc:
        assert isinstance(on_line, str) and str(exc) == f"{with_line} line 2: {on_line}"
    else:
        assert not isinstance(on_line, str)


def test_every_sbatch_option_is_declared_once_with_its_kind():
    names = [o.name for o in SBATCH_OPTIONS]
    assert len(names) == len(set(names))
    shorts = [o.short for o in SBATCH_OPTIONS if o.short]
    assert len(shorts) == len(set(shorts))
    assert {o.takes for o in SBATCH_OPTIONS} == {NONE, REQUIRED, OPTIONAL}
    for must in ("get-user-env", "hint", "tmp", "threads-per-core", "no-kill", "uid", "constraint", "gres"):
        assert must in names


def _lsf_forms(option) -> list[list[str]]:
    if not option.takes:
        return [[option.name]]
    value = LSF_VALUES.get(option.name, "1")
    forms = [[option.name, value]]
    attached = option.name + value
    if not any(o.name != option.name and attached.startswith(o.name) and len(o.name) > len(option.name)
               for o in BSUB_OPTIONS):
        forms.append([attached])
    return forms


def _bsub(argv: list[str], cwd) -> dict | str:
    try:
        body, _ = bsub.build(argv, environ=ENV, cwd=str(cwd), host="login1", stdin=None)
    except (Usage, Failed) as exc:
        return str(exc)
    body.pop("command"), body.pop("script", None)
    return body


LSF_CASES = [(o, form) for o in BSUB_OPTIONS if o.does != OWN for form in _lsf_forms(o)]


@pytest.mark.parametrize("option,form", LSF_CASES, ids=[" ".join(f) for _, f in LSF_CASES])
def test_bsub_option_means_the_same_on_the_command_line_and_in_the_script(option, form, tmp_path, monkeypatch):
    monkeypatch.setenv("LSF_UNIT_FOR_LIMITS", "MB")
    extra = LSF_WITH.get(option.name, [])
    plain = _script(tmp_path / "a", [])
    with_line = _script(tmp_path / "b", [f"#BSUB {_quote([*extra, *form])}"])
    on_line = _bsub([*extra, *form, plain], tmp_path)
    in_script = _bsub([with_line], tmp_path)
    if isinstance(on_line, str):
        assert option.does == REFUSE, on_line
        assert on_line.endswith(" is not available on this cluster. Job not submitted.")
        assert in_script == f"{with_line} line 2: {on_line}"
    else:
        assert option.does != REFUSE
        assert in_script == on_line


def test_a_word_that_is_not_an_option_ends_a_bsub_line_as_lsf_reads_it(tmp_path):
    script = _script(tmp_path, ["#BSUB -n 2 cores please -q ignored", "#BSUB -J fit # the name"])
    body = _bsub([script], tmp_path)
    assert (body["tasks"], body.get("queue"), body["name"]) == (2, None, "fit")


def test_begin_times_lsf_refuses_are_refused(tmp_path):
    for when in ("99:99", "24:00", "12:60", "32:10:00", "13:01:10:00"):
        assert _bsub(["-b", when, "true"], tmp_path) == f"{when}: Bad time specification. Job not submitted."


def test_uid_of_another_user_is_refused_alike_for_a_user_who_is_not_root(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "getuid", lambda: 4321)
    plain = _script(tmp_path / "a", [])
    with_line = _script(tmp_path / "b", ["#SBATCH --uid=0"])
    assert _sbatch(["--uid=0", plain], tmp_path) == "--uid only permitted by root user"
    assert _sbatch([with_line], tmp_path) == f"{with_line} line 2: --uid only permitted by root user"
    assert _sbatch(["--uid", "4321", plain], tmp_path)["recorded"] == {"uid": "4321"}


def test_srun_and_salloc_read_sbatchs_job_options_from_the_same_table():
    from xce.compat.slurm import _alloc, salloc, srun
    from xce.compat.slurm.options import SBATCH, SBATCH_ONLY

    for program in (srun, salloc):
        longs, shorts = _alloc.table(program.EXTRA, program.SHORTS)
        opts, command = parse(["-C", "fast", "--gpus=a100:1", "--tmp=1G", "-n2", "hostname"], longs, shorts,
                              stop_at_operand=True)
        assert command == ["hostname"]
        assert _alloc.job_words(opts) == ["--constraint", "fast", "--gpus", "a100:1", "--record", "tmp=1G",
                                          "-n", "2"]
        for name in SBATCH:
            assert name in longs or name in SBATCH_ONLY


@pytest.mark.parametrize("line, mode", [("-I", "-I"), ("-Is", "-Is"), ("-Ip", "-Is")])
def test_an_interactive_bsub_line_makes_the_job_interactive_as_on_the_command_line(tmp_path, line, mode):
    script = _script(tmp_path, [f"#BSUB {line} -J inter"])
    body, interactive = bsub.build([script], environ=ENV, cwd=str(tmp_path), host="login1", stdin=None)
    assert body["interactive"] is True and interactive == mode
    on_line, on_line_mode = bsub.build([line, "-J", "inter", _script(tmp_path / "a", [])], environ=ENV,
                                       cwd=str(tmp_path), host="login1", stdin=None)
    assert on_line["interactive"] is True and (on_line_mode == "-I") == (line == "-I")
    merged: dict = {}
    assert job_request(SUBMIT.parse([script]), environ=ENV, cwd=str(tmp_path), host="login1",
                       merged=merged)["interactive"] is True
    assert bool(merged["pty"]) == (line != "-I")  # xce submit then gives it a raw terminal, as bsub -Is
