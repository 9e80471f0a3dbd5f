"""A worker's stimuli, one JSON line per event fed to its :class:`~xce.worker.state.WorkerState`.

Every decision of a worker is a function of these lines alone, so a recording of a live worker
replays, without its processes or its controller, to the very instructions it gave: a misbehaving
worker's recording reproduces the misbehaviour.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import fields
from typing import Any

from xce.protocol import actions
from xce.worker import state

_EVENTS = {cls.__name__: cls for cls in state.EVENTS}


def dumps(event: Any) -> str:
    body = {f.name: _plain(getattr(event, f.name)) for f in fields(event)}
    return json.dumps({"event": type(event).__name__, **body}, sort_keys=True)


def loads(line: str) -> Any:
    body = json.loads(line)
    cls = _EVENTS[body.pop("event")]
    if cls is state.ActionArrived:
        return cls(actions.decode(body["action"]))
    if cls is state.Restarted:
        return cls(tuple(state.Found(**dict(f, gpus=tuple(f["gpus"]))) for f in body["found"]), body["now"])
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in body.items()})


def replay(lines: Iterable[str]) -> list[list[Any]]:
    """The instructions a fresh worker state gives for each recorded event, in turn."""
    ws = state.WorkerState()
    return [ws.handle(loads(line)) for line in lines if line.strip()]


def _plain(value: Any) -> Any:
    if isinstance(value, actions.Action):
        return actions.encode(value)
    if isinstance(value, state.Found):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value
