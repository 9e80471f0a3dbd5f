"""GPUs for workers on a machine that has none: a stand-in ``pynvml`` module the worker's GPU provider
(:mod:`xce.providers.gpu`) imports instead of nvidia-ml-py.

It answers NVML's calls with the devices listed in a JSON file (``{"util": [percent, ...],
"name": "..."}``) named by ``$XCE_FAKE_NVML``; everything else (the provider, the hand-out of
devices to jobs, ``CUDA_VISIBLE_DEVICES``) is the real code. :func:`environment` writes both
files and returns the variables a worker needs to find them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FAKE_PYNVML = '''\
"""A stand-in for nvidia-ml-py: devices from the JSON file in $XCE_FAKE_NVML."""
import json
import os
import types


class NVMLError(Exception):
    pass


def _devices():
    with open(os.environ["XCE_FAKE_NVML"]) as f:
        return json.load(f)


def nvmlInit():
    if not os.environ.get("XCE_FAKE_NVML"):
        raise NVMLError("Driver Not Loaded")


def nvmlShutdown():
    pass


def nvmlDeviceGetCount():
    return len(_devices()["util"])


def nvmlDeviceGetHandleByIndex(index):
    if not 0 <= index < nvmlDeviceGetCount():
        raise NVMLError("Invalid Argument")
    return index


def nvmlDeviceGetName(handle):
    return _devices().get("name", "NVIDIA A100-SXM4-40GB")


def nvmlDeviceGetUtilizationRates(handle):
    return types.SimpleNamespace(gpu=_devices()["util"][handle], memory=0)
'''


def environment(directory: Path, count: int, name: str = "NVIDIA A100-SXM4-40GB",
                util: list[int] | None = None) -> dict[str, str]:
    """Write the stand-in and a file of ``count`` devices into ``directory`` (readable by all), each
    as busy as ``util`` says (percent; idle by default); the variables that make a worker started
    with them see those devices."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "pynvml.py").write_text(FAKE_PYNVML)
    (directory / "devices.json").write_text(json.dumps({"util": util or [0] * count, "name": name}))
    for p in (directory, directory / "pynvml.py", directory / "devices.json"):
        p.chmod(0o755 if p.is_dir() else 0o644)
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(directory), os.environ.get("PYTHONPATH")])),
            "XCE_FAKE_NVML": str(directory / "devices.json")}
