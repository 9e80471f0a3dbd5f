"""Resource providers: how a worker learns, by measuring, what it may advertise.

The shipped providers (``xce.io/cpu-milli``, ``xce.io/memory-bytes``, ``xce.io/gpu``) are
ordinary providers registered first; nothing in the core treats their names specially.
Sites add their own through the ``xce.resource_providers`` entry point group (see
``docs/providers.md``).
"""

from xce.providers.base import JobView, ResourceProvider
from xce.providers.cpu import CPU_MILLI, CpuMilliProvider
from xce.providers.gpu import GPU, FakeGpuProvider, GpuProvider
from xce.providers.manager import ProviderError, ProviderManager, default_manager
from xce.providers.memory import MEMORY_BYTES, MemoryBytesProvider

__all__ = [
    "CPU_MILLI",
    "GPU",
    "MEMORY_BYTES",
    "CpuMilliProvider",
    "FakeGpuProvider",
    "GpuProvider",
    "MemoryBytesProvider",
    "ProviderError",
    "ProviderManager",
    "JobView",
    "ResourceProvider",
    "default_manager",
]
