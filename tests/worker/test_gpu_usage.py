"""GPU utilisation in a real worker agent's usage ticks, read from a substitute ``pynvml``.

The machine running the tests has no GPU, so the NVML module is a stand-in with a fixed
utilisation per device index; the agent, its jobs' processes and its reports are real (no
controller: the reports stay in its outbox).
"""

from __future__ import annotations

import logging
import sys
import types

import pytest

from xce.worker.agent import Agent
from xce.worker.usage import GPU_UTIL, GpuSampler

#: A different power of two per device, so any sum names the devices it came from.
UTIL = {0: 1, 1: 2, 2: 4, 3: 8, 4: 16}


def _fake_pynvml(util=UTIL, unsupported=(), init_error=False):
    calls: list = []
    mod = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    def nvmlInit():
        calls.append("init")
        if init_error:
            raise NVMLError("Driver Not Loaded")

    def nvmlShutdown():
        calls.append("shutdown")

    def nvmlDeviceGetHandleByIndex(index):
        calls.append(("handle", index))
        if index not in util:
            raise NVMLError("Invalid Argument")
        return ("device", index)

    def nvmlDeviceGetUtilizationRates(handle):
        if handle[1] in unsupported:
            raise NVMLError("Not Supported")
        return types.SimpleNamespace(gpu=util[handle[1]], memory=0)

    mod.NVMLError = NVMLError
    mod.nvmlInit = nvmlInit
    mod.nvmlShutdown = nvmlShutdown
    mod.nvmlDeviceGetHandleByIndex = nvmlDeviceGetHandleByIndex
    mod.nvmlDeviceGetUtilizationRates = nvmlDeviceGetUtilizationRates
    mod.calls = calls
    return mod


@pytest.fixture
def agent(tmp_path):
    a = Agent("http://127.0.0.1:9", "t", name="h1", job_state=tmp_path / "jobs", run_as_self=True)
    yield a
    for jp in list(a.jobs.values()):
        jp.kill_now("test over")
        if jp.popen:
            jp.popen.wait()


def _start(a: Agent, jobid: int, cwd, gpus: int) -> None:
    a._start({"jobid": jobid, "user": "x", "tasks": 1, "command": ["sleep", "60"], "cwd": str(cwd),
              "requests": {"xce.io/gpu": gpus} if gpus else {}, "placement": [["h1", 1]]})
    assert jobid in a.jobs, "the job did not start"


def _drain(a: Agent) -> list:
    out = []
    while not a.outbox.empty():
        out.append(a.outbox.get_nowait())
    return out


def _ticks(a: Agent) -> dict[str, dict[str, int]]:
    """The usage of the next report, as it would be posted."""
    _drain(a)
    a._report()
    (body,) = [body for kind, _, body, _ in _drain(a) if kind == "load"]
    return body["usage"]


def test_a_job_reports_the_sum_over_exactly_its_own_devices(monkeypatch, agent, tmp_path):
    fake = _fake_pynvml()
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    agent.gpu_ids = ["1", "3", "4"]
    _start(agent, 1, tmp_path, 2)   # devices 1 and 3
    _start(agent, 2, tmp_path, 1)   # device 4
    _start(agent, 3, tmp_path, 0)   # no GPU
    assert agent.jobs[1].gpus == ["1", "3"] and agent.jobs[2].gpus == ["4"]

    ticks = _ticks(agent)
    assert ticks["1"][GPU_UTIL] == (2 + 8) * 10      # devices 1 and 3, in thousandths of a GPU
    assert ticks["2"][GPU_UTIL] == 16 * 10
    assert GPU_UTIL not in ticks["3"] and "memory_rss" in ticks["3"]
    # Only the devices jobs hold were asked about; NVML was opened once and stays open between reports.
    assert {c[1] for c in fake.calls if isinstance(c, tuple)} == {1, 3, 4}
    assert _ticks(agent)["1"][GPU_UTIL] == 100
    assert fake.calls.count("init") == 1 and "shutdown" not in fake.calls

    # The GPU jobs end: the next report shuts NVML down; a new GPU job opens it again.
    for j in (1, 2):
        agent.jobs[j].kill_now("test")
        agent.jobs[j].popen.wait()
        agent.jobs.pop(j)
    assert GPU_UTIL not in _ticks(agent)["3"]
    assert fake.calls.count("shutdown") == 1
    _start(agent, 4, tmp_path, 1)
    assert _ticks(agent)["4"][GPU_UTIL] == 20   # device 1, the lowest free one
    assert fake.calls.count("init") == 2


def test_a_failing_nvml_call_gives_no_figure_and_no_exception(monkeypatch, agent, tmp_path, caplog):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(unsupported={3}))
    agent.gpu_ids = ["1", "3", "4"]
    _start(agent, 1, tmp_path, 2)   # devices 1 and 3: device 3 cannot say
    _start(agent, 2, tmp_path, 1)   # device 4 can
    with caplog.at_level(logging.WARNING, logger="xce.worker"):
        for _ in range(3):
            ticks = _ticks(agent)
            # Not the sum over the devices that answered, which would understate; not a made-up 0.
            assert GPU_UTIL not in ticks["1"] and ticks["1"]["memory_rss"] > 0
            assert ticks["2"][GPU_UTIL] == 160
    warned = [r.getMessage() for r in caplog.records if "GPU 3" in r.getMessage()]
    assert len(warned) == 1 and "Not Supported" in warned[0], warned


@pytest.mark.parametrize("nvml", [None, "init_error", "not_nvml"])
def test_no_nvml_gives_no_figure(monkeypatch, agent, tmp_path, caplog, nvml):
    if nvml is None:
        module = None  # `import pynvml` raises ImportError
    elif nvml == "init_error":
        module = _fake_pynvml(init_error=True)
    else:
        module = types.ModuleType("pynvml")  # something else called pynvml
    monkeypatch.setitem(sys.modules, "pynvml", module)
    agent.gpu_ids = ["0"]
    _start(agent, 1, tmp_path, 1)
    with caplog.at_level(logging.WARNING, logger="xce.worker"):
        for _ in range(2):
            ticks = _ticks(agent)
            assert GPU_UTIL not in ticks["1"] and "cpu_ms" in ticks["1"]
    warned = [r.getMessage() for r in caplog.records if "GPU utilisation of jobs is not measured" in r.getMessage()]
    assert len(warned) == 1, warned


def test_sampler_refuses_values_that_are_not_percentages(monkeypatch, caplog):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(util={0: 50, 1: 101}))
    s = GpuSampler()
    assert s.sample(["0"]) == 500
    with caplog.at_level(logging.WARNING, logger="xce.worker"):
        assert s.sample(["0", "1"]) is None
    assert any("not a percentage" in r.getMessage() for r in caplog.records)
    assert s.sample([]) is None
    s.close()
