"""The on-disk record of the jobs a worker runs, so that a restarted worker finds them again.

One small JSON file per job, written when the job starts and removed once its end is reported.
A pid alone is not an identity (pids are reused), so the record keeps the leader's process
creation time as well: a restarted worker adopts a job only when a process with that pid *and*
that creation time is still alive. Next to it, ``<jobid>.exit`` receives the job's wait status
from its parent, the worker's spawner (:mod:`xce.worker.spawner`), when it ends, so a restarted worker, which is not the
job's parent, still learns how it ended.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil


@dataclass(slots=True)
class JobRecord:
    jobid: int
    pid: int
    pgid: int
    create_time: float
    limits: dict[str, int] = field(default_factory=dict)
    gpus: list[str] = field(default_factory=list)
    started: float = 0.0


class JobStateDir:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True, mode=0o700)

    def _file(self, jobid: int) -> Path:
        return self.path / f"{jobid}.json"

    def save(self, rec: JobRecord) -> None:
        tmp = self.path / f".{rec.jobid}.tmp"
        tmp.write_text(json.dumps(asdict(rec), sort_keys=True))
        os.replace(tmp, self._file(rec.jobid))

    def remove(self, jobid: int) -> None:
        for f in (self._file(jobid), self.exit_path(jobid)):
            try:
                f.unlink()
            except FileNotFoundError:
                pass

    def exit_path(self, jobid: int) -> Path:
        return self.path / f"{jobid}.exit"

    def exit_status(self, jobid: int) -> int | None:
        """The job's wait status as its spawner wrote it; None while it runs (or if nobody knows)."""
        return read_exit(self.exit_path(jobid))

    def load_all(self) -> list[JobRecord]:
        out = []
        for f in sorted(self.path.glob("*.json")):
            try:
                d: dict[str, Any] = json.loads(f.read_text())
                out.append(JobRecord(**d))
            except (OSError, ValueError, TypeError):
                f.unlink(missing_ok=True)  # a torn or foreign file describes no job we can manage
        return out


def still_alive(rec: JobRecord) -> bool:
    """The very process the record describes is still running (not a zombie, not a reused pid)."""
    try:
        p = psutil.Process(rec.pid)
        return abs(p.create_time() - rec.create_time) < 0.05 and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def read_exit(path: Path | str) -> int | None:
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None
