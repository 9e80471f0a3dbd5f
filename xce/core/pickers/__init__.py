"""Job picker plugins: the contract (``base``), the registry, and ``builtin_fcfs``."""

from xce.core.pickers.base import BasePicker, JobPicker
from xce.core.pickers.registry import PluginError, available, create, register

__all__ = ["BasePicker", "JobPicker", "PluginError", "available", "create", "register"]
