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

Several controllers may share one PostgreSQL database; only the one holding the leadership lease
writes, and each of its transactions starts by proving it still holds it (the fence, see
:mod:`xce.controller.ha.leadership`), so the three properties hold across a takeover too: the new
leader reloads its counters from the database before its first write. The others are followers:
the API sends their callers to the leader (:mod:`xce.controller.ha.gate`).

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
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson
import sqlalchemy as sa

from xce import endcodes, hooks
from xce.client import statedir
from xce.config.convert import to_sched_config
from xce.config.loader import ConfigError, load_config
from xce.config.schema import ClusterConfig, host_traits
from xce.controller.auth.token_store import TokenStore
from xce.controller.errors import Conflict, NotFound
from xce.controller.ha import leadership
from xce.controller.ha.leadership import NotLeader
from xce.controller.hosts.slots import SlotTally
from xce.controller.hosts.table import HostLive, HostTable
from xce.controller.jobs import queues, states
from xce.controller.jobs.counts import JobCounts
from xce.controller.jobs.gatework import GateWork
from xce.controller.records import accounting, mail
from xce.controller.sched import wire
from xce.controller.sched.schedwatch import SchedulerWatch
from xce.controller.store import engine as store_engine, migrate, prepared
from xce.controller.store.schema import actions, control, events, jobs, meta
from xce.controller.store.txbuffers import TxBuffers
from xce.core import events as ev
from xce.core.specs import HostSpec, SchedConfig
from xce.mail.sender import MailSender
from xce.protocol.actions import Action, encode

log = logging.getLogger("xce.controller")

#: Largest number of jobs one JOBS_PUSH event carries; bigger arrays become several events, so
#: that one feed page stays a reasonable size.
JOBS_PER_PUSH = 1000

#: The moves that end a run on its hosts (as opposed to a person's kill).
RUN_ENDS = frozenset({"finish", "fail", "lose"})
# Every report and decision runs these (xce.controller.store.prepared): the columns an update sets
# are the keys of its parameters.
SELECT_JOB = prepared.Prepared(sa.select(jobs).where(jobs.c.id == sa.bindparam("jid")))
SELECT_JOBS = prepared.Prepared(sa.select(jobs).where(jobs.c.id.in_(sa.bindparam("ids", expanding=True))), "ids")
UPDATE_JOB = prepared.Prepared(jobs.update().where(jobs.c.id == sa.bindparam("jid")))
_UPDATE_META = prepared.Prepared(sa.update(meta).where(meta.c.key == sa.bindparam("k")))
#: What a job back in PEND forgets of its last run (its history keeps it).
FRESH_RUN: dict[str, Any] = {"placement": None, "head_host": None, "start_time": None, "end_time": None,
                             "exit_code": None, "exit_signal": None, "usage": None, "pend_reasons": None,
                             "pend_category": None, "requeue_by": None, "end_code": None}


def dumpb(obj: Any) -> bytes:
    """Compact JSON, as the store keeps it and the API answers it: orjson, about five times the speed
    of ``json`` on the payloads every job stores and is answered with. What orjson refuses (an
    integer beyond 64 bits) is written by ``json``; non-ASCII text is UTF-8 rather than escaped, and a
    float that is not a number is null rather than the ``NaN`` strict parsers reject."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:
        return json.dumps(obj, separators=(",", ":")).encode()


def dumps(obj: Any) -> str:
    return dumpb(obj).decode()


@dataclass
class Settings:
    state_dir: Path
    db: str | None = None
    config_path: Path | None = None
    worker_timeout: float = 30.0
    #: Events kept in the log; older ones are pruned (a scheduler that far behind resyncs).
    event_retention: int = 200_000
    #: How long applied decision ids and submission keys are remembered for idempotency.
    decision_retention_s: float = 24 * 3600.0
    host: str = "127.0.0.1"
    port: int = 0
    #: A personal cluster's owner: every job runs as this user, so only they (and the admin token)
    #: are served. None: a multi-user cluster.
    single_user: str | None = None
    #: The address other hosts reach this controller at; recorded in the lease so that followers
    #: can send clients to the leader.
    url: str = ""
    #: Seconds a leader's lease lasts without renewal (several controllers on PostgreSQL).
    lease_s: float = leadership.DEFAULT_TTL_S
    #: What to tell an administrator to run when the database's schema is older than this XCE's.
    upgrade_hint: str = "xceadmin db upgrade"


class Signal:
    """Wakes every coroutine waiting for "something new was committed" (a long-poll)."""

    def __init__(self) -> None:
        self._fut: asyncio.Future | None = None
        #: Set when the server stops: a long-poll answers with what it has instead of waiting.
        self.closed = False

    def close(self) -> None:
        self.closed = True
        self.fire()

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


class ActionSignals:
    """The long-polls of workers waiting for actions, by host: a commit that queues an action for a
    host wakes its poll. A process serving many hosts (``xce emulate-hosts``) waits on one signal
    for all of them, so any of its hosts' actions wakes that one poll."""

    def __init__(self) -> None:
        self._by_host: dict[str, Signal] = {}
        self._closed = False

    def _new(self) -> Signal:
        sig = Signal()
        sig.closed = self._closed
        return sig

    def of(self, host: str) -> Signal:
        sig = self._by_host.get(host)
        if sig is None:
            sig = self._by_host[host] = self._new()
        return sig

    def of_group(self, hosts: list[str]) -> Signal:
        sig = self._by_host.get(hosts[0])
        if sig is not None and all(self._by_host.get(h) is sig for h in hosts):
            return sig
        sig = self._new()
        for h in hosts:
            self._by_host[h] = sig
        return sig

    def fire(self, host: str) -> None:
        sig = self._by_host.get(host)
        if sig is not None:
            sig.fire()

    def fire_all(self) -> None:
        for sig in self._by_host.values():
            sig.fire()

    def close_all(self) -> None:
        self._closed = True
        for sig in self._by_host.values():
            sig.close()


class Controller:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.state_dir = settings.state_dir
        self.engine: sa.engine.Engine | None = None
        self.conn: sa.engine.Connection | None = None
        self.config: ClusterConfig = ClusterConfig()
        self.sched_config = SchedConfig()
        #: What the scheduler process itself reads (its cadence, its recording); the core ignores it.
        self.sched_driver: dict[str, Any] = {}
        self.tokens = TokenStore()
        self.hosts = HostTable()
        self.counts = JobCounts()
        self.events_signal = Signal()
        self.control_signal = Signal()
        self.action_signals = ActionSignals()
        self.sched_watch = SchedulerWatch()
        self.slots = SlotTally()  # slots held per host, kept as jobs move
        self.first_seq = 1
        self.next_job = self.next_seq = self.next_action = self.next_control = 1
        self._reserved_jobs = 1  # the job ids below this may belong to a submission not yet committed
        #: Queues closed by ``xceadmin queue close``, with the reason (xce.controller.jobs.queues).
        self.queue_closed: dict[str, str] = {}
        self.lease: leadership.Lease | leadership.SoloLease | None = None
        #: True while this controller holds the lease; only then may a transaction run.
        self.leader = False
        #: The lease as last read (the leader's address for redirects, its term, its expiry).
        self.lease_info: leadership.LeaseInfo | None = None
        self.lease_read_mono = 0.0
        self._cannot_lead: str | None = None
        self.started_ns = time.time_ns()
        self._lock_fd: int | None = None
        self._in_tx = False
        self._tx = TxBuffers()  # what the open transaction writes and wakes when it commits
        self.hook_runner: hooks.HookRunner | None = None
        self.mail_sender: MailSender | None = None
        self.gate_work = GateWork()
        self.metrics = None  # set by attach_metrics (xce.controller.records.metrics.Metrics)
        self._on_move = self._move_observers()

    def _move_observers(self) -> tuple[Callable[..., None], ...]:
        """Everything that reacts to a job's move, in this order: each is called by :meth:`move` with
        ``(job, verb, old, new, now, signal)``, the row already updated. The one list to read to know
        what a move changes beyond the job's row, its history and its event."""
        return (self.counts.moved,  # jobs per queue and state
                self.slots.moved,  # slots held per host
                self.gate_work.moved,  # what the gates look at again
                self._account,  # the accounting record of a job that ended
                self._hook,  # the queue's and the plugins' hooks
                self._mail,  # the job's mail (--mail-type, bsub -B/-N)
                *((self.metrics.moved,) if self.metrics is not None else ()))

    def attach_metrics(self, metrics: Any) -> None:
        """The app's ``/metrics`` (:class:`xce.controller.records.metrics.Metrics`), told of every move."""
        self.metrics = metrics
        self._on_move = self._move_observers()

    # -- start and stop --------------------------------------------------------------------

    def open(self, lead: bool = True) -> None:
        """Take the state directory, check the store's schema, and (``lead``) try to lead at once.

        ``xce controller`` opens without leading, binds its socket, says where it is reached
        (:meth:`advertise`) and then tries: the lease records that address."""
        sd = statedir.ensure(self.state_dir)
        self._lock(sd)
        url = store_engine.normalize_url(self.settings.db, statedir.sqlite_path(sd))
        me = leadership.Identity.this_process(self.settings.url, str(sd.absolute()))
        # Its sessions carry its name: a controller frozen while it led is fenced out by ending them.
        self.engine = store_engine.open_engine(url, lease_s=self.settings.lease_s, holder=me.holder)
        migrate.ensure_current(self.engine, self.settings.upgrade_hint)
        self.conn = self.engine.connect()
        prepared.note_writes(self.conn)
        self.lease = leadership.for_dialect(self.engine.dialect.name, me, self.settings.lease_s)
        self.config = self._startup_config()  # every controller checks its file, leader or not
        from xce.plugins import load_entry_points

        for problem in load_entry_points():  # the xce.hooks entry points run here
            log.warning("plugin not loaded: %s", problem)
        with self._begin():
            self.tokens.load(self.conn)  # a follower, too, authenticates callers of /v1/status and /metrics
        if lead:
            self.try_lead()

    def advertise(self, url: str) -> None:
        """The address this controller is reached at, as the lease will record it when it leads."""
        assert self.lease is not None
        self.settings.url = url
        self.lease.me = replace(self.lease.me, url=url)

    # -- leadership ------------------------------------------------------------------------

    def try_lead(self) -> bool:
        """Take the lease if nobody holds it; the new leader reloads everything it keeps in memory."""
        assert self.lease is not None and self.conn is not None
        if self.leader:
            return True
        try:
            cfg = self._startup_config()
        except ConfigError as exc:
            if not self.lease.shared:
                raise
            # Another controller, with a valid file, had better lead; say so once.
            if self._cannot_lead != str(exc):
                self._cannot_lead = str(exc)
                log.error("this controller will not lead while its configuration is invalid:\n%s", exc)
            return False
        self._cannot_lead = None
        before = self.lease.try_acquire(self.conn)
        if before is None:
            return False
        # Whatever this process remembers from an earlier term is stale.
        self.hosts.forget()
        self.sched_watch.forget()
        self._reload()
        self.leader = True
        with self.tx() as conn:
            self._apply_config(cfg, actor="controller start")
            # Only the leader writes, so service tokens are issued (or reissued) when a controller leads.
            self.tokens.ensure_service_tokens(conn, self.state_dir)
        self.saw_lease(self.lease.read(self.conn))
        if self.lease.shared:
            log.warning("this controller leads (term %s) at %s%s", self.lease.term, self.settings.url or "(no URL)",
                        f", taking over from {before.url or before.holder} (term {before.term})" if before.term else "",
                        extra={"fields": {"term": self.lease.term, "previous": before.holder or None}})
        return True

    def saw_lease(self, info: leadership.LeaseInfo | None) -> None:
        """The lease as just read: who leads and where (for redirects), until when."""
        self.lease_info, self.lease_read_mono = info, time.monotonic()

    def step_down(self, why: str) -> None:
        """Stop writing at once; waiting requests wake up and are sent to the leader."""
        if not self.leader:
            return
        self.leader = False
        log.warning("this controller no longer leads: %s", why, extra={"fields": {"term": self.lease.term}})
        self.events_signal.fire()
        self.control_signal.fire()
        self.action_signals.fire_all()

    def answer_long_polls(self) -> None:
        """The server is stopping: every long-poll answers now with what it has, and every later one
        at once, so that none is still waiting when the server cancels what is left (a traceback)."""
        self.events_signal.close()
        self.control_signal.close()
        self.action_signals.close_all()

    def close(self) -> None:
        if self.hook_runner is not None:
            self.hook_runner.close()
        if self.mail_sender is not None:
            self.mail_sender.close()
        if self.conn is not None and self.leader and self.lease is not None:
            try:
                self.lease.release(self.conn)
            except sa.exc.SQLAlchemyError:
                pass  # the lease runs out on its own
            self.leader = False
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
            # Never below the ids handed to submissions still waiting for their commit (see alloc_jobids).
            self.next_job = max(self._reserved_jobs, (c.execute(sa.select(sa.func.max(jobs.c.id))).scalar() or 0) + 1)
            last_seq = c.execute(sa.select(sa.func.max(events.c.seq))).scalar() or 0
            self.next_seq = last_seq + 1
            self.first_seq = c.execute(sa.select(sa.func.min(events.c.seq))).scalar() or self.next_seq
            # Acknowledged actions are deleted, so the table's max can fall below ids a worker has
            # already seen; the counter itself is kept in meta (see _flush).
            self.next_action = max((c.execute(sa.select(sa.func.max(actions.c.id))).scalar() or 0) + 1,
                                   int(self.meta_get("next_action") or 1))
            self.next_control = (c.execute(sa.select(sa.func.max(control.c.seq))).scalar() or 0) + 1
            self.tokens.load(c)
            self.counts.reload(c)
            self.slots.reload(c)
            self.gate_work.forget()
            self.hosts.reload(c)

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
    def reading(self) -> Iterator[sa.engine.Connection]:
        """The connection, inside a transaction (its own, or the one already open), for reads."""
        with self._begin():
            yield self.conn  # type: ignore[misc]

    @contextmanager
    def tx(self) -> Iterator[sa.engine.Connection]:
        """One transaction; nested calls join the outer one. Long-polls wake after the commit."""
        if self._in_tx:
            yield self.conn  # type: ignore[misc]
            return
        if not self.leader:
            raise NotLeader("this controller does not lead", self.lease_info.url if self.lease_info else None)
        self._in_tx = True
        self.conn.info[prepared.WROTE] = False  # set by any statement that changes rows
        try:
            with self._begin():
                self.lease.fence(self.conn)  # type: ignore[union-attr]
                yield self.conn  # type: ignore[misc]
                self._flush()
                committing = time.perf_counter()
            if self.conn.info[prepared.WROTE] and self.metrics is not None:
                self.metrics.commit_seconds.observe(time.perf_counter() - committing)
        except BaseException as exc:
            self._tx.clear()
            self._in_tx = False
            self._recover(exc)
            raise
        self._in_tx = False
        buf = self._tx
        if buf.events_written:
            buf.events_written = False
            self.events_signal.fire()
        for h in buf.wake_hosts:
            self.hosts.quiet.discard(h)
            self.action_signals.fire(h)
        buf.wake_hosts = set()
        if buf.wake_control:
            buf.wake_control = False
            self.control_signal.fire()
        if buf.hooks:
            self._run_hooks()
        if buf.mail:
            self._send_mail()

    def _run_hooks(self) -> None:
        """Hand the committed transaction's hook events to the runner (started on first use)."""
        todo, self._tx.hooks = self._tx.hooks, []
        if self.hook_runner is None:
            self.hook_runner = hooks.HookRunner(self.config.hooks.timeout_s, self.config.hooks.workers)
        self.hook_runner.timeout_s = self.config.hooks.timeout_s  # a reconfig applies to the next hook
        for event, executables in todo:
            self.hook_runner.submit(event, executables)

    def _send_mail(self) -> None:
        """Hand the committed transaction's mail to the sender (started on first use)."""
        todo, self._tx.mail = self._tx.mail, []
        if self.mail_sender is None:
            self.mail_sender = MailSender(self.config.mail)
        self.mail_sender.settings = self.config.mail  # a reconfig applies to the next message
        self.mail_sender.submit(todo)

    def _recover(self, exc: BaseException) -> None:
        """After a failed transaction: reload what memory holds, or stop leading when that is unsafe."""
        if isinstance(exc, NotLeader):
            self.step_down(str(exc))
            return
        try:
            self._reload()
        except sa.exc.DBAPIError:
            if not self.lease.shared:  # type: ignore[union-attr]
                raise
            # The database went away: whether we still lead is unknown until it is back. Stepping down
            # makes the next look at the lease decide (and reload, if it is still ours).
            self.step_down("lost the connection to the database")

    def _flush(self) -> None:
        if self._tx.flush(self.conn):
            self.meta_set("next_action", str(self.next_action))

    # -- what a transaction can do -----------------------------------------------------------

    def publish(self, event: ev.Event) -> int:
        """Append one core event to the scheduler's feed, encoded as :mod:`xce.controller.sched.wire` says."""
        return self._append_event(event.ts, event.TYPE, wire.payload(event, self.sched_driver))

    def publish_jobs(self, specs: list[dict[str, Any]], ts: int) -> None:
        """JOBS_PUSH events of job records (:func:`xce.controller.sched.wire.jobspec_json`), at most
        :data:`JOBS_PER_PUSH` to an event."""
        for start in range(0, len(specs), JOBS_PER_PUSH):
            self._append_event(ts, ev.JobsPush.TYPE, wire.jobs_push(specs[start:start + JOBS_PER_PUSH]))

    def _append_event(self, ts: int, type_: str, payload: dict[str, Any]) -> int:
        assert self._in_tx, "publish outside a transaction"
        seq = self.next_seq
        self.next_seq += 1
        self._tx.events.append({"seq": seq, "ts": ts, "type": type_, "payload": dumps(payload)})
        return seq

    def history(self, jobid: int, from_state: str | None, to_state: str, reason: str, actor: str, ts: int) -> None:
        self._tx.history.append({"jobid": jobid, "ts": ts, "from_state": from_state, "to_state": to_state,
                                 "reason": reason, "actor": actor})

    def queue(self, host: str, action: Action) -> int:
        """Queue a worker action (:mod:`xce.protocol.actions`), stored as the worker receives it; the
        host's long-poll wakes after the commit."""
        aid = self.next_action
        self.next_action += 1
        self._tx.actions.append({"id": aid, "host": host, "jobid": action.jobid, "kind": action.kind,
                                 "payload": dumps(encode(action)), "created": time.time_ns(), "delivered": None})
        self._tx.wake_hosts.add(host)
        return aid

    def wake_control(self) -> None:
        self._tx.wake_control = True

    def move(self, job: dict[str, Any], verb: str, reason: str, actor: str, *, signal: str | None = None,
             **changes: Any) -> str:
        """Take ``job`` (a row dict, updated in place) through ``verb`` of the state table.

        A job someone requeued while it ran (``requeue_by``) goes back to PEND however that run
        ends (finished, failed, lost): every end of a run passes here, so no report path can
        forget it. A kill still ends it. For the same reason every end gets its one word here
        (``end_code``, :data:`xce.endcodes.OF_MOVE`) unless the caller knows better and passes it.
        ``signal``: what the move sends the job (a preemption's), for the hooks' event."""
        if verb in RUN_ENDS and job.get("requeue_by"):
            asked = f"requeued by {job['requeue_by']}"
            # Its end usually is the stop the requeue sent; anything else is worth saying.
            verb, reason = "reschedule", asked if "requeue" in reason else f"{asked} (its run ended first: {reason})"
            changes = FRESH_RUN
        old = job["state"]
        new = states.target(job["id"], old, verb)
        now = time.time_ns()
        values = {"state": new, "reason": reason, **changes}
        if new in (states.DONE, states.EXIT) and "end_time" not in values:
            values["end_time"] = now
        if new in (states.DONE, states.EXIT) and "end_code" not in values:
            values["end_code"] = endcodes.OF_MOVE[verb]
        UPDATE_JOB.execute(self.conn, {"jid": job["id"], **values})
        self.history(job["id"], old, new, reason, actor, now)
        self.publish(ev.JobStateChange(ts=now, jobid=job["id"], state=new, reason=reason))
        job.update(values)
        if log.isEnabledFor(logging.INFO):
            log.info("job %d %s -> %s: %s", job["id"], old, new, reason,
                     extra={"fields": {"job": job["id"], "from": old, "to": new, "reason": reason, "actor": actor,
                                       "user": job["user"], "queue": job["queue"]}})
        for observe in self._on_move:
            observe(job, verb, old, new, now, signal)
        return new

    def _account(self, job: dict[str, Any], verb: str, old: str, new: str, now: int, signal: str | None) -> None:
        """Every way a job ends is a move, so this is where its accounting record is written:
        finished, failed, killed, lost alike."""
        if new in (states.DONE, states.EXIT):
            self._tx.accounting.extend(accounting.rows(job, self.config.resource_names))

    def _hook(self, job: dict[str, Any], verb: str, old: str, new: str, now: int, signal: str | None) -> None:
        """The hook event of the move, if it is one, handed to the runner once the transaction commits."""
        event = hooks.event_of(verb, old)
        if event is not None:
            queue = self.config.queues.get(job["queue"])
            path = getattr(queue.hooks, event) if queue is not None else None
            if path is not None or hooks.available():
                self._tx.hooks.append((hooks.job_event(event, job, job["reason"], now, signal),
                                        (path,) if path else ()))

    def _mail(self, job: dict[str, Any], verb: str, old: str, new: str, now: int, signal: str | None) -> None:
        """The mail the move raises for the job, if it asked and the site sends mail, sent once the
        transaction commits. A job's options that cannot be read into mail are logged and the move goes
        on; the only store read (an array element's, :mod:`xce.controller.records.mail`) is indexed."""
        if not self.config.mail.enabled:
            return
        try:
            self._tx.mail.extend(mail.of_move(self.conn, job, verb, new, self.config))
        except (ValueError, TypeError, KeyError) as exc:
            log.warning("mail for job %s (%s) not written: %s: %s", job["id"], verb, type(exc).__name__, exc)

    def alloc_jobids(self, n: int) -> int:
        """Ids for ``n`` jobs. Those handed out outside a transaction (a submission prepared for the
        group commit, :mod:`xce.controller.jobs.groupcommit`) stay reserved when another transaction fails
        and the counters are reloaded meanwhile: handing them out again would make the waiting
        submission's commit a duplicate key."""
        first = self.next_job
        self.next_job += n
        if not self._in_tx:
            self._reserved_jobs = self.next_job
        return first

    def alloc_control_seq(self) -> int:
        seq = self.next_control
        self.next_control += 1
        return seq

    # -- reading ---------------------------------------------------------------------------

    def job(self, jobid: int) -> dict[str, Any]:
        with self._begin():
            row = SELECT_JOB.first(self.conn, {"jid": jobid})
        if row is None:
            raise NotFound(f"job {jobid} does not exist")
        return row

    def jobs_by_id(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        uniq = sorted(set(ids))
        with self._begin():
            for i in range(0, len(uniq), 500):
                for row in SELECT_JOBS.rows(self.conn, {"ids": uniq[i:i + 500]}):
                    out[row["id"]] = row
        return out

    def meta_get(self, key: str) -> str | None:
        with self._begin():
            return self.conn.execute(sa.select(meta.c.value).where(meta.c.key == key)).scalar()

    def meta_set(self, key: str, value: str) -> None:
        assert self._in_tx
        if _UPDATE_META.execute(self.conn, {"k": key, "value": value}).rowcount == 0:
            self.conn.execute(sa.insert(meta).values(key=key, value=value))

    def events_pruned(self, first_seq: int) -> None:
        """Events before ``first_seq`` were deleted: a reader asking for them must resync."""
        self.first_seq = first_seq

    @property
    def last_seq(self) -> int:
        return self.next_seq - 1

    # -- configuration -----------------------------------------------------------------------

    def _apply_config(self, cfg: ClusterConfig, actor: str) -> bool:
        """Make ``cfg`` current; publish CONFIG_PUSH when it differs from the stored one."""
        text = cfg.model_dump_json()
        self.file_config = cfg
        self.config, self.queue_closed = queues.overlay(self, cfg)  # with the queues administrators closed
        cfg = self.config
        self.sched_config = to_sched_config(cfg)
        self.sched_driver = {
            "round_interval_s": cfg.scheduler.round_interval_s,
            "max_round_interval_s": cfg.scheduler.max_round_interval_s,
            **({"record": "rotate", "record_rotate_bytes": cfg.scheduler.record_rotate_bytes,
                "record_rotate_s": cfg.scheduler.record_rotate_s, "record_keep_s": cfg.scheduler.record_keep_s,
                "record_keep_bytes": cfg.scheduler.record_keep_bytes, "record_dir": cfg.scheduler.record_dir}
               if cfg.scheduler.record == "rotate" else {})}
        if self.meta_get("config") == text:
            return False
        self.meta_set("config", text)
        self.publish(ev.ConfigPush(ts=time.time_ns(), config=self.sched_config))
        log.info("configuration applied (%s)", actor)
        return True

    def apply_queue_closures(self) -> None:
        """After ``xceadmin queue close/open``: the file's configuration again, with the closures as
        they now are, pushed to the scheduler (the file is unchanged, so :meth:`_apply_config` would not)."""
        self._apply_config(self.file_config, "queue closures")
        self.publish(ev.ConfigPush(ts=time.time_ns(), config=self.sched_config))

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
                    self.publish(self.workers_push(sorted(self.hosts)))
        return {"changed": changed, "config_file": str(path), "queues": sorted(cfg.queues)}

    def host_values(self, h: HostLive) -> dict[str, Any]:
        """Static values the scheduler sees: what the worker reported, with config overrides."""
        values = dict(h.resources)
        override = self.config.hosts.get(h.name)
        if override is not None and override.slots is not None:
            values["slots"] = override.slots
        features, traits = host_traits(self.config, h.name)
        values.update(traits)  # the administrator's word wins over the worker's flags and NVML's name
        features = list(h.features) + [f for f in features if f not in h.features]
        if features:
            values["features"] = sorted(features)
        return dict(sorted(values.items()))

    def workers_push(self, names: list[str], ts: int | None = None) -> ev.WorkersPush:
        """The hosts ``names`` as the scheduler sees them."""
        return ev.WorkersPush(ts=ts or time.time_ns(), hosts=tuple(
            HostSpec(n, self.hosts[n].scheduling_status, self.host_values(self.hosts[n])) for n in names))
