"""Job picker plugins by name (entry point group ``xce.pickers``); see ``xce.core.plugin_registry``."""

from __future__ import annotations

from xce.core.plugin_registry import PluginError, Registry



def _fcfs():
    from xce.core.pickers.fcfs import FcfsPicker

    return FcfsPicker


_registry = Registry("picker plugin", "job_pick_plugin", {"builtin_fcfs": _fcfs})

register = _registry.register
unregister = _registry.unregister
available = _registry.available
create = _registry.create

__all__ = ["PluginError", "available", "create", "register", "unregister"]
