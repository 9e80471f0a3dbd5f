"""Signalling and reaping job processes (they are started by :mod:`xce.worker.launch`).

Every job gets its own session and process group (``setsid`` at its start), so that signals meant
for the worker (a Ctrl-C in its terminal) never reach the jobs, and its own container (a control
group where the host offers one, :mod:`xce.worker.containment`), which reaches every process it
started however it detached itself. A job ends when its leader exits; anything it left behind is
killed then, because nobody would account for it otherwise.

A job adopted after a worker restart is not our child, so it cannot be waited for: its end is seen
by polling, and how it ended is unknown (the reason says so).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xce.endcodes import MEMLIMIT
from xce.signals import parse_signal
from xce.worker import jobvars
from xce.worker.containment import Containment, ProcessGroup
from xce.worker.identity import Identity, StartError, resolve_identity
from xce.worker.jobstate import JobRecord, read_exit, still_alive
from xce.worker.launch import LaunchSpec, PrepareStep
from xce.worker.started import Child

__all__ = ["Identity", "JobProcess", "StartError", "job_env", "launch_spec", "resolve_identity", "signal_number"]

#: Environment passed to every job before its own ``env``: enough for a shell to work, none of the
#: worker's secrets (its token is never in a job's environment).
#: How long after an adopted job's leader is seen gone its exit file may still be empty.
EXIT_WRITE_S = 1.0
BASE_ENV_KEYS = ("LANG", "LC_ALL", "TZ", "TMPDIR")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class JobProcess:
    jobid: int
    pid: int
    pgid: int
    create_time: float
    limits: dict[str, int] = field(default_factory=dict)
    gpus: list[str] = field(default_factory=list)
    popen: Child | None = None  # None for a job adopted after a restart
    started: float = field(default_factory=time.time)
    suspended: bool = False
    kill_at: float | None = None  # monotonic deadline for SIGKILL after a SIGTERM
    end_reason: str | None = None  # set when the worker itself decided to end the job
    end_code: str | None = None  # beside end_reason: why in one word (xce.endcodes), when the worker knows it
    secondary: bool = False  # a non-first host of a parallel job: holds its container, runs only its tasks
    #: The start action's job (owner, environment, launch key): what its tasks are started with.
    job: dict[str, Any] = field(default_factory=dict)
    box: Containment = field(default_factory=ProcessGroup)  # holds every process of the job
    exit_file: str | None = None  # where its spawner writes its wait status (read after a restart)
    dead_since: float | None = None  # an adopted job's leader was seen gone (its status may follow)
    #: Process groups of the tasks ``xce launch`` (``srun``) runs for it here now: its job steps.
    steps: set[int] = field(default_factory=set)
    #: Which run of the job this is (the start's): its end is that run's, not a newer one's.
    run: Any = None

    def record(self) -> JobRecord:
        return JobRecord(self.jobid, self.pid, self.pgid, self.create_time, dict(self.limits), list(self.gpus),
                         self.started)

    @classmethod
    def adopt(cls, rec: JobRecord, box: Containment, exit_file: str | None = None) -> "JobProcess":
        box.adopt(rec.jobid, rec.pgid)
        return cls(rec.jobid, rec.pid, rec.pgid, rec.create_time, dict(rec.limits), list(rec.gpus), None,
                   rec.started or time.time(), box=box, exit_file=exit_file, run=rec.run)

    # -- signals ---------------------------------------------------------------------------
    def signal(self, sig: int) -> None:
        """``sig`` to every process of the job (its container's members)."""
        self.box.signal(self.jobid, sig)

    def signal_leader(self, sig: int) -> None:
        """``sig`` to the job's first process only (its batch shell: ``--signal=B:SIG@S``)."""
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def signal_steps(self, sig: int) -> None:
        """``sig`` to every task ``xce launch`` started for the job here, not to its batch shell."""
        for pgid in list(self.steps):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                pass

    def suspend(self, sig: int) -> None:
        self.box.suspend(self.jobid, sig)
        self.suspended = True

    def resume(self, sig: int) -> None:
        self.box.resume(self.jobid, sig)
        self.suspended = False

    def terminate(self, grace_s: float, reason: str | None = None, code: str | None = None) -> None:
        """SIGTERM now (and SIGCONT, so a stopped job can act on it), SIGKILL after ``grace_s``."""
        if reason and not self.end_reason:
            self.end_reason, self.end_code = reason, code
        self.signal(signal.SIGTERM)
        self.box.resume(self.jobid, signal.SIGCONT)  # thawed too, if the freezer holds it
        deadline = time.monotonic() + max(0.0, grace_s)
        self.kill_at = deadline if self.kill_at is None else min(self.kill_at, deadline)

    def kill_now(self, reason: str, code: str | None = None) -> None:
        if not self.end_reason:
            self.end_reason, self.end_code = reason, code
        self.box.kill(self.jobid)

    def _memory_reason(self) -> str | None:
        """"memory limit 100M reached (peak 100M)" when the kernel killed a process of the job for it."""
        peak = self.box.oom_peak(self.jobid)
        if peak is None:
            return None
        from xce.formats import size

        cap = self.limits.get("mem")
        if cap:
            return f"killed: memory limit {size(cap)} reached (peak {size(peak)})"
        return f"killed: out of memory (peak {size(peak)})"

    def check_memory(self) -> None:
        """A secondary whose task the kernel killed at its memory limit ends, and the whole job with
        it, MEMLIMIT: a parallel job that lost a task cannot go on as placed, and LSF ends it so."""
        if self.secondary and self.end_reason is None and self.limits.get("mem"):
            oom = self._memory_reason()
            if oom:
                self.end_reason, self.end_code = oom, MEMLIMIT

    # -- reaping ---------------------------------------------------------------------------
    def poll(self) -> dict[str, Any] | None:
        """None while the job runs; its end (exit_code, signal, reason) once its leader is gone."""
        if self.secondary:
            # No leader here: it ends when it is told to (its tasks gone, or the grace over), or when
            # the kernel killed one of its tasks for memory (:meth:`check_memory`).
            if self.end_reason is None:
                return None
            if self.kill_at is not None and time.monotonic() < self.kill_at and self.box.members(self.jobid):
                return None
            self.box.kill(self.jobid)
            return {"exit_code": None, "signal": None, "reason": self.end_reason, "end": self.end_code}
        if self.kill_at is not None and time.monotonic() >= self.kill_at:
            self.box.kill(self.jobid)
            self.kill_at = None
        if self.popen is not None:
            rc = self.popen.poll()
            if rc is not None:
                return self._ended(rc)
            if not getattr(self.popen, "orphaned", False):
                return None
            # Its spawner died without telling how it ended: watched as a job adopted after a restart.
            self.popen = None
        if still_alive(self.record()):
            return None
        status = read_exit(self.exit_file) if self.exit_file else None
        if status is not None:
            return self._ended(os.waitstatus_to_exitcode(status))
        now = time.monotonic()
        if self.dead_since is None:
            self.dead_since = now
        if now - self.dead_since < EXIT_WRITE_S:  # its spawner writes the status a moment after
            return None
        self.box.kill(self.jobid)
        return {"exit_code": None, "signal": None, "end": self.end_code,
                "reason": self.end_reason or "ended while the worker was restarting; its exit status is unknown "
                          "(its spawner did not record it)"}

    def _ended(self, rc: int) -> dict[str, Any]:
        """The end of a job whose leader exited with ``rc`` (-N: signal N)."""
        self.box.kill(self.jobid)  # whatever it left behind, setsid or double fork included
        # Asked whatever the leader's status: a job whose child was killed for memory ends MEMLIMIT
        # (EXIT) even when its script carried on and exited 0, as LSF's TERM_MEMLIMIT and Slurm's
        # OUT_OF_MEMORY do.
        oom = self._memory_reason()
        end = self.end_code if self.end_reason else MEMLIMIT if oom else None  # the code of the reason given
        if rc < 0:
            name = _signame(-rc)
            return {"exit_code": 128 - rc, "signal": name, "end": end,
                    "reason": self.end_reason or oom or f"killed by signal {name}"}
        return {"exit_code": rc, "signal": None, "end": end,
                "reason": self.end_reason or oom or ("" if rc == 0 else f"exit code {rc}")}


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"SIG{sig}"


def signal_number(name: str | None, default: int) -> int:
    sig = parse_signal(name) if name else None
    return default if sig is None else int(sig)


def launch_spec(job: dict[str, Any], *, env: dict[str, str], ident: Identity, work_dir: str | None,
                prepare: Sequence[PrepareStep] = (), exit_file: str | None = None) -> LaunchSpec:
    """What starting ``job`` means here: its command, cwd and output paths, as strings only.

    Paths are joined, never looked at: the files are opened by the job's own process, as its owner
    (see :mod:`xce.worker.launch`).
    """
    jobid = int(job["jobid"])
    cwd = job.get("cwd") or ident.home or "/"
    out_dir = work_dir or cwd
    # Final paths: the controller expanded every % code at dispatch (xce.protocol.actions.StartJob).
    stdout = job.get("stdout") or os.path.join(out_dir, f"xce-{jobid}.out")
    # Output named and errors not: both go to that file, as LSF and Slurm do.
    stderr = job.get("stderr") or (job.get("stdout") or os.path.join(out_dir, f"xce-{jobid}.err"))
    stdout, stderr = (os.path.normpath(os.path.join(cwd, p)) for p in (stdout, stderr))
    return LaunchSpec(argv=list(job["command"]), env=env, cwd=cwd, stdout=stdout, stderr=stderr, identity=ident,
                      prepare=tuple(prepare), exit_file=exit_file,
                      truncate=(job.get("options") or {}).get("open_mode") == "truncate")


def job_env(job: dict[str, Any], ident: Identity, *, host: str, gpus: list[str],
            user_env: dict[str, str] | None = None, task: tuple[int, int] = (0, 0),
            host_slots: int | None = None) -> dict[str, str]:
    """The job's environment: a minimal base, the submitter's variables (``user_env`` instead for a
    task: the environment of the ``xce launch`` that asked for it), then XCE's, LSF's and Slurm's,
    which win (:mod:`xce.worker.jobvars`). The owner's identity is the real one whatever the
    submitter's environment says. Only the job's own processes are given this: nothing that runs
    with the worker's rights reads it (the worker's own environment is never touched)."""
    env = {k: os.environ[k] for k in BASE_ENV_KEYS if k in os.environ}
    env["PATH"] = DEFAULT_PATH  # the system's, never the worker's own (a job given none: sbatch --export=NONE)
    env.update(HOME=ident.home, SHELL=ident.shell or "/bin/sh")
    given = job.get("env") if user_env is None else user_env
    env.update({str(k): str(v) for k, v in (given or {}).items() if k not in jobvars.MANAGED})
    env.update(USER=ident.name, LOGNAME=ident.name, PWD=str(job.get("cwd") or ident.home or "/"))
    placement = job.get("placement") or [[host, job.get("tasks", 1)]]
    here = sum(int(n) for h, n in placement if h == host) or int(job.get("tasks", 1))
    env.update({
        "XCE_JOBID": str(job["jobid"]),
        "XCE_HOSTS": " ".join(f"{h}:{n}" for h, n in placement),
        "XCE_QUEUE": str(job.get("queue") or ""),
        "XCE_TASKS": str(job.get("tasks", 1)),
        "XCE_EXEC_HOST": host,
    })
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):  # the submitter's choice wins
        env.setdefault(name, str(here))
    env.update(jobvars.job_vars(job, host=host, uid=ident.uid, families=job.get("env_families", ["lsf", "slurm"]),
                                host_slots=host_slots, task=task))
    if job.get("launch_key"):  # what `xce launch` needs to start tasks on the job's hosts
        env["XCE_LAUNCH_KEY"] = str(job["launch_key"])
        env["XCE_TASK_SERVERS"] = " ".join(f"{h}={a}" for h, a in (job.get("task_servers") or {}).items())
    if job.get("array_index") is not None:
        env["XCE_ARRAY_INDEX"] = str(job["array_index"])
    cap = (job.get("limits") or {}).get("xce.io/gpu")
    if cap is not None:  # --limit xce.io/gpu=N: it sees at most N of its devices, none if it holds none
        gpus = gpus[:int(cap)]
    if gpus or cap is not None:
        env.update(jobvars.gpu_vars(gpus, families=job.get("env_families", ["lsf", "slurm"]),
                                    step=user_env is not None))
    return env
