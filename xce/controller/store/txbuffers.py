"""What one transaction writes beyond the job rows, held until just before its commit.

A transaction that moves a thousand jobs writes a thousand history rows, events and perhaps actions
and accounting records; one ``executemany`` per table just before the commit costs a fraction of a
statement each. What must wait for the commit (waking long-polls, running hooks) is held here too,
so a rolled-back transaction forgets all of it at once (:meth:`TxBuffers.clear`).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from xce.controller.store import prepared
from xce.controller.store.schema import actions, events, job_accounting, job_history

_INSERT_HISTORY = prepared.Prepared(job_history.insert())
_INSERT_ACCOUNTING = prepared.Prepared(job_accounting.insert())
_INSERT_ACTIONS = prepared.Prepared(actions.insert())
_INSERT_EVENTS = prepared.Prepared(events.insert())


class TxBuffers:
    __slots__ = ("events", "history", "actions", "accounting", "hooks", "mail", "wake_hosts", "wake_control",
                 "events_written")

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] = []
        self.actions: list[dict[str, Any]] = []
        self.accounting: list[dict[str, Any]] = []
        #: Hook events: handed to the runner only once the transaction commits.
        self.hooks: list[tuple[dict[str, Any], tuple[str, ...]]] = []
        #: Job mail (xce.mail.messages.Mail): handed to the sender only once the transaction commits.
        self.mail: list[Any] = []
        #: Hosts whose action long-polls wake after the commit.
        self.wake_hosts: set[str] = set()
        self.wake_control = False
        #: Whether the commit wrote events (the scheduler's long-polls then wake).
        self.events_written = False

    def flush(self, conn: sa.engine.Connection) -> bool:
        """Write the rows, one statement per table; True when there were actions (whose id counter the
        caller then stores in the same transaction)."""
        wrote_actions = bool(self.actions)
        if self.history:
            _INSERT_HISTORY.executemany(conn, self.history)
            self.history = []
        if self.accounting:
            _INSERT_ACCOUNTING.executemany(conn, self.accounting)
            self.accounting = []
        if self.actions:
            _INSERT_ACTIONS.executemany(conn, self.actions)
            self.actions = []
        if self.events:
            _INSERT_EVENTS.executemany(conn, self.events)
            self.events = []
            self.events_written = True
        return wrote_actions
