"""Job picker plugins by name (entry point group ``xce.pickers``); see ``xce.core.plugin_registry``.

The pickers never import this module (``builtin_fcfs`` makes a queue's own picker through its view),
so it imports them: there is no cycle to break with imports inside functions. Every picker the core,
a snapshot or a picker's view makes comes from :func:`make_picker`, checked against the contract
(``xce.core.pickers.hooks.check``) before anything uses it.
"""

from __future__ import annotations

from typing import Any

from xce.core.pickers.aged_sjf import AgedSjfPicker
from xce.core.pickers.easy_backfill import EasyBackfillPicker, EasyShadowPicker
from xce.core.pickers.easy_plus_plus import EasyPlusPlusPicker
from xce.core.pickers.easy_sjbf import EasySjbfPicker
from xce.core.pickers.fairshare import FairsharePicker
from xce.core.pickers.fcfs import FcfsPicker
from xce.core.pickers.hooks import check
from xce.core.pickers.strict_fcfs import StrictFcfsPicker
from xce.core.plugin_registry import PluginError, Registry

_registry = Registry("picker plugin", "job_pick_plugin", {
    "builtin_fcfs": FcfsPicker, "strict_fcfs": StrictFcfsPicker, "easy_backfill": EasyBackfillPicker,
    "fairshare": FairsharePicker, "easy_backfill_shadow": EasyShadowPicker, "easy_sjbf": EasySjbfPicker,
    "easy_pp": EasyPlusPlusPicker, "easy_aged_sjf": AgedSjfPicker})

register = _registry.register
unregister = _registry.unregister
available = _registry.available
create = _registry.create


def make_picker(name: str) -> Any:
    """The picker registered as ``name``, checked against the contract."""
    picker = create(name)
    check(name, picker)
    return picker


__all__ = ["PluginError", "available", "create", "make_picker", "register", "unregister"]
