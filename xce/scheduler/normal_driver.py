"""The normal-mode scheduler driver: a live controller in, the same ``SchedulerCore`` in the middle,
decisions back to the controller (Req 10 AC 7-10).

The controller's feed already carries core events in their JSON form, so translation is
``events.from_json``. Events are buffered between rounds (usage ticks that a later tick of the
same job makes redundant are dropped there, :mod:`xce.scheduler.coalesce`, and so never recorded);
a round runs when events arrived (no more often than ``round_interval``, or ``release_interval``
when capacity was freed while jobs wait) and at least every ``max_round_interval`` even when
nothing arrived. Decisions are posted in one batch per round with ids ``<epoch>-<seq>``, so a
retried post is applied once. The figures of each round (start, duration, decisions) ride along
with the next post, or alone at most once a second when rounds decide nothing, for the controller's
``/metrics`` and dashboard.

Time stamps pushed into the core never go backwards (an event stamped before the previous one
is pushed at the previous time): that keeps a recording replayable with a strictly monotonic
virtual clock. Recording (``xceadmin scheduler record start|stop``) arrives on the controller's
control feed and never changes a decision: the writer only observes.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from dataclasses import replace
from typing import Any

from xce.client import follow
from xce.client.transport import Refused
from xce.client.urls import parse_urls
from xce.core import SchedulerCore, events as ev
from xce.core.decisions import Decision
from xce.scheduler.coalesce import coalesce_pending

log = logging.getLogger("xce.scheduler")


#: Events asked for at a time; decisions sent in one post.
FEED_PAGE = 5000
DECISIONS_PER_POST = 5000
#: States a job leaves its slots in: a round right after one of these can start a waiting job.
_FREEING = frozenset({"DONE", "EXIT", "SSUSP", "USUSP", "PEND"})


class ResyncNeeded(Exception):
    """The controller no longer has the events after our cursor (410): start again from a full sync."""


class NormalDriver:
    def __init__(self, url: str, token: str, *, seed: int = 0, round_interval: float | None = None,
                 max_round_interval: float | None = None, poll_wait: float = 1.0,
                 record_snapshot_interval: int = 10_000, release_interval: float = 0.005,
                 ca_file: str | None = None, record_dir: str | None = None) -> None:
        # Several controllers (``--url a,b``): every request goes to the leader, through a takeover;
        # the feed continues from the same seq there (the leader's log is the database's).
        self.http = follow.Session(url, token, timeout=30.0, ca_file=ca_file)
        self.record_dir = record_dir
        self.seed = seed
        #: Given on the command line, they win; otherwise ``[scheduler]`` of the cluster's
        #: configuration decides (it arrives with every CONFIG_PUSH, so a reload applies at once).
        self.fixed_intervals = (round_interval, max_round_interval)
        self.round_interval = 0.2 if round_interval is None else round_interval
        self.max_round_interval = 5.0 if max_round_interval is None else max_round_interval
        self.release_interval = release_interval
        self.poll_wait = poll_wait
        self.record_snapshot_interval = record_snapshot_interval
        self.epoch = f"{os.getpid()}.{time.time_ns()}"
        self.core: SchedulerCore | None = None
        self.seq = 0
        self.control_seq = 0
        #: The newest control command the controller has (from the event page): fetch only when newer.
        self.control_head = 0
        self.last_ts = 0
        self.pending: list[ev.Event] = []
        self.outbox: list[Decision] = []
        self.writer: Any = None
        #: ``[scheduler] record = "rotate"``: the policy, the file being written and when it was opened.
        self.rotation: Any = None
        self.rotation_dir: str | None = None
        self.rotating: tuple[str, float] | None = None
        self.rounds = 0
        self.round_figures: list[dict[str, Any]] = []
        self.last_post = 0.0
        self.stopping = False

    # -- feed ----------------------------------------------------------------------------
    def _get(self, path: str, **params: Any) -> Any:
        # A long poll that outlasts its wait by 10 s went to a controller that hangs (paused): give up on
        # it, so that the request goes to the leader.
        r = self.http.get(path, params=params, timeout=float(params["wait"]) + 10 if params.get("wait") else 30.0)
        if r.status_code == 410:
            raise ResyncNeeded(r.text)
        r.raise_for_status()
        return r.json()

    def sync(self) -> None:
        """(Re)build the core from the controller's full state."""
        state = self._get("/v1/sched/state")
        self._close_writer()
        self.core = SchedulerCore(self._collect, seed=self.seed)
        self.pending = []
        self.seq = int(state["seq"])
        self.control_seq = int(state.get("control_seq", self.control_seq))
        for obj in state["events"]:
            self._driver_settings(obj)
            self._push(ev.from_json(obj))
        log.info("synced with the controller at seq %d (%d jobs)", self.seq, len(self.core.jobs))
        if self.rotation is not None:
            self._rotate()

    def _push(self, event: ev.Event) -> None:
        if event.ts < self.last_ts:
            event = replace(event, ts=self.last_ts)
        self.last_ts = event.ts
        if self.writer is not None:
            self._record(self.writer.event, event)
        assert self.core is not None
        self.core.clock.set(event.ts, None, 1, 1)
        self.core.push_event(event)

    def _collect(self, decision: Decision) -> None:
        if self.writer is not None:
            self._record(self.writer.decision, decision)
        self.outbox.append(decision)

    def _record(self, write: Any, item: Any) -> None:
        """A recording that fails (disk full, a bug) stops recording, never scheduling."""
        try:
            write(item)
        except Exception:  # noqa: BLE001 - any failure of the writer must not stop the scheduler
            log.exception("recording failed; recording stopped, scheduling goes on")
            writer, self.writer = self.writer, None
            try:
                writer.close()
            except Exception:  # noqa: BLE001
                pass

    def poll(self, wait: float) -> int:
        return self._take(self._get("/v1/sched/events", after=self.seq, wait=round(max(0.0, wait), 3),
                                    limit=FEED_PAGE))

    def _take(self, page: dict[str, Any]) -> int:
        """Buffer a page of the feed (from a poll, or the answer to a decisions post)."""
        for item in page["events"]:
            self._driver_settings(item["event"])
            self.pending.append(ev.from_json(item["event"]))
        self.seq = int(page["last_seq"])
        self.control_head = int(page.get("control_seq", self.control_seq + 1))
        return len(page["events"])

    def _driver_settings(self, obj: dict[str, Any]) -> None:
        """Take the round cadence from a CONFIG_PUSH (the core never sees it, nor does a recording)."""
        if obj.get("type") != "CONFIG_PUSH":
            return
        settings = (obj.get("payload") or {}).get("driver") or {}
        fixed_round, fixed_max = self.fixed_intervals
        if fixed_round is None and settings.get("round_interval_s") is not None:
            self.round_interval = float(settings["round_interval_s"])
        if fixed_max is None and settings.get("max_round_interval_s") is not None:
            self.max_round_interval = float(settings["max_round_interval_s"])
        from xce.scheduler.rotation import RotationPolicy

        self.rotation = RotationPolicy.from_settings(settings)
        self.rotation_dir = settings.get("record_dir") or self.record_dir
        if self.rotation is None and self.rotating is not None:
            self._close_writer()  # rotation switched off by a reload

    def _rotate(self) -> None:
        """Keep a rotating recording going (module :mod:`xce.scheduler.rotation`); a manual recording
        in progress takes precedence, and a failure stops only the recording."""
        from xce.replay.writer import ReplayWriter
        from xce.scheduler import rotation

        policy = self.rotation
        if policy is None or self.core is None or (self.writer is not None and self.rotating is None):
            return
        if self.rotating is not None:
            if self.writer is not None and not rotation.due(self.rotating[0], self.rotating[1], policy):
                return
            self._close_writer()
        directory = self.rotation_dir or "."
        path = rotation.new_name(directory)
        try:
            fp = _new_file(str(path))
            self.writer = ReplayWriter(fp, self.core, snapshot_interval=self.record_snapshot_interval,
                                       start_ts=self.last_ts)
        except OSError as exc:
            log.error("cannot record to %s: %s; rotating recording paused, scheduling goes on", path,
                      exc.strerror or exc, extra={"fields": {"path": str(path)}})
            self.rotation = None
            return
        self.rotating = (str(path), time.monotonic())
        for gone in rotation.prune(directory, path, policy):
            log.info("recording %s deleted (older or beyond the kept size)", gone)

    def poll_control(self) -> None:
        body = self._get("/v1/sched/control", after=self.control_seq, wait=0)
        for item in body["commands"]:
            self.control_seq = int(item["seq"])
            self.apply_control(item["command"])
        self.control_seq = max(self.control_seq, int(body.get("last_seq", self.control_seq)))

    def apply_control(self, command: dict[str, Any]) -> None:
        op = command.get("op")
        if op == "record_start":
            from xce.replay.format import default_name
            from xce.replay.writer import ReplayWriter

            self._close_writer()
            self.rotating = None
            path = command.get("file") or os.path.join(self.record_dir or ".", default_name())
            interval = int(command.get("snapshot_interval") or self.record_snapshot_interval)
            try:
                fp = _new_file(path)
            except OSError as exc:
                # A path this process cannot write (a typo, another host's directory, a full disk) is the
                # administrator's to fix; scheduling must not stop over it.
                log.error("cannot record to %s: %s; recording not started, scheduling goes on", path,
                          exc.strerror or exc, extra={"fields": {"path": str(path)}})
                return
            # The recording starts at the last time pushed: events fetched but not yet pushed
            # must not look as if they went back in time.
            self.writer = ReplayWriter(fp, self.core, snapshot_interval=interval, start_ts=self.last_ts)
            log.info("recording to %s (snapshot every %d events)", path, interval)
        elif op == "record_stop":
            self._close_writer()
        else:
            log.warning("ignoring unknown control command %r", command)

    def _close_writer(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer._fp.close()  # opened here (see _new_file), so closed here
            if self.rotating is None:
                log.info("recording stopped")
            self.writer = None
        self.rotating = None

    # -- rounds --------------------------------------------------------------------------
    def run_round(self) -> bool:
        started = time.perf_counter()
        nevents = len(self.pending)
        for event in coalesce_pending(self.core, self.pending):
            self._push(event)
        self.pending = []
        started_ns, before, t0 = time.time_ns(), len(self.outbox), time.perf_counter()
        self._push(ev.BeginRound(ts=max(started_ns, self.last_ts)))
        self.round_figures.append({"ts": started_ns, "duration_s": round(time.perf_counter() - t0, 6),
                                   "decisions": len(self.outbox) - before})
        del self.round_figures[:-10_000]  # bounded while the controller cannot be reached
        self.rounds += 1
        if log.isEnabledFor(logging.DEBUG):
            self._log_round(nevents, time.perf_counter() - started)
        if self.rotation is not None:
            self._rotate()
        if self.writer is not None:  # on disk before the controller acts on it: a crash loses no more
            self._record(lambda _: self.writer.flush(), None)
        return self.flush()

    def _log_round(self, nevents: int, seconds: float) -> None:
        assert self.core is not None
        ops: dict[str, int] = {}
        for d in self.outbox:
            ops[d.OP] = ops.get(d.OP, 0) + 1
        pending = sum(q.pending for q in self.core.queues.values())
        figures = {"round": self.rounds, "events": nevents, "decisions": len(self.outbox),
                   **{op.lower(): n for op, n in sorted(ops.items())}, "pending": pending,
                   "ms": round(seconds * 1000, 3)}
        log.debug("round %d: %d event(s) in, %d decision(s) out (%s), %d job(s) pending, %.1f ms", self.rounds, nevents,
                  len(self.outbox), ", ".join(f"{n} {op}" for op, n in sorted(ops.items())) or "none", pending,
                  seconds * 1000, extra={"fields": figures})

    def flush(self) -> bool:
        """Post the decisions made so far, with the round figures; figures alone at most once a second.
        The last post's answer carries the feed after our cursor: True when it did (the events are
        then up to date, the dispatches just made included, without another request)."""
        now = time.monotonic()
        if not self.outbox and not (self.round_figures and now - self.last_post >= 1.0):
            return False
        batch = [{"id": f"{self.epoch}-{d.seq}", "ts": d.ts, "decision": d.to_json()} for d in self.outbox]
        last = max(len(batch) - 1, 0) // DECISIONS_PER_POST * DECISIONS_PER_POST
        answer: dict[str, Any] = {}
        for i in range(0, last + 1, DECISIONS_PER_POST):
            body: dict[str, Any] = {"decisions": batch[i:i + DECISIONS_PER_POST]}
            if i == 0:
                body["rounds"] = self.round_figures[-10_000:]
            params = {"after": self.seq, "limit": FEED_PAGE} if i == last else None
            r = self.http.request("POST", "/v1/sched/decisions", json=body, params=params)
            if r.status_code >= 400 and not follow.retryable(r.status_code):
                # Refused for good: sending the same batch again would wedge scheduling. Start over from
                # the controller's state, which says what was and was not applied.
                self.outbox, self.round_figures = [], []
                raise ResyncNeeded(f"the controller refused the decisions: HTTP {r.status_code} {r.text[:300]}")
            r.raise_for_status()  # a retryable answer: kept, and sent again (decision ids make it once)
            self.round_figures = []
            answer = r.json()
        self.last_post = now
        self.outbox = []
        if "feed_gone" in answer:
            raise ResyncNeeded(answer["feed_gone"])
        if "feed" not in answer:  # a controller that does not answer with the feed
            return False
        self._take(answer["feed"])
        return True

    def interval(self) -> float:
        """How long to batch events before a round.

        Freed capacity (a job ended or was suspended, a host came back) while jobs wait is worth a
        round at once: batching then only delays a waiting job, so ``release_interval`` applies.
        Anything else (mostly submissions and load reports) is batched for ``round_interval``.
        """
        assert self.core is not None
        if any(type(e) is ev.JobStateChange and e.state in _FREEING or type(e) is ev.WorkersPush
               for e in self.pending) and any(q.pending for q in self.core.queues.values()):
            return self.release_interval
        return self.round_interval

    def run(self) -> None:
        self.sync()
        last_round = 0.0
        current = False  # the last decisions post brought the feed up to date
        while not self.stopping:
            try:
                now = time.monotonic()
                due = last_round + (self.interval() if self.pending else self.max_round_interval)
                # Until the next round is due, wait for events (one that frees capacity makes it due at
                # once); ask without waiting only when it is due and the feed was not just read.
                if due > now or not current:
                    self.poll(min(self.poll_wait, max(0.0, due - now)))
                current = False
                if self.control_head > self.control_seq:
                    self.poll_control()
                now = time.monotonic()
                wait = self.interval() if self.pending else self.max_round_interval
                if now - last_round >= wait:
                    current = self.run_round()
                    last_round = time.monotonic()
            except ResyncNeeded as exc:
                log.warning("resynchronising: %s", exc)
                self.sync()
            except (follow.Unreachable, Refused) as exc:
                log.warning("controller unreachable or refusing (%s); retrying", exc)
                time.sleep(1.0)
        self._close_writer()


def _new_file(path: str):
    """A new recording file (0600): never an existing file, never through a symbolic link.

    The controller confines the path to the record directory; this is the second line, since the
    scheduler often runs as root."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), mode=0o700, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    return os.fdopen(fd, "w", encoding="utf-8", buffering=1 << 20)


def main(*, url: str | None = None, token: str | None = None, state_dir: str | None = None, seed: int = 0,
         round_interval: float | None = None, max_round_interval: float | None = None,
         record_snapshot_interval: int = 10_000,
         log_level: str = "INFO", log_format: str | None = None, **_: Any) -> None:
    from xce import logs
    from xce.client import statedir

    try:
        logs.configure("scheduler", log_level, log_format)
    except ValueError as exc:
        raise SystemExit(f"xce scheduler: {exc}") from None

    sd = statedir.resolve(state_dir)
    url = url or os.environ.get("XCE_URL") or ",".join(statedir.controller_urls(sd))
    if not url:
        raise SystemExit(f"xce scheduler: no controller found: {sd}/controller.json is missing; "
                         f"start one (xce controller) or pass --url")
    try:
        parse_urls(url, "--url")
    except ValueError as exc:
        raise SystemExit(f"xce scheduler: {exc}") from None
    token_file = statedir.token_path(sd, "scheduler")
    token = token or os.environ.get("XCE_SCHEDULER_TOKEN") or (
        token_file.read_text().strip() if token_file.exists() else None)
    if not token:
        raise SystemExit(f"xce scheduler: no scheduler token: {token_file} is missing; pass --token")
    from xce.plugins import load_entry_points

    for problem in load_entry_points():
        log.warning("plugin not loaded: %s", problem)
    driver = NormalDriver(url, token, seed=seed, round_interval=round_interval,
                          max_round_interval=max_round_interval, record_snapshot_interval=record_snapshot_interval,
                          ca_file=statedir.ca_file(sd), record_dir=str(sd / "recordings"))

    def stop(*_: Any) -> None:
        driver.stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        driver.run()
    except ev.EventFormatError as exc:
        # Scheduling on a picture missing an event would place jobs on a cluster that is not there.
        raise SystemExit(f"xce scheduler: the controller's feed holds an event this scheduler cannot read: {exc} "
                         f"(run the scheduler of the controller's XCE version)") from None

