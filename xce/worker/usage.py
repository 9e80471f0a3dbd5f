"""What a job really uses, summed over its whole process tree, as the worker reports it.

CPU time is in milliseconds (``cpu_ms``), memory in bytes; the names are
:mod:`xce.protocol.usage`'s, which a control group's counters report under too.

The tree is the job's leader and all its descendants, plus any process still in its process group
(a daemonising child is reparented away from the leader but keeps the group). Processes that vanish
while being read are simply skipped: a tick is a sample, not an audit.

A job holding GPUs also gets ``gpu_util_milli``: how busy its own devices are, read from NVML
(:class:`GpuSampler`).
"""

from __future__ import annotations

import importlib
import logging
import os
from typing import Any

import psutil

from xce.protocol.usage import CPU_MS, CPU_SYS_MS, CPU_USER_MS, MEMORY_RSS


def tree(pid: int, pgid: int | None = None) -> list[psutil.Process]:
    procs: dict[int, psutil.Process] = {}
    try:
        leader = psutil.Process(pid)
        procs[pid] = leader
        for child in leader.children(recursive=True):
            procs[child.pid] = child
    except psutil.Error:
        pass
    if pgid is not None:
        for p in psutil.process_iter():
            if p.pid in procs:
                continue
            try:
                if os.getpgid(p.pid) == pgid:
                    procs[p.pid] = p
            except OSError:
                continue
    return list(procs.values())


def sample(pid: int, pgid: int | None = None, *, whole_group: bool = False) -> dict[str, int]:
    """The job's tick where no control group counts for it: ``memory_rss`` (bytes, summed RSS) and
    ``cpu_ms``, ``cpu_user_ms``, ``cpu_sys_ms`` (milliseconds). Each process counts its own CPU time
    and that of the children it has waited for: a child that ended inside the tree is in its
    parent's figure, and one still running in its own, so nothing is counted twice."""
    rss = 0
    user = system = 0.0
    for p in tree(pid, pgid if whole_group else None):
        try:
            with p.oneshot():
                t = p.cpu_times()
                user += t.user + t.children_user
                system += t.system + t.children_system
                if p.status() != psutil.STATUS_ZOMBIE:  # not yet waited for: its time is its own still
                    rss += p.memory_info().rss
        except psutil.Error:
            continue
    return {MEMORY_RSS: int(rss), CPU_MS: round((user + system) * 1000), CPU_USER_MS: round(user * 1000),
            CPU_SYS_MS: round(system * 1000)}


#: The usage name of a job's GPU utilisation: the sum over its devices of NVML's utilisation
#: (percent of the last sample period in which a kernel ran) times 10, so 2 fully busy GPUs are 2000.
GPU_UTIL = "gpu_util_milli"

log = logging.getLogger("xce.worker")


class GpuSampler:
    """Per-job GPU utilisation through NVML (``pynvml`` from nvidia-ml-py), for exactly the devices
    a job holds (NVML indexes, as :meth:`xce.providers.gpu.GpuProvider.visible_devices` hands out).

    NVML is initialised at the first sample and kept open while jobs holding GPUs run here; the
    worker calls :meth:`close` at a report with none, so an idle worker holds no driver handle (the
    provider's reason for shutting NVML down after counting). It is not initialised per sample
    because ``nvmlInit`` enumerates every device and, on a host without persistence mode, can make
    the driver set the GPUs up again, which takes up to seconds; a handle kept open is a few file
    descriptors, and jobs never inherit them (the launcher closes every descriptor in the child).

    Anything that goes wrong yields ``None``, never a made-up 0 and never an exception: no
    ``pynvml`` (for good: the import is not retried), NVML that cannot be initialised (retried only
    after :meth:`close`, once no GPU job is left), a device whose utilisation cannot be read (MIG
    instances report none): that job's tick then carries no GPU figure, rather than a sum over the
    devices that did answer, which would understate it. Each kind of failure is logged once.
    """

    def __init__(self) -> None:
        self._nvml: Any = None
        self._error: type[BaseException] = Exception
        self._open = False
        self._no_library = False
        self._init_failed = False
        self._logged: set[str] = set()

    def _warn_once(self, key: str, message: str, *args: Any) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning(message + " (logged once)", *args)

    def _start(self) -> bool:
        if self._open:
            return True
        if self._no_library or self._init_failed:
            return False
        try:
            # Imported here, as the provider does, so tests can substitute the module.
            nvml = importlib.import_module("pynvml")
        except ImportError as exc:
            self._no_library = True
            self._warn_once("import", "GPU utilisation of jobs is not measured: pynvml cannot be imported: %s", exc)
            return False
        error = getattr(nvml, "NVMLError", None)
        if not (isinstance(error, type) and issubclass(error, BaseException)):
            self._no_library = True
            self._warn_once("import", "GPU utilisation of jobs is not measured: the pynvml module has no NVMLError")
            return False
        try:
            nvml.nvmlInit()
        except Exception as exc:
            self._init_failed = True
            self._warn_once("init", "GPU utilisation of jobs is not measured: NVML could not be initialised: %s", exc)
            return False
        self._nvml, self._error, self._open = nvml, error, True
        return True

    def sample(self, devices: list[str]) -> int | None:
        """The sum of the devices' utilisation in thousandths of a GPU, or None when it cannot be read."""
        if not devices or not self._start():
            return None
        total = 0
        for dev in devices:
            try:
                util = self._nvml.nvmlDeviceGetUtilizationRates(self._nvml.nvmlDeviceGetHandleByIndex(int(dev))).gpu
            except Exception as exc:  # an NVMLError, or a library that is not what it claims to be
                self._warn_once(f"device {dev}", "GPU %s: utilisation cannot be read through NVML, so jobs on it "
                                "are not measured: %s", dev, exc)
                return None
            if isinstance(util, bool) or not isinstance(util, int) or not 0 <= util <= 100:
                self._warn_once(f"value {dev}", "GPU %s: NVML reported a utilisation that is not a percentage: %r",
                                dev, util)
                return None
            total += util * 10
        return total

    def close(self) -> None:
        """Shut NVML down (no job holds a GPU any more); the next sample starts it again."""
        self._init_failed = False
        if not self._open:
            return
        self._open = False
        try:
            self._nvml.nvmlShutdown()
        except Exception as exc:
            self._warn_once("shutdown", "NVML could not be shut down: %s", exc)


class JobMeters:
    """The providers that can tell one job's use of their resource (``job_usage``), asked at every
    usage report. A provider that raises or answers something other than a whole non-negative
    number gives no figure for that tick (logged once per provider): a broken plugin must neither
    stop the report nor put a made-up number into a job's accounting."""

    def __init__(self, providers: list[Any]) -> None:
        from xce.providers.base import ResourceProvider

        # Only those that override the default (which answers None for every job).
        self.providers = [p for p in providers if callable(getattr(p, "job_usage", None))
                          and getattr(type(p), "job_usage", None) is not ResourceProvider.job_usage]
        self._logged: set[str] = set()

    def measure(self, jobid: int, pids: list[int], devices: list[str]) -> dict[str, int]:
        if not self.providers:
            return {}
        from xce.providers.base import JobView

        view = JobView(jobid, tuple(pids), tuple(devices))
        out: dict[str, int] = {}
        for p in self.providers:
            name = p.resource_name
            try:
                value = p.job_usage(view)
            except Exception as exc:
                self._warn_once(name, "provider %s failed to measure a job's %s (no figure sent): %s", p, name, exc)
                continue
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                self._warn_once(name, "provider %s measured %r for a job's %s; expected a whole number >= 0 "
                                "(no figure sent)", p, value, name)
                continue
            out[name] = value
        return out

    def _warn_once(self, key: str, message: str, *args: Any) -> None:
        if key not in self._logged:
            self._logged.add(key)
            log.warning(message + " (logged once)", *args)
