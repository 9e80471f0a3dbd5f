"""``srun`` inside a real job (tasks through ``xce launch`` with Slurm's task variables), outside one
(an allocation of its own), and ``salloc``/``srun --pty`` driven through a real pseudo-terminal."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def batch(slurm, script: str, *args: str) -> str:
    """Run ``script`` as a batch job and return its output once it ended well."""
    r = slurm("sbatch", "--parsable", *args, input=script)
    assert r.code == 0, r.err
    jobid = int(r.out)
    job = slurm.wait_state(str(jobid), ("DONE", "EXIT"))
    out = (slurm.work / f"slurm-{jobid}.out").read_text()
    assert job["state"] == "DONE", out
    return out


def test_srun_inside_a_job_runs_its_tasks_on_every_host(slurm):
    out = batch(slurm, "#!/bin/sh\n#SBATCH -N 2 --ntasks-per-node=1\n"
                "srun -l sh -c 'echo $SLURM_PROCID $SLURM_LOCALID $SLURM_NTASKS $SLURMD_NODENAME'\n")
    rows = sorted(out.splitlines())
    assert [r.split()[:4] for r in rows] == [["0:", "0", "0", "2"], ["1:", "1", "0", "2"]]
    assert len({r.split()[4] for r in rows}) == 2  # one task on each of the two hosts


def test_srun_exit_status_is_the_highest_tasks_and_a_script_on_stdin_runs(slurm):
    out = batch(slurm, "#!/bin/sh\n#SBATCH -n 2\n"
                "srun sh -c 'exit $((SLURM_PROCID + 2))'; echo rc=$?\n"
                "printf 'echo from-stdin $SLURM_PROCID\\n' | srun -n 1 sh -s\n"
                "srun -n 1 --output=step-%j.txt sh -c 'echo into a file'\n")
    assert out.splitlines() == ["rc=3", "from-stdin 0"]
    jobid = max(int(p.name[5:-4]) for p in slurm.work.glob("step-*.txt"))
    assert (slurm.work / f"step-{jobid}.txt").read_text() == "into a file\n"


def test_srun_output_files_per_task_and_shared(slurm):
    """submitit's ``srun --output %j_%t_log.out --error %j_%t_log.err``: a file per task; a name without
    a task code is one file all tasks write, errors with the output unless --error."""
    r = slurm("sbatch", "--parsable", "-n", "2", input=(
        "#!/bin/sh\n"
        "srun --unbuffered --output %j_%t_log.out --error %j_%t_log.err sh -c 'echo out$SLURM_PROCID; "
        "echo err$SLURM_PROCID >&2'\n"
        "srun -o shared-%j.txt sh -c 'echo all$SLURM_PROCID; echo allerr$SLURM_PROCID >&2'\n"))
    jobid = int(r.out)
    assert slurm.wait_state(str(jobid), ("DONE", "EXIT"))["state"] == "DONE"
    for t in (0, 1):
        assert (slurm.work / f"{jobid}_{t}_log.out").read_text() == f"out{t}\n"
        assert (slurm.work / f"{jobid}_{t}_log.err").read_text() == f"err{t}\n"
    shared = (slurm.work / f"shared-{jobid}.txt").read_text().splitlines()
    assert sorted(shared) == ["all0", "all1", "allerr0", "allerr1"]


def test_srun_outside_a_job_allocates_and_runs(slurm):
    # The commands outlive the client's attaching (an interactive job that ends before its user's
    # terminal is attached loses its output: see the report of issue 35).
    r = slurm("srun", "-n", "2", "-l", "sh", "-c", "sleep 2; echo t$SLURM_PROCID")
    assert r.code == 0, r.err
    assert sorted(r.out.split()) == ["0:", "1:", "t0", "t1"]
    r = slurm("srun", "sh", "-c", "sleep 2; echo job=$SLURM_JOB_ID; exit 4")
    assert r.code == 4, r.err
    assert re.fullmatch(r"job=\d+\s*", r.out.replace("\r", ""))


def test_srun_refusals(slurm):
    r = slurm("srun")
    assert (r.code, r.err) == (1, "srun: error: No command given to execute.\n")
    r = slurm("srun", "--multi-prog", "conf")
    assert r.code == 1 and r.err.startswith("srun: error: --multi-prog")
    r = slurm("srun", "--bogus", "true")
    assert (r.code, r.err) == (1, "srun: unrecognized option '--bogus'\nTry \"srun --help\" for more information\n")


class Terminal:
    """A program on a fresh pseudo-terminal, as a person at a terminal runs it."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd) -> None:
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env={**env, "TERM": "dumb"},
                                     cwd=cwd, start_new_session=True, close_fds=True)
        os.close(slave)
        self.seen = b""

    def read_until(self, pattern: str, timeout: float = 60) -> re.Match:
        deadline = time.monotonic() + timeout
        while True:
            m = re.search(pattern, self.seen.decode(errors="replace"))
            if m:
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {pattern!r} on the terminal; it shows:\n{self.seen.decode(errors='replace')}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    self.seen += os.read(self.master, 65536)
                except OSError:  # the program ended and closed the terminal
                    time.sleep(0.1)

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)
        os.close(self.master)


@pytest.fixture
def terminal(slurm):
    opened: list[Terminal] = []

    def start(*argv: str) -> Terminal:
        t = Terminal([str(slurm.bin / argv[0]), *argv[1:]], slurm.env, slurm.work)
        opened.append(t)
        return t

    yield start
    for t in opened:
        t.close()


def test_salloc_gives_a_shell_in_the_allocation_where_srun_runs_its_tasks(terminal):
    t = terminal("salloc", "-n", "2", "bash", "--norc", "--noprofile")
    jobid = t.read_until(r"salloc: Granted job allocation (\d+)").group(1)
    t.type("echo JOB=$SLURM_JOB_ID; tty")
    t.read_until(rf"JOB={jobid}\s+/dev/pts/\d+")
    t.type("srun -l sh -c 'echo task$SLURM_PROCID'")
    t.read_until(r"0: task0")
    t.read_until(r"1: task1")
    t.type("exit 7")
    t.read_until(rf"salloc: Relinquishing job allocation {jobid}")
    assert t.proc.wait(30) == 7


def test_srun_pty_is_an_interactive_shell(terminal):
    t = terminal("srun", "--pty", "bash", "--norc", "--noprofile")
    t.type("echo PTY=$SLURM_JOB_ID; tty")
    t.read_until(r"PTY=\d+\s+/dev/pts/\d+")
    t.type("exit 5")
    assert t.proc.wait(30) == 5
