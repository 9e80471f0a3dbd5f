"""Control groups v2 (the unified hierarchy): one ``job_<id>`` group per job under ``<parent>/<worker>``.

Limits: ``memory.max`` (with ``memory.swap.max`` 0, so that swap does not stretch the limit),
``cpu.max`` (quota per 100 ms period from ``xce.io/cpu-milli``), ``pids.max``. A kill writes
``cgroup.kill`` where the kernel has it (5.14+: every member, atomically, forks included) and sweeps
with SIGKILL otherwise. Suspend is SIGSTOP to every member, or ``cgroup.freeze`` when configured.
The intermediate groups hold no processes (v2's "no internal processes" rule) and delegate
``memory``, ``cpu`` and ``pids`` to their children through ``cgroup.subtree_control``.
"""

from __future__ import annotations

import signal
from pathlib import Path

from xce.worker.containment import cgroupfs as fs
from xce.worker.containment.base import SPAWNER, Containment, Limits, Usage

CONTROLLERS = ("memory", "cpu", "pids")
CPU_PERIOD_US = 100_000


class CgroupV2(Containment):
    kind = "cgroup-v2"
    enforces_memory = True

    def __init__(self, root: Path, parent: str, worker: str, *, freeze: bool = False) -> None:
        self.root = Path(root)
        self.parts = [p for p in parent.strip("/").split("/") if p] + [worker]
        self.base = self.root.joinpath(*self.parts)
        self.freeze = freeze

    def describe(self) -> str:
        return f"cgroup v2 (memory, cpu, pids{', freezer' if self.freeze else ''}) under {self.base}"

    def job_dir(self, jobid: int) -> Path:
        return self.base / f"job_{jobid}"

    def start(self, keep: set[int]) -> list[int]:
        path = self.root
        for part in self.parts:
            self._delegate(path)
            path = path / part
            path.mkdir(exist_ok=True)
        self._delegate(path)
        (self.base / SPAWNER).mkdir(exist_ok=True)
        removed = [j for j in fs.job_ids(self.base) if j not in keep]
        for jobid in removed:
            self.remove(jobid)
        return removed

    def _delegate(self, path: Path) -> None:
        have = set((fs.read(path / "cgroup.controllers") or "").split())
        on = set((fs.read(path / "cgroup.subtree_control") or "").split())
        want = [c for c in CONTROLLERS if c in have and c not in on]
        if want:
            fs.write(path / "cgroup.subtree_control", " ".join(f"+{c}" for c in want))

    def create(self, jobid: int, limits: Limits) -> None:
        d = self.job_dir(jobid)
        d.mkdir(exist_ok=True)
        if limits.mem:
            fs.write(d / "memory.max", str(limits.mem))
            if (d / "memory.swap.max").exists():
                fs.write(d / "memory.swap.max", "0")
        if limits.cpu_milli:
            fs.write(d / "cpu.max", f"{max(1000, limits.cpu_milli * CPU_PERIOD_US // 1000)} {CPU_PERIOD_US}")
        if limits.pids:
            fs.write(d / "pids.max", str(limits.pids))

    def procs_files(self, jobid: int) -> tuple[str, ...]:
        return (f"{self.job_dir(jobid)}/cgroup.procs",)

    def home_files(self, jobid: int) -> tuple[str, ...]:
        return (f"{self.base}/{SPAWNER}/cgroup.procs",)

    def join(self, jobid: int, pid: int) -> None:
        fs.write(self.job_dir(jobid) / "cgroup.procs", str(pid))

    def members(self, jobid: int) -> list[int]:
        return fs.procs(self.job_dir(jobid) / "cgroup.procs")

    def suspend(self, jobid: int, sig: int) -> None:
        if self.freeze and (self.job_dir(jobid) / "cgroup.freeze").exists():
            fs.write(self.job_dir(jobid) / "cgroup.freeze", "1")
        else:
            super().suspend(jobid, sig)

    def resume(self, jobid: int, sig: int) -> None:
        if self.freeze and (self.job_dir(jobid) / "cgroup.freeze").exists():
            fs.write(self.job_dir(jobid) / "cgroup.freeze", "0")
        super().resume(jobid, sig)

    def kill(self, jobid: int) -> bool:
        if not self.members(jobid):  # nothing left to fork: no kill, no sweep (the usual end of a job)
            return True
        d = self.job_dir(jobid)
        if (d / "cgroup.kill").exists():
            try:
                fs.write(d / "cgroup.kill", "1")
            except OSError:
                pass
        if (d / "cgroup.freeze").exists():  # a frozen member would not die until thawed
            try:
                fs.write(d / "cgroup.freeze", "0")
            except OSError:
                pass
        ok = super().kill(jobid)
        self.signal(jobid, signal.SIGCONT)
        return ok

    def usage(self, jobid: int) -> Usage | None:
        d = self.job_dir(jobid)
        current = fs.read_int(d / "memory.current")
        if current is None:
            return None
        anon = fs.keyed(d / "memory.stat").get("anon", current)
        peak = fs.read_int(d / "memory.peak")  # kernels from 5.19
        cpu = fs.keyed(d / "cpu.stat")  # microseconds
        user, system = cpu.get("user_usec"), cpu.get("system_usec")
        return Usage(memory_rss=anon, mem_peak=peak, cpu_ms=cpu.get("usage_usec", 0) // 1000,
                     cpu_user_ms=None if user is None else user // 1000,
                     cpu_sys_ms=None if system is None else system // 1000)

    def oom_peak(self, jobid: int) -> int | None:
        d = self.job_dir(jobid)
        if fs.keyed(d / "memory.events").get("oom_kill", 0) <= 0:
            return None
        return fs.read_int(d / "memory.peak") or fs.read_int(d / "memory.max") or 0

    def remove(self, jobid: int) -> None:
        d = self.job_dir(jobid)
        if not d.exists():
            return
        self.kill(jobid)
        fs.rmdir(d)

    def known(self) -> list[int]:
        return fs.job_ids(self.base)

    def purge(self) -> None:
        for jobid in self.known():
            self.remove(jobid)
        self.close()

    def close(self) -> None:
        fs.rmdir(self.base / SPAWNER, quiet=True)
        path = self.base
        for _ in self.parts:
            if not fs.rmdir(path, tries=1, quiet=True):
                return
            path = path.parent
