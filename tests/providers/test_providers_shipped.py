"""The shipped providers report what the OS reports, computed here independently."""

import ctypes
import os
import shutil
import subprocess
import sys
import types

import pytest

from xce.providers import (
    CpuMilliProvider,
    GpuProvider,
    MemoryBytesProvider,
    ProviderManager,
    default_manager,
)


def _memtotal_bytes_independently():
    with open("/proc/meminfo") as fh:
        text = fh.read()
    for line in text.splitlines():
        if line.startswith("MemTotal:"):
            number, unit = line[len("MemTotal:"):].split()
            assert unit == "kB"
            return int(number) * 1024
    raise AssertionError("no MemTotal")


def _nvidia_driver_present():
    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def test_cpu_milli_is_the_affinity_count_times_1000():
    expected = len(os.sched_getaffinity(0)) * 1000
    p = CpuMilliProvider()
    assert p.resource_name == "xce.io/cpu-milli"
    assert p.is_available() is True
    assert p.capacity() == expected


def test_cpu_milli_follows_the_affinity_mask_not_the_core_count(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3})
    assert CpuMilliProvider().capacity() == 2000


def test_cpu_milli_is_cached(monkeypatch):
    p = CpuMilliProvider()
    first = p.capacity()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert p.capacity() == first


def test_memory_bytes_is_memtotal():
    p = MemoryBytesProvider()
    assert p.resource_name == "xce.io/memory-bytes"
    assert p.is_available() is True
    assert p.capacity() == _memtotal_bytes_independently()


def test_memory_unreadable_meminfo_is_unavailable_not_zero(tmp_path):
    p = MemoryBytesProvider(meminfo_path=str(tmp_path / "missing"))
    assert p.is_available() is False
    assert "cannot read MemTotal" in p.unavailable_reason
    m = ProviderManager()
    m.register(p)
    assert "xce.io/memory-bytes" not in m.advertised()


@pytest.mark.parametrize(
    "content",
    ["MemFree: 10 kB\n", "MemTotal: lots kB\n", "MemTotal: 10 MB\n", "MemTotal:\n", ""],
)
def test_memory_unparsable_meminfo_is_unavailable(tmp_path, content):
    path = tmp_path / "meminfo"
    path.write_text(content)
    assert MemoryBytesProvider(meminfo_path=str(path)).is_available() is False


def test_memory_parses_a_crafted_meminfo(tmp_path):
    path = tmp_path / "meminfo"
    path.write_text("MemFree:  1 kB\nMemTotal:       16318420 kB\nMemAvailable: 2 kB\n")
    assert MemoryBytesProvider(meminfo_path=str(path)).capacity() == 16318420 * 1024


def test_gpu_on_this_machine_matches_the_driver():
    p = GpuProvider()
    assert p.resource_name == "xce.io/gpu"
    m = ProviderManager()
    m.register(p)
    if not _nvidia_driver_present():
        assert p.is_available() is False
        assert p.unavailable_reason
        assert p.visible_devices() == []
        assert "xce.io/gpu" not in m.advertised()
        return
    if shutil.which("nvidia-smi") is None:
        pytest.skip("NVIDIA driver present but no nvidia-smi to count GPUs independently")
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, check=True).stdout
    count = sum(1 for line in listed.splitlines() if line.startswith("GPU "))
    assert m.advertised()["xce.io/gpu"] == count
    assert p.visible_devices() == [str(i) for i in range(count)]


def _fake_pynvml(count=2, init_error=False, count_error=False, name=b"NVIDIA A100-SXM4-40GB"):
    calls = []
    mod = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    def nvmlInit():
        calls.append("init")
        if init_error:
            raise NVMLError("Driver Not Loaded")

    def nvmlDeviceGetCount():
        calls.append("count")
        if count_error:
            raise NVMLError("Unknown Error")
        return count

    def nvmlShutdown():
        calls.append("shutdown")

    def nvmlDeviceGetHandleByIndex(i):
        return ("handle", i)

    def nvmlDeviceGetName(handle):
        calls.append("name")
        return name

    mod.NVMLError = NVMLError
    mod.nvmlInit = nvmlInit
    mod.nvmlDeviceGetCount = nvmlDeviceGetCount
    mod.nvmlShutdown = nvmlShutdown
    mod.nvmlDeviceGetHandleByIndex = nvmlDeviceGetHandleByIndex
    mod.nvmlDeviceGetName = nvmlDeviceGetName
    mod.calls = calls
    return mod


def test_gpu_counts_through_nvml(monkeypatch):
    fake = _fake_pynvml(count=2)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    p = GpuProvider()
    assert p.is_available() is True
    assert p.capacity() == 2
    assert p.visible_devices() == ["0", "1"]
    assert p.model == "a100-sxm4-40gb"  # as Slurm's NVML autodetection names the type
    assert fake.calls == ["init", "count", "name", "shutdown"]  # measured once, NVML released
    m = ProviderManager()
    m.register(p)
    assert m.advertised()["xce.io/gpu"] == 2
    assert fake.calls == ["init", "count", "name", "shutdown"]


def test_fake_gpus_advertise_a_model_and_devices_without_nvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML at all: the fake provider never asks
    from xce.providers.gpu import FakeGpuProvider, parse_fake_gpus
    from xce.providers.manager import default_manager

    assert parse_fake_gpus("a100:4") == ("a100", 4) and parse_fake_gpus("2") == ("fake", 2)
    for bad in ("a100", "a100:x", ":", "a b:2"):
        with pytest.raises(ValueError, match="expected MODEL:COUNT"):
            parse_fake_gpus(bad)
    manager, _ = default_manager(load_entry_points=False, fake_gpus=("v100", 3))
    gpu = manager.get("xce.io/gpu")
    assert isinstance(gpu, FakeGpuProvider) and gpu.model == "v100"
    assert manager.advertised()["xce.io/gpu"] == 3 and gpu.visible_devices() == ["0", "1", "2"]


def test_gpu_driver_with_zero_devices_is_zero_not_hidden(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(count=0))
    m = ProviderManager()
    m.register(GpuProvider())
    assert m.advertised()["xce.io/gpu"] == 0


def test_gpu_nvml_init_failure_is_unavailable(monkeypatch):
    fake = _fake_pynvml(init_error=True)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    p = GpuProvider()
    assert p.is_available() is False
    assert "Driver Not Loaded" in p.unavailable_reason
    assert fake.calls == ["init"]


def test_gpu_count_failure_still_shuts_nvml_down(monkeypatch):
    fake = _fake_pynvml(count_error=True)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert GpuProvider().is_available() is False
    assert fake.calls == ["init", "count", "shutdown"]


def test_gpu_without_the_library_is_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    p = GpuProvider()
    assert p.is_available() is False
    assert "cannot be imported" in p.unavailable_reason
    assert p.visible_devices() == []


def test_default_manager_advertises_the_shipped_figures(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)
    m, errors = default_manager(load_entry_points=False)
    assert errors == []
    assert m.names() == ["xce.io/cpu-milli", "xce.io/gpu", "xce.io/memory-bytes"]
    assert m.advertised() == {
        "xce.io/cpu-milli": len(os.sched_getaffinity(0)) * 1000,
        "xce.io/memory-bytes": _memtotal_bytes_independently(),
    }
