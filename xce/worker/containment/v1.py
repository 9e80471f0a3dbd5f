"""Control groups v1: one ``job_<id>`` group per job in each of the ``memory``, ``cpu``, ``cpuacct``,
``pids`` and ``freezer`` hierarchies the host mounts writable, under ``<parent>/<worker>`` below the
worker's own group in that hierarchy (so a worker started by systemd, or inside a container's
group, keeps its jobs inside what it was given).

Limits: ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes`` where swap accounting is on,
so that swap does not stretch the limit), ``cpu.cfs_quota_us`` over ``cpu.cfs_period_us`` from
``xce.io/cpu-milli``, ``pids.max``. A kill freezes the group first (no member can fork while being
killed), sends SIGKILL to each member, thaws, and sweeps again until the group is empty.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from xce.worker.containment import cgroupfs as fs
from xce.worker.containment.base import SPAWNER, Containment, Limits, Usage

CONTROLLERS = ("memory", "cpu", "cpuacct", "pids", "freezer")
#: Controllers that only enforce a limit (the Limits field they enforce): a job without that limit
#: gets no group in their hierarchy. A group costs a mkdir and an rmdir per job, and its spawner two
#: moves, a sixth of a worker's CPU per ``true`` job; memory (membership, usage, its limit), cpuacct
#: (CPU used) and the freezer (a kill that no fork escapes) serve every job.
LIMIT_ONLY = {"cpu": "cpu_milli", "pids": "pids"}


class CgroupV1(Containment):
    kind = "cgroup-v1"
    enforces_memory = True

    def __init__(self, bases: dict[str, Path], *, freeze: bool = False, depth: int = 1) -> None:
        """``bases``: controller -> this worker's directory in that hierarchy (``memory`` required)."""
        self.bases = {c: Path(p) for c, p in bases.items()}
        self.freeze = freeze and "freezer" in self.bases
        self.depth = depth  # directories of ours above the job groups: <parent...>/<worker>
        #: Co-mounted controllers (cpu,cpuacct) share one directory; memory's comes first (members()).
        self.controllers: dict[Path, set[str]] = {}
        for c, p in sorted(self.bases.items(), key=lambda cp: cp[0] != "memory"):
            self.controllers.setdefault(p, set()).add(c)
        self.dirs = list(self.controllers)
        self._roots = [str(d) for d in self.dirs]  # for the per-job paths, built at every start and end
        self._made: dict[int, list[str]] = {}  # job -> the roots its groups were made in, until removed

    def describe(self) -> str:
        names = ", ".join(c for c in CONTROLLERS if c in self.bases)
        return f"cgroup v1 ({names}) under {self.bases['memory']} and its siblings"

    def _dir(self, controller: str, jobid: int) -> Path | None:
        base = self.bases.get(controller)
        return None if base is None else base / f"job_{jobid}"

    def start(self, keep: set[int]) -> list[int]:
        for d in self.dirs:
            (d / SPAWNER).mkdir(parents=True, exist_ok=True)
        removed: dict[int, None] = {}
        for d in self.dirs:
            for jobid in fs.job_ids(d):
                if jobid not in keep:
                    removed.setdefault(jobid, None)
        for jobid in removed:
            self.remove(jobid)
        return list(removed)

    def create(self, jobid: int, limits: Limits) -> None:
        unused = {c for c, field in LIMIT_ONLY.items() if not getattr(limits, field)}
        roots = self._made[jobid] = [r for d, r in zip(self.dirs, self._roots, strict=True) if self.controllers[d] - unused]
        for d in roots:
            try:
                os.mkdir(f"{d}/job_{jobid}")
            except FileExistsError:
                pass
        if limits.mem and (mem := self._dir("memory", jobid)) is not None:
            fs.write(mem / "memory.limit_in_bytes", str(limits.mem))
            if (mem / "memory.memsw.limit_in_bytes").exists():
                try:
                    fs.write(mem / "memory.memsw.limit_in_bytes", str(limits.mem))
                except OSError:
                    pass
        if limits.cpu_milli and (cpu := self._dir("cpu", jobid)) is not None:
            period = fs.read_int(cpu / "cpu.cfs_period_us") or 100_000
            fs.write(cpu / "cpu.cfs_quota_us", str(max(1000, limits.cpu_milli * period // 1000)))
        if limits.pids and (pids := self._dir("pids", jobid)) is not None:
            fs.write(pids / "pids.max", str(limits.pids))

    def _job_roots(self, jobid: int) -> list[str]:
        """The hierarchies job ``jobid`` has groups in (looked up for a job a previous run made)."""
        roots = self._made.get(jobid)
        return roots if roots is not None else [d for d in self._roots if os.path.isdir(f"{d}/job_{jobid}")]

    def procs_files(self, jobid: int) -> tuple[str, ...]:
        return tuple(f"{d}/job_{jobid}/cgroup.procs" for d in self._job_roots(jobid))

    def home_files(self, jobid: int) -> tuple[str, ...]:
        return tuple(f"{d}/{SPAWNER}/cgroup.procs" for d in self._job_roots(jobid))

    def join(self, jobid: int, pid: int) -> None:
        for path in self.procs_files(jobid):
            fs.write(path, str(pid))

    def members(self, jobid: int) -> list[int]:
        """The members of the job's group in the first hierarchy, which every join writes first: a
        process is in all of them or, when its join failed, at least in that one (a job's processes
        cannot move themselves). One file read instead of one per hierarchy, at every job's end."""
        return fs.procs(f"{self._roots[0]}/job_{jobid}/cgroup.procs")

    def _freezer(self, jobid: int, state: str) -> bool:
        d = self._dir("freezer", jobid)
        if d is None or not (d / "freezer.state").exists():
            return False
        try:
            fs.write(d / "freezer.state", state)
        except OSError:
            return False
        if state == "FROZEN":
            deadline = time.monotonic() + 1.0
            while (fs.read(d / "freezer.state") or "").strip() != "FROZEN" and time.monotonic() < deadline:
                time.sleep(0.005)
        return True

    def suspend(self, jobid: int, sig: int) -> None:
        if not (self.freeze and self._freezer(jobid, "FROZEN")):
            super().suspend(jobid, sig)

    def resume(self, jobid: int, sig: int) -> None:
        if self.freeze:
            self._freezer(jobid, "THAWED")
        super().resume(jobid, sig)

    def kill(self, jobid: int) -> bool:
        if not self.members(jobid):  # nothing left to fork: no freeze, no sweep (the usual end of a job)
            return True
        frozen = self._freezer(jobid, "FROZEN")
        for pid in self.members(jobid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if frozen:
            self._freezer(jobid, "THAWED")
        ok = super().kill(jobid)
        self.signal(jobid, signal.SIGCONT)
        return ok

    def usage(self, jobid: int) -> Usage | None:
        mem = self._dir("memory", jobid)
        if mem is None:
            return None
        stat = fs.keyed(mem / "memory.stat")
        if not stat:
            return None
        rss = stat.get("total_rss", stat.get("rss", 0))
        peak = fs.read_int(mem / "memory.max_usage_in_bytes")
        acct = self._dir("cpuacct", jobid)
        if acct is None:
            return Usage(memory_rss=rss, mem_peak=peak, cpu_ms=0)
        ns = fs.read_int(acct / "cpuacct.usage") or 0  # nanoseconds
        total = ns // 1_000_000
        user, system = _split_cpu(acct)
        if user is not None and system is not None and user + system > 0:
            # The kernel samples the split at its ticks (under contention it misses a third); the total
            # is exact: the split's proportion of it, so that user + system is the total, as sacct shows.
            user = total * user // (user + system)
            system = total - user
        return Usage(memory_rss=rss, mem_peak=peak, cpu_ms=total, cpu_user_ms=user, cpu_sys_ms=system)

    def oom_peak(self, jobid: int) -> int | None:
        mem = self._dir("memory", jobid)
        if mem is None:
            return None
        if fs.keyed(mem / "memory.oom_control").get("oom_kill", 0) <= 0:
            return None
        return fs.read_int(mem / "memory.max_usage_in_bytes") or 0

    def remove(self, jobid: int) -> None:
        roots = self._job_roots(jobid)
        if not any(os.path.exists(f"{d}/job_{jobid}") for d in roots):
            self._made.pop(jobid, None)
            return
        self.kill(jobid)  # cheap when the group is already empty
        for d in roots:
            fs.rmdir(f"{d}/job_{jobid}")
        self._made.pop(jobid, None)

    def known(self) -> list[int]:
        found: dict[int, None] = {}
        for d in self.dirs:
            for jobid in fs.job_ids(d):
                found.setdefault(jobid, None)
        return list(found)

    def purge(self) -> None:
        for jobid in self.known():
            self.remove(jobid)
        self.close()

    def close(self) -> None:
        for d in self.dirs:
            fs.rmdir(d / SPAWNER, quiet=True)
            path = d
            for _ in range(self.depth):
                if not fs.rmdir(path, tries=1, quiet=True):
                    break
                path = path.parent


def _split_cpu(acct: Path) -> tuple[int | None, int | None]:
    """User and system CPU in milliseconds: ``cpuacct.usage_user``/``usage_sys`` (nanoseconds, kernels
    from 4.7), else ``cpuacct.stat`` (clock ticks of ``USER_HZ``)."""
    user, system = fs.read_int(acct / "cpuacct.usage_user"), fs.read_int(acct / "cpuacct.usage_sys")
    if user is not None and system is not None:
        return user // 1_000_000, system // 1_000_000
    stat = fs.keyed(acct / "cpuacct.stat")
    if "user" not in stat or "system" not in stat:
        return None, None
    hz = os.sysconf("SC_CLK_TCK")
    return stat["user"] * 1000 // hz, stat["system"] * 1000 // hz
