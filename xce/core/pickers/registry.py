"""Job picker plugins by name (entry point group ``xce.pickers``); see ``xce.core.plugin_registry``."""

from __future__ import annotations

from xce.core.plugin_registry import PluginError, Registry



def _fcfs():
    from xce.core.pickers.fcfs import FcfsPicker

    return FcfsPicker


def _strict():
    from xce.core.pickers.strict_fcfs import StrictFcfsPicker

    return StrictFcfsPicker


def _backfill():
    from xce.core.pickers.easy_backfill import EasyBackfillPicker

    return EasyBackfillPicker


def _backfill_shadow():
    from xce.core.pickers.easy_backfill import EasyShadowPicker

    return EasyShadowPicker


def _sjbf():
    from xce.core.pickers.easy_sjbf import EasySjbfPicker

    return EasySjbfPicker


def _easy_pp():
    from xce.core.pickers.easy_plus_plus import EasyPlusPlusPicker

    return EasyPlusPlusPicker


def _aged_sjf():
    from xce.core.pickers.aged_sjf import AgedSjfPicker

    return AgedSjfPicker


def _fairshare():
    from xce.core.pickers.fairshare import FairsharePicker

    return FairsharePicker


_registry = Registry("picker plugin", "job_pick_plugin", {
    "builtin_fcfs": _fcfs, "strict_fcfs": _strict, "easy_backfill": _backfill, "fairshare": _fairshare,
    "easy_backfill_shadow": _backfill_shadow, "easy_sjbf": _sjbf, "easy_pp": _easy_pp,
    "easy_aged_sjf": _aged_sjf})

register = _registry.register
unregister = _registry.unregister
available = _registry.available
create = _registry.create

__all__ = ["PluginError", "available", "create", "register", "unregister"]
