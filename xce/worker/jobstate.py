"""The on-disk record of the jobs a worker runs, so that a restarted worker finds them again.

One append-only journal per worker: a line with the job's record when it starts (again when the
record changes), a line saying it is gone once its end is reported. Appending to a file that is
already open costs one ``write``; a file per job cost an inode allocated and freed per job, which on
ext4 under a steady stream of short jobs was a tenth of a worker's CPU (the allocator searching
past recently freed inodes). The journal is rewritten with only the live records whenever it holds
many more lines than that (a new file renamed over the old: a crash leaves one or the other whole;
a line torn by a crash is skipped when it is read back).

A pid alone is not an identity (pids are reused), so the record keeps the leader's process
creation time as well: a restarted worker adopts a job only when a process with that pid *and*
that creation time is still alive. Next to the journal, ``<jobid>.exit`` receives the job's wait
status from its parent, the worker's spawner (:mod:`xce.worker.spawner`), when it ends, so a
restarted worker, which is not the job's parent, still learns how it ended.

A journal that cannot be written (a full disk, a quota, a file system gone read-only) never
raises into the worker's threads: the records stay in memory, :attr:`JobStateDir.trouble` says
why (the worker reports it, and the controller gives the host no new job meanwhile), and the next
write, or :meth:`JobStateDir.retry`, rewrites the whole journal (an append after a failed one
could follow a torn line) and so recovers by itself once there is room again.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import psutil

from xce.procs import pid_alive

log = logging.getLogger("xce.worker")

JOURNAL = "journal.jsonl"
#: Lines the journal may hold beyond twice the live records before it is rewritten.
SLACK = 1000


@dataclass(slots=True)
class JobRecord:
    jobid: int
    pid: int
    pgid: int
    create_time: float
    limits: dict[str, int] = field(default_factory=dict)
    gpus: list[str] = field(default_factory=list)
    started: float = 0.0
    run: int | None = None  # which run of the job (StartJob.run): reported with it after a restart


_FIELDS = tuple(f.name for f in fields(JobRecord))


def _as_dict(rec: JobRecord) -> dict[str, Any]:
    return {name: getattr(rec, name) for name in _FIELDS}  # dataclasses.asdict deep-copies: 10x slower


class JobStateDir:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._lock = threading.Lock()  # the worker's start and reaper threads both write
        self._live: dict[int, JobRecord] = {}
        self._lines = 0
        self._fd = -1
        #: Why the journal cannot be written now (None: it can).
        self.trouble: str | None = None

    def _write(self, obj: dict[str, Any]) -> None:
        """(Holding the lock.) Put ``obj`` in the journal: appended while all is well, the whole
        journal rewritten after a failure; a failure is noted in :attr:`trouble`, never raised."""
        try:
            if self.trouble is None:
                self._append(obj)
            else:
                self._rewrite()
        except OSError as exc:
            self._failed(exc)
            return
        if self.trouble is not None:
            log.warning("the job journal in %s can be written again", self.path)
            self.trouble = None

    def _failed(self, exc: OSError) -> None:
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1
        try:
            os.unlink(self.path / f".{JOURNAL}.tmp")
        except OSError:
            pass
        why = f"cannot write the job journal in {self.path}: {exc.strerror or exc}"
        if why != self.trouble:
            log.error("%s; taking no new jobs until it can (running jobs go on)", why)
        self.trouble = why

    def retry(self) -> bool:
        """Try the journal again after a failure; True when it is (again) written in full."""
        with self._lock:
            if self.trouble is not None:
                self._write({})
            return self.trouble is None

    def _append(self, obj: dict[str, Any]) -> None:
        if self._fd < 0:
            self._fd = os.open(self.path / JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.write(self._fd, (json.dumps(obj, sort_keys=True) + "\n").encode())
        self._lines += 1
        if self._lines > 2 * len(self._live) + SLACK:
            self._rewrite()

    def _rewrite(self) -> None:
        tmp = self.path / f".{JOURNAL}.tmp"
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600), "w") as f:
            for rec in self._live.values():
                f.write(json.dumps({"job": _as_dict(rec)}, sort_keys=True) + "\n")
        os.replace(tmp, self.path / JOURNAL)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._lines = len(self._live)

    def save(self, rec: JobRecord) -> None:
        with self._lock:
            self._live[rec.jobid] = rec
            self._write({"job": _as_dict(rec)})

    def remove(self, jobid: int) -> None:
        with self._lock:
            if self._live.pop(jobid, None) is not None:
                self._write({"gone": jobid})
        try:
            os.unlink(self.exit_path(jobid))
        except FileNotFoundError:
            pass
        except OSError as exc:  # it describes an ended job: a stale one is harmless, a raise is not
            log.warning("cannot remove %s: %s", self.exit_path(jobid), exc.strerror or exc)

    def exit_path(self, jobid: int) -> str:
        return f"{self.path}/{jobid}.exit"

    def exit_status(self, jobid: int) -> int | None:
        """The job's wait status as its spawner wrote it; None while it runs (or if nobody knows)."""
        return read_exit(self.exit_path(jobid))

    def load_all(self) -> list[JobRecord]:
        """The jobs the journal says are live (at a worker's start), and the journal rewritten with
        only those. Records of older workers (``<jobid>.json``, a file per job) are taken in too."""
        live = read_journal(self.path)
        legacy = sorted(self.path.glob("*.json"))
        for f in legacy:
            try:
                rec = JobRecord(**json.loads(f.read_text()))
                live.setdefault(rec.jobid, rec)
            except (OSError, ValueError, TypeError):
                pass
        with self._lock:
            self._live = live
            try:
                self._rewrite()
            except OSError as exc:
                self._failed(exc)
        for f in legacy:
            f.unlink(missing_ok=True)
        return sorted(live.values(), key=lambda r: r.jobid)


def read_journal(path: Path) -> dict[int, JobRecord]:
    """The live records of the journal in ``path``, read without changing it (its worker may be
    writing it: ``xce demo`` looks at the jobs' pids this way)."""
    live: dict[int, JobRecord] = {}
    try:
        with open(path / JOURNAL, "rb") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                    if "job" in entry:
                        rec = JobRecord(**entry["job"])
                        live[rec.jobid] = rec
                    else:
                        live.pop(int(entry["gone"]), None)
                except (ValueError, TypeError, KeyError):
                    continue  # torn by a crash, or not ours: it describes no job we can manage
    except FileNotFoundError:
        pass
    return live


def still_alive(rec: JobRecord) -> bool:
    """The very process the record describes is still running (not a zombie, not a reused pid)."""
    return pid_alive(rec.pid, rec.create_time)


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
_BOOT: list[float] = []


def _boot_time() -> float:
    if not _BOOT:
        _BOOT.append(psutil.boot_time())
    return _BOOT[0]


def read_exit(path: Path | str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None
