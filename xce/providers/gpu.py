"""``xce.io/gpu``: NVIDIA GPUs counted through NVML (``pynvml`` from nvidia-ml-py).

NVML is the driver's own account of the devices, so it is a measurement, not a claim.  When
the library or the driver is missing the resource is hidden (``is_available()`` is False)
rather than advertised as 0: "no driver here" and "measured, no GPUs" are different facts,
and only the second one is a number.  A driver that answers with a count of 0 is the
second case and is advertised as 0.

The count is taken once and NVML is shut down straight away: a worker holding NVML open for
its lifetime keeps a driver handle the jobs it starts do not need.
"""

from __future__ import annotations

import importlib
import re

from xce.providers.base import ResourceProvider

__all__ = ["GPU", "FakeGpuProvider", "GpuProvider", "model_name", "parse_fake_gpus"]

GPU = "xce.io/gpu"
#: A GPU model as jobs name it (``--gres=gpu:MODEL:N``): one word.
_MODEL = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")


class GpuProvider(ResourceProvider):
    resource_name = GPU

    def __init__(self) -> None:
        self._count: int | None = None
        self._measured = False
        self.unavailable_reason: str | None = None
        #: The devices' model as jobs name it (:func:`model_name` of NVML's name for device 0), or None.
        self.model: str | None = None

    def _measure(self) -> int | None:
        if self._measured:
            return self._count
        self._measured = True
        try:
            # Imported here, not at module level, so a host without nvidia-ml-py still gets
            # its CPU and memory providers, and so tests can substitute the module.
            pynvml = importlib.import_module("pynvml")
        except ImportError as exc:
            self.unavailable_reason = f"pynvml (nvidia-ml-py) cannot be imported: {exc}"
            return None
        nvml_error = getattr(pynvml, "NVMLError", None)
        if not (isinstance(nvml_error, type) and issubclass(nvml_error, BaseException)):
            self.unavailable_reason = "the imported pynvml module has no NVMLError: not nvidia-ml-py"
            return None
        try:
            pynvml.nvmlInit()
        except nvml_error as exc:
            self.unavailable_reason = f"NVML could not be initialised (no NVIDIA driver?): {exc}"
            return None
        try:
            count = pynvml.nvmlDeviceGetCount()
            if isinstance(count, int) and count > 0:
                self.model = _device_model(pynvml, nvml_error)
        except nvml_error as exc:
            self.unavailable_reason = f"NVML could not count devices: {exc}"
            return None
        finally:
            try:
                pynvml.nvmlShutdown()
            except nvml_error:
                pass  # the count is already taken; a failed shutdown does not make it wrong
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            self.unavailable_reason = f"NVML reported a device count that is not a count: {count!r}"
            return None
        self._count = count
        return count

    def is_available(self) -> bool:
        return self._measure() is not None

    def capacity(self) -> int:
        count = self._measure()
        if count is None:
            raise RuntimeError(f"{GPU} is unavailable: {self.unavailable_reason}")
        return count

    def visible_devices(self) -> list[str]:
        """Device indexes as strings, ready to join into ``CUDA_VISIBLE_DEVICES``.

        These are NVML indexes, which follow PCI bus order; CUDA numbers devices fastest
        first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` is set, so whoever assigns these must
        set that too or a job may be handed a different card than the one accounted for.
        Empty when the resource is unavailable, since there is nothing to hand out.
        """
        count = self._measure()
        return [str(i) for i in range(count or 0)]


def model_name(device_name: str) -> str:
    """A device's name as a GPU model word, as Slurm's NVML autodetection names a GPU type: lower case,
    spaces as ``_``, without the vendor (``NVIDIA A100-SXM4-40GB`` is ``a100-sxm4-40gb``), any other
    character as ``_``. A site that wants shorter names gives ``gpu_model`` in ``xce.toml``."""
    words = device_name.strip().lower().split()
    if words and words[0] == "nvidia" and len(words) > 1:
        words = words[1:]
    # One word a job can write unquoted (``gpu_model == a100-sxm4-40gb``), whatever the driver says.
    return re.sub(r"[^a-z0-9._-]", "_", "_".join(words))[:64]


def _device_model(pynvml, nvml_error) -> str | None:
    """Device 0's model; a host's GPUs are taken to be one model (mixed hosts give it in xce.toml)."""
    try:
        name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
    except nvml_error:
        return None
    if isinstance(name, bytes):
        name = name.decode("utf-8", "replace")
    return model_name(name) if isinstance(name, str) and name.strip() else None


def parse_fake_gpus(spec: str) -> tuple[str, int]:
    """``MODEL:N`` (``a100:4``) or ``N`` (model ``fake``) -> (model, count); ValueError says what is wrong."""
    model, _, count = spec.strip().rpartition(":")
    model = model or "fake"
    if not count.isdigit() or not _MODEL.fullmatch(model):
        raise ValueError(f"fake GPUs {spec!r}: expected MODEL:COUNT (a100:4) or COUNT, the model a word of letters, "
                         f"digits, '_', '-' or '.'")
    return model, int(count)


class FakeGpuProvider(GpuProvider):
    """``xce.io/gpu`` for tests and sites without NVML: ``count`` devices of ``model`` that exist only in
    the accounts (``xce worker --fake-gpus a100:4``, or ``XCE_FAKE_GPUS``). Jobs are handed device
    indexes in ``CUDA_VISIBLE_DEVICES`` as with real ones, and two jobs never share one; nothing
    measures their use. It says so: it is a claim, not a measurement, and is meant for exactly the
    places where no measurement can be made."""

    def __init__(self, model: str, count: int) -> None:
        super().__init__()
        self._count, self._measured, self.model = count, True, model
