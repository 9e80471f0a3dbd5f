"""Group commit for submissions: the submissions that arrive while a commit is being written share
the next one.

Every answer to ``POST /v1/jobs`` is sent only after the job is committed, and on PostgreSQL a
commit waits for the write-ahead log to reach the disk (one fsync, a few milliseconds). One commit
per submission therefore caps a controller at a few hundred submissions per second however many
clients submit at once. Here a submission is validated and given its job ids in its own request
(a refusal is answered at once and never joins a group), then queued; one task writes everything
queued in one transaction and answers each request after that commit. Idempotency-Keys are
claimed there too, one statement for the whole group (a retry of a submission already committed
gets the first's answer; see ``submission._claim_keys``). While it writes, the event loop is busy, so the next requests wait in
their sockets and form the next group: one client alone sees no added delay, many clients share
fsyncs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from xce.controller.jobs import submission
from xce.controller.service import Controller

#: Most submissions one transaction takes (a bound on one commit's size and on its latency).
MAX_GROUP = 256


class GroupCommitter:
    def __init__(self, ctl: Controller) -> None:
        self.ctl = ctl
        self._queue: list[tuple[dict[str, Any], asyncio.Future]] = []
        self._keys: dict[tuple[str, str], asyncio.Future] = {}
        self._task: asyncio.Task | None = None
        self.groups = 0  # commits written, for tests and metrics
        self.largest = 0

    async def submit(self, user: str, req: Any, key: str | None = None) -> dict[str, Any]:
        """What ``POST /v1/jobs`` answers; ``key`` is the client's Idempotency-Key (see
        :func:`xce.controller.jobs.submission.submit`)."""
        if key is not None:
            same = self._keys.get((user, key))
            if same is not None:  # the same request again while the first waits for its commit
                return dict(await asyncio.shield(same), duplicate=True)
        prepared = submission.prepare(self.ctl, user, req, key)
        fut = asyncio.get_running_loop().create_future()
        if key is not None:
            self._keys[(user, key)] = fut
            fut.add_done_callback(lambda _: self._keys.pop((user, key), None))
        self._queue.append((prepared, fut))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain())
        return dict(await fut)  # a copy: a retry waiting on the same future reads the original

    async def _drain(self) -> None:
        while self._queue:
            # One turn of the loop: requests whose bodies were already read join this group.
            await asyncio.sleep(0)
            group, self._queue = self._queue[:MAX_GROUP], self._queue[MAX_GROUP:]
            try:
                results = submission.commit(self.ctl, [p for p, _ in group])
            except BaseException as exc:
                # The transaction rolled back and the controller reloaded its counters from the store,
                # so the job ids of everything still queued may be handed out again: all of it fails
                # alike (the clients see an error and submit again).
                group, self._queue = group + self._queue, []
                for _, fut in group:
                    if not fut.done():
                        fut.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
                continue
            self.groups += 1
            self.largest = max(self.largest, len(group))
            if self.ctl.metrics is not None:
                self.ctl.metrics.submit_commits.inc()
            for (_, fut), res in zip(group, results, strict=True):
                if not fut.done():
                    fut.set_result(res)
