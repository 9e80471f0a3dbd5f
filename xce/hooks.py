"""Site hooks on job events: what LSF's pre/post-exec and Slurm's PrologSlurmctld/EpilogSlurmctld are for.

The controller calls them when a job starts (is dispatched), stops (ends DONE or EXIT), is
preempted, and is resumed. A stop and a preemption carry ``HOOK_DETAIL_JOB_STOP`` (65, the
value the specification reuses for preemption stop notifications) with the exit status, the
signal, the run time, the usage and the end reason.

Two kinds, fed the same event (a JSON object):

* **Python entry points** in the group ``xce.hooks``: a callable taking the event dict. They run
  in the controller process, so one that overruns its limit cannot be killed: it is logged and
  left behind in its own thread (write an executable hook for anything that may hang).
* **Executables per queue** (``[queues.NAME.hooks]`` ``start``, ``stop``, ``preempt``,
  ``resume``): run with the event on stdin and the main fields in ``XCE_*`` environment
  variables, in their own session, and killed with their whole process group at the limit.

Hooks are notifications, never gates: they run after the change is committed, on a few worker
threads fed by a bounded queue, so a slow, hanging or failing hook delays no request and no
scheduling round. Every failure (an exception, a non-zero exit, a kill at the limit, a full queue)
is logged with the hook and the job.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import signal
import subprocess
import threading
import time
from typing import Any, Callable, Iterable

__all__ = ["EVENTS", "HOOK_DETAIL_JOB_STOP", "HookRunner", "available", "job_event", "register"]

log = logging.getLogger("xce.hooks")
#: ``cluster_def.h``'s hook detail for a job that stops running (ends, or is preempted).
HOOK_DETAIL_JOB_STOP = 65
#: Hook event names, and the state-table verbs (``xce.controller.jobs.states``) that raise them.
EVENTS = ("start", "stop", "preempt", "resume")
_BY_VERB = {"dispatch": "start", "finish": "stop", "fail": "stop", "kill": "stop", "lose": "stop",
            "preempt": "preempt", "resume": "resume"}

_registry: dict[str, Callable[[dict[str, Any]], Any]] = {}


def register(name: str, hook: Callable[[dict[str, Any]], Any]) -> None:
    """Add a Python hook (what ``xce.plugins.load_entry_points`` does for each entry point).

    The same object again under the same name is accepted (loading twice changes nothing);
    another object under a taken name is refused, as every registry here does."""
    if not callable(hook):
        raise ValueError(f"hook {name!r} is not callable")
    if name in _registry and _registry[name] is not hook:
        raise ValueError(f"a hook named {name!r} is already registered")
    _registry[name] = hook


def unregister(name: str) -> None:
    _registry.pop(name, None)


def available() -> list[str]:
    return sorted(_registry)


def event_of(verb: str, old_state: str | None) -> str | None:
    """The hook event a state move raises (None: none). A kill of a job that never ran is no stop."""
    event = _BY_VERB.get(verb)
    if event == "stop" and old_state == "PEND":
        return None
    return event


def job_event(event: str, job: dict[str, Any], reason: str, ts: int, signal: str | None = None) -> dict[str, Any]:
    """The event a hook receives, from the job's row as it is after the move.

    ``signal``: the one the move sent (a preemption's ``SIGSTOP`` or ``SIGTSTP``); the row knows
    only how a run ended (``exit_signal``), and a suspended job has not ended."""
    out: dict[str, Any] = {
        "event": event, "ts": ts, "jobid": job["id"], "user": job.get("user"), "queue": job.get("queue"),
        "project": job.get("project"), "job_type": job.get("job_type") or "", "state": job.get("state"),
        "host": job.get("head_host"), "placement": _json(job.get("placement")) or [],
    }
    if event in ("stop", "preempt"):
        start, end = job.get("start_time") or 0, job.get("end_time") or ts
        usage = _json(job.get("usage")) or {}
        out.update({
            "detail": HOOK_DETAIL_JOB_STOP,
            "exit_status": job.get("exit_code"), "signal": signal or job.get("exit_signal"),
            "run_time_s": round(max(0, end - start) / 1e9, 3) if start else 0.0,
            "usage": {k: usage[k] for k in ("last", "peak", "mean", "samples") if k in usage},
            "end_reason": reason,
        })
    return out


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


class HookRunner:
    """Runs hooks off the caller's thread, each under a time limit; never raises into the caller."""

    def __init__(self, timeout_s: float = 30.0, workers: int = 2, capacity: int = 10_000) -> None:
        self.timeout_s = timeout_s
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=capacity)
        self._threads = [threading.Thread(target=self._work, name=f"xce-hook-{i}", daemon=True)
                         for i in range(workers)]
        for t in self._threads:
            t.start()

    def submit(self, event: dict[str, Any], executables: Iterable[str] = ()) -> None:
        """Queue ``event`` for every Python hook and for ``executables``; drop it (logged) when full."""
        todo = [(name, hook) for name, hook in sorted(_registry.items())] + [(path, None) for path in executables]
        if not todo:
            return
        try:
            self._queue.put_nowait((event, todo))
        except queue.Full:
            log.error("hook queue full (%d events waiting): %s hooks of job %s not run",
                      self._queue.maxsize, event["event"], event["jobid"])

    def close(self, wait_s: float = 0.0) -> None:
        """Stop taking events; wait up to ``wait_s`` for the queued ones."""
        for _ in self._threads:
            try:
                self._queue.put_nowait(None)
            except queue.Full:
                break
        deadline = time.monotonic() + wait_s
        for t in self._threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            event, todo = item
            for name, hook in todo:
                try:
                    if hook is None:
                        self._run_executable(name, event)
                    else:
                        self._run_python(name, hook, event)
                except Exception:  # noqa: BLE001 - a hook's failure is logged, never raised
                    log.exception("%s hook %s failed for job %s", event["event"], name, event["jobid"])

    def _run_python(self, name: str, hook: Callable[[dict[str, Any]], Any], event: dict[str, Any]) -> None:
        failure: list[BaseException] = []

        def call() -> None:
            try:
                hook(dict(event))
            except BaseException as exc:  # noqa: BLE001
                failure.append(exc)

        t = threading.Thread(target=call, name=f"xce-hook-{name}", daemon=True)
        t.start()
        t.join(self.timeout_s)
        if t.is_alive():
            log.error("%s hook %s did not return within %gs for job %s; left running, not waited for",
                      event["event"], name, self.timeout_s, event["jobid"])
        elif failure:
            exc = failure[0]
            log.error("%s hook %s failed for job %s: %s: %s", event["event"], name, event["jobid"],
                      type(exc).__name__, exc)

    def _run_executable(self, path: str, event: dict[str, Any]) -> None:
        env = dict(os.environ, XCE_HOOK_EVENT=event["event"], XCE_JOBID=str(event["jobid"]),
                   XCE_JOB_USER=str(event.get("user") or ""), XCE_JOB_QUEUE=str(event.get("queue") or ""),
                   XCE_JOB_STATE=str(event.get("state") or ""))
        if "detail" in event:
            env.update(XCE_HOOK_DETAIL=str(event["detail"]), XCE_EXIT_STATUS=_text(event.get("exit_status")),
                       XCE_EXIT_SIGNAL=_text(event.get("signal")), XCE_RUN_TIME_S=str(event["run_time_s"]),
                       XCE_END_REASON=str(event.get("end_reason") or ""))
        try:
            proc = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                    env=env, cwd="/", start_new_session=True)
        except OSError as exc:
            log.error("%s hook %s could not start for job %s: %s", event["event"], path, event["jobid"], exc)
            return
        try:
            _, err = proc.communicate(json.dumps(event).encode() + b"\n", timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
            log.error("%s hook %s killed at its limit of %gs for job %s", event["event"], path, self.timeout_s,
                      event["jobid"])
            return
        if proc.returncode != 0:
            tail = err.decode(errors="replace").strip().splitlines()[-1:] or [""]
            log.error("%s hook %s exited %s for job %s%s", event["event"], path, proc.returncode, event["jobid"],
                      f": {tail[0][:300]}" if tail[0] else "")


def _text(value: Any) -> str:
    return "" if value is None else str(value)
