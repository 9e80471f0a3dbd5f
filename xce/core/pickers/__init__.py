"""Job picker plugins: the contract (``base``), the registry, and the builtins. The view of the core a
picker reads is ``xce.core.pickers.view.PickerView`` (not imported here: it needs the allocator, and
so numpy, which the registry's users at the edge, ``xce config check``, do without)."""

from xce.core.pickers.base import BasePicker, JobPicker
from xce.core.pickers.registry import PluginError, available, create, register

__all__ = ["BasePicker", "JobPicker", "PluginError", "available", "create", "register"]
