"""Victim selection policies by name (entry point group ``xce.preempt_policies``); see
``xce.core.plugin_registry``."""

from __future__ import annotations

from xce.core.plugin_registry import PluginError, Registry
from xce.core.preempt.lowest_priority_first import LowestPriorityFirst
from xce.core.preempt.queue_priority_first import QueuePriorityFirst

_registry = Registry("preempt policy", "preempt_policy", {"lowest_priority_first": LowestPriorityFirst,
                                                          "queue_priority_first": QueuePriorityFirst})

register = _registry.register
unregister = _registry.unregister
available = _registry.available
create = _registry.create

__all__ = ["PluginError", "available", "create", "register", "unregister"]
