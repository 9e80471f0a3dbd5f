"""The controller's authoritative state and the single place it changes.

Concurrency model: the controller is one process running one asyncio event loop, and every
read and write of the store happens on that loop's thread, synchronously, inside
:meth:`Controller.tx`. There is therefore exactly one writer and transactions never
interleave, which buys three properties cheaply:

* the event log's ``seq`` order is commit order, so a scheduler reading ``after=S`` can never
  miss a row that commits later with a smaller seq;
* ids (jobs, seqs, actions) are handed out from in-memory counters, so an array of N jobs is one
  bulk insert with its ids known before the statement runs;
* a full state sync is consistent without any locking.

Store calls are short (one indexed statement, or one bulk insert); the waiting endpoints (long
polls) await :class:`Signal` and hold no transaction. Everything a transaction produces beyond the
job rows themselves (history, events, worker actions) is buffered and written with one
``executemany`` per table just before the commit; long-polls are woken only after the commit.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import logging
import os
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import sqlalchemy as sa

from xce.config.convert import to_sched_config
from xce.config.loader import load_config
from xce.config.schema import ClusterConfig
from xce.controller import accounting, statedir, states
from xce.controller.errors import Conflict, NotFound
from xce.controller.store import engine as store_engine
from xce.controller.store import migrate
from xce.controller.token_store import TokenStore
from xce.controller.store.schema import actions, control, events, hosts, job_accounting, job_history, jobs, meta

log = logging.getLogger("xce.controller")

#: Largest number of jobs one JOBS_PUSH event carries; bigger arrays become several events, so
#: that one feed page stays a reasonable size.
JOBS_PER_PUSH = 1000


def dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


@dataclass
class Settings:
    state_dir: Path
    db: str | None = None
    config_path: Path | None = None
    worker_timeout: float = 30.0
    #: Events kept in the log; older ones are pruned (a scheduler that far behind resyncs).
    event_retention: int = 200_000
    #: How long applied decision ids are remembered for idempotency.
    decision_retention_s: float = 24 * 3600.0
    host: str = "127.0.0.1"
    port: int = 0
    #: A personal cluster's owner: every job runs as this user, so only they (and the admin token)
    #: are served. None: a multi-user cluster.
    single_user: str | None = None


class Signal:
    """Wakes every coroutine waiting for "something new was committed" (a long-poll)."""

    def __init__(self) -> None:
        self._fut: asyncio.Future | None = None

    def fire(self) -> None:
        fut, self._fut = self._fut, None
        if fut is not None and not fut.done():
            fut.set_result(None)

    async def wait(self, timeout: float) -> None:
        if timeout <= 0:
            return
        if self._fut is None:
            self._fut = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._fut), timeout)
        except (TimeoutError, asyncio.TimeoutError):
            pass


@dataclass
class HostLive:
    """A registered host as the controller holds it in memory (mirrors the ``hosts`` row)."""

    name: str
    status: str
    resources: dict[str, Any]
    load: dict[str, Any]
    registered: int
    last_seen_ns: int
    #: Monotonic time of the last report; liveness uses it so a wall-clock jump cannot kill hosts.
    seen_mono: float = field(default_factory=time.monotonic)


class Controller:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.state_dir = settings.state_dir
        self.engine: sa.engine.Engine | None = None
        self.conn: sa.engine.Connection | None = None
        self.config: ClusterConfig = ClusterConfig()
        self.sched_config_json: dict[str, Any] = {}
        self.tokens = TokenStore()
        self.hosts: dict[str, HostLive] = {}
        self.counts: Counter[tuple[str, str]] = Counter()  # (queue, state) -> jobs
        self.events_signal = Signal()
        self.control_signal = Signal()
        self.action_signals: dict[str, Signal] = {}
        self.sched_cursor = 0  # the last seq the scheduler asked to read after (for the lag metric)
        self.first_seq = 1
        self.next_job = self.next_seq = self.next_action = self.next_control = 1
        self.metrics = None  # set by the app (xce.controller.metrics.Metrics)
        self._lock_fd: int | None = None
        self._in_tx = False
        self._buf_events: list[dict[str, Any]] = []
        self._buf_history: list[dict[str, Any]] = []
        self._buf_actions: list[dict[str, Any]] = []
        self._buf_accounting: list[dict[str, Any]] = []
        self._events_written = False
        self._wake_hosts: set[str] = set()
        self._wake_control = False

    # -- start and stop --------------------------------------------------------------------

    def open(self) -> None:
        """Take the state directory, bring the store to the current schema and reload state."""
        sd = statedir.ensure(self.state_dir)
        self._lock(sd)
        url = store_engine.normalize_url(self.settings.db, statedir.sqlite_path(sd))
        self.engine = store_engine.open_engine(url)
        migrate.upgrade(self.engine)
        self.conn = self.engine.connect()
        self._reload()
        with self.tx() as conn:
            self._apply_config(self._startup_config(), actor="controller start")
            self.tokens.ensure_service_tokens(conn, sd)

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self.engine is not None:
            self.engine.dispose()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _lock(self, sd: Path) -> None:
        fd = os.open(statedir.lock_path(sd), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            info = statedir.read_info(sd) or {}
            raise RuntimeError(
                f"another controller (pid {info.get('pid', '?')}) is using the state directory {sd}"
            ) from None
        self._lock_fd = fd

    def _startup_config(self) -> ClusterConfig:
        if self.settings.config_path is not None:
            return load_config(self.settings.config_path)
        stored = self.meta_get("config")
        return ClusterConfig.model_validate_json(stored) if stored else ClusterConfig()

    def _reload(self) -> None:
        """Counters, host table and job counts from the store (at start, and after a rollback)."""
        c = self.conn
        with self._begin():
            self.next_job = (c.execute(sa.select(sa.func.max(jobs.c.id))).scalar() or 0) + 1
            last_seq = c.execute(sa.select(sa.func.max(events.c.seq))).scalar() or 0
            self.next_seq = last_seq + 1
            self.first_seq = c.execute(sa.select(sa.func.min(events.c.seq))).scalar() or self.next_seq
            # Acknowledged actions are deleted, so the table's max can fall below ids a worker has
            # already seen; the counter itself is kept in meta (see _flush).
            self.next_action = max((c.execute(sa.select(sa.func.max(actions.c.id))).scalar() or 0) + 1,
                                   int(self.meta_get("next_action") or 1))
            self.next_control = (c.execute(sa.select(sa.func.max(control.c.seq))).scalar() or 0) + 1
            self.tokens.load(c)
            self.counts = Counter({
                (q, s): n for q, s, n in c.execute(
                    sa.select(jobs.c.queue, jobs.c.state, sa.func.count()).group_by(jobs.c.queue, jobs.c.state))
            })
            old = self.hosts
            self.hosts = {}
            for r in c.execute(sa.select(hosts)).mappings():
                live = HostLive(r["name"], r["status"], json.loads(r["resources"]), json.loads(r["load"]),
                                r["registered"], r["last_seen"])
                if r["name"] in old:  # keep the liveness clock across a rollback
                    live.seen_mono = old[r["name"]].seen_mono
                self.hosts[r["name"]] = live

    # -- transactions ----------------------------------------------------------------------

    @contextmanager
    def _begin(self) -> Iterator[None]:
        assert self.conn is not None
        if self.conn.in_transaction():
            yield
            return
        with self.conn.begin():
            yield

    @contextmanager
    def tx(self) -> Iterator[sa.engine.Connection]:
        """One transaction; nested calls join the outer one. Long-polls wake after the commit."""
        if self._in_tx:
            yield self.conn  # type: ignore[misc]
            return
        self._in_tx = True
        try:
            with self._begin():
                yield self.conn  # type: ignore[misc]
                self._flush()
        except BaseException:
            self._buf_events, self._buf_history, self._buf_actions = [], [], []
            self._buf_accounting = []
            self._wake_hosts, self._wake_control, self._events_written = set(), False, False
            self._in_tx = False
            self._reload()
            raise
        self._in_tx = False
        if self._events_written:
            self._events_written = False
            self.events_signal.fire()
        for h in self._wake_hosts:
            sig = self.action_signals.get(h)
            if sig is not None:
                sig.fire()
        self._wake_hosts = set()
        if self._wake_control:
            self._wake_control = False
            self.control_signal.fire()

    def _flush(self) -> None:
        c = self.conn
        if self._buf_history:
            c.execute(job_history.insert(), self._buf_history)
            self._buf_history = []
        if self._buf_accounting:
            c.execute(job_accounting.insert(), self._buf_accounting)
            self._buf_accounting = []
        if self._buf_actions:
            c.execute(actions.insert(), self._buf_actions)
            self._buf_actions = []
            self.meta_set("next_action", str(self.next_action))
        if self._buf_events:
            c.execute(events.insert(), self._buf_events)
            self._buf_events = []
            self._events_written = True

    # -- what a transaction can do -----------------------------------------------------------

    def publish(self, type_: str, payload: dict[str, Any], ts: int | None = None) -> int:
        """Append one core event (``{"type", "ts", "payload"}``) to the scheduler's feed."""
        assert self._in_tx, "publish outside a transaction"
        seq = self.next_seq
        self.next_seq += 1
        self._buf_events.append({"seq": seq, "ts": ts or time.time_ns(), "type": type_, "payload": dumps(payload)})
        return seq

    def history(self, jobid: int, from_state: str | None, to_state: str, reason: str, actor: str, ts: int) -> None:
        self._buf_history.append({"jobid": jobid, "ts": ts, "from_state": from_state, "to_state": to_state,
                                  "reason": reason, "actor": actor})

    def enqueue(self, host: str, jobid: int, kind: str, payload: dict[str, Any]) -> int:
        """Queue a worker action; the host's long-poll wakes after the commit."""
        aid = self.next_action
        self.next_action += 1
        self._buf_actions.append({"id": aid, "host": host, "jobid": jobid, "kind": kind,
                                  "payload": dumps(payload), "created": time.time_ns(), "delivered": None})
        self._wake_hosts.add(host)
        return aid

    def wake_control(self) -> None:
        self._wake_control = True

    def move(self, job: dict[str, Any], verb: str, reason: str, actor: str, **changes: Any) -> str:
        """Take ``job`` (a row dict, updated in place) through ``verb`` of the state table."""
        old = job["state"]
        new = states.target(job["id"], old, verb)
        now = time.time_ns()
        values = {"state": new, "reason": reason, **changes}
        if new in (states.DONE, states.EXIT) and "end_time" not in values:
            values["end_time"] = now
        self.conn.execute(jobs.update().where(jobs.c.id == job["id"]).values(**values))
        self.history(job["id"], old, new, reason, actor, now)
        self.publish("JOB_STATE_CHANGE", {"jobid": job["id"], "state": new, "reason": reason}, ts=now)
        self.counts[(job["queue"], old)] -= 1
        self.counts[(job["queue"], new)] += 1
        job.update(values)
        if new in (states.DONE, states.EXIT):
            # Every way a job ends goes through here, so this is where its accounting record is
            # written: finished, failed, killed, lost alike.
            self._buf_accounting.extend(accounting.rows(job, self.config.resource_names))
        if self.metrics is not None:
            self.metrics.transitions.labels(verb).inc()
        return new

    def alloc_jobids(self, n: int) -> int:
        first = self.next_job
        self.next_job += n
        return first

    def alloc_control_seq(self) -> int:
        seq = self.next_control
        self.next_control += 1
        return seq

    # -- reading ---------------------------------------------------------------------------

    def job(self, jobid: int) -> dict[str, Any]:
        with self._begin():
            row = self.conn.execute(sa.select(jobs).where(jobs.c.id == jobid)).mappings().first()
        if row is None:
            raise NotFound(f"job {jobid} does not exist")
        return dict(row)

    def jobs_by_id(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        uniq = sorted(set(ids))
        with self._begin():
            for i in range(0, len(uniq), 500):
                chunk = uniq[i:i + 500]
                for row in self.conn.execute(sa.select(jobs).where(jobs.c.id.in_(chunk))).mappings():
                    out[row["id"]] = dict(row)
        return out

    def meta_get(self, key: str) -> str | None:
        with self._begin():
            return self.conn.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar()

    def meta_set(self, key: str, value: str) -> None:
        assert self._in_tx
        if self.conn.execute(sa.update(meta).where(meta.c.key == key).values(value=value)).rowcount == 0:
            self.conn.execute(sa.insert(meta).values(key=key, value=value))

    @property
    def last_seq(self) -> int:
        return self.next_seq - 1

    # -- configuration -----------------------------------------------------------------------

    def _apply_config(self, cfg: ClusterConfig, actor: str) -> bool:
        """Make ``cfg`` current; publish CONFIG_PUSH when it differs from the stored one."""
        text = cfg.model_dump_json()
        self.config = cfg
        self.sched_config_json = to_sched_config(cfg).to_json()
        if self.meta_get("config") == text:
            return False
        self.meta_set("config", text)
        self.publish("CONFIG_PUSH", self.sched_config_json)
        log.info("configuration applied (%s)", actor)
        return True

    def reconfig(self, actor: str) -> dict[str, Any]:
        """Reload the ``--config`` file. An invalid file raises ConfigError and changes nothing."""
        path = self.settings.config_path
        if path is None:
            raise Conflict("the controller was started without --config: there is no file to reload")
        cfg = load_config(path)
        with self.tx():
            changed = self._apply_config(cfg, actor)
            if changed:
                # Hosts' slots may come from [hosts.NAME] overrides: re-announce them.
                if self.hosts:
                    self.publish("WORKERS_PUSH", self.workers_payload(sorted(self.hosts)))
        return {"changed": changed, "config_file": str(path), "queues": sorted(cfg.queues)}

    def host_values(self, h: HostLive) -> dict[str, Any]:
        """Static values the scheduler sees: what the worker reported, with config overrides."""
        values = dict(h.resources)
        override = self.config.hosts.get(h.name)
        if override is not None and override.slots is not None:
            values["slots"] = override.slots
        return dict(sorted(values.items()))

    def workers_payload(self, names: list[str]) -> dict[str, Any]:
        specs = [{"name": n, "status": self.hosts[n].status, "values": self.host_values(self.hosts[n])}
                 for n in names]
        return {"nworkers": len(specs), "workers": specs}
