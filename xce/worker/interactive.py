"""Interactive jobs on their head host (``xce submit -I``/``-Is``; the Slurm front-ends' ``srun
--pty`` and ``salloc`` later): the job's terminal is its user's.

Such a job is scheduled, placed, contained and started as its owner like every job
(:func:`xce.worker.launch.launch`), with one difference: its stdin, stdout and stderr are a new
pseudo-terminal, its controlling terminal (``LaunchSpec.tty``). The worker keeps the near side and
relays it to the user's ``xce`` over the task server's port (:mod:`xce.worker.tasks`), so the
terminal's line discipline does for the job what a local one does: Ctrl-C and Ctrl-Z typed in raw
mode arrive as bytes and become SIGINT and SIGTSTP for the job's foreground process group, and a
window change (``TIOCSWINSZ``) becomes its SIGWINCH.

The job is forked by the worker itself, not by the spawner, and is not written to the journal of
running jobs: its terminal lives in the worker, so it cannot outlive it (a restarted worker finds
its container a leftover, and the controller records it lost).

**Who may attach.** The controller hands out attach keys only to the job's owner or an admin
(``POST /v1/jobs/ID/attach``, :mod:`xce.controller.api.attach`), and sends each key to this host
in an ``attach`` action (:func:`grant`). A key is good for one attach of this run of the job, and
proves itself as ``xce launch``'s launch key does (:mod:`xce.worker.taskauth`: a MAC over the
connection's nonce, the key never crosses the network). One client at a time.

**Handshake** (JSON lines, after the server's ``{"nonce"}``): ``{"jobid", "attach": true, "rows",
"cols", "raw", "mac"}``; answered ``{"attached": jobid}`` or ``{"error", "retry"}`` (``retry``: the
key may simply not have arrived here yet). Then :mod:`xce.worker.ttywire` frames both ways; the
last one is the job's end.

**Ends.** A job that ends before its user's ``xce`` attaches (``bsub -I hostname``: quicker than the
user's next look) keeps its terminal, its output and its exit status until its user attaches or
:data:`ATTACH_WITHIN_S` after the start has passed. Nobody attached within :data:`ATTACH_WITHIN_S` of the start, or the client went away
(killed, its network gone: TCP keepalives find that out), and the job is hung up as a terminal
would be (SIGHUP, then SIGKILL after :data:`HANGUP_GRACE_S`) with a reason that says so, reported
through the worker's normal path. Its output is held (up to :data:`HELD_OUTPUT`, then the job
waits, as on a terminal nobody reads) until its user attaches.
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import signal
import socket
import threading
import time
import weakref
from typing import TYPE_CHECKING, Any

from xce.protocol.actions import AttachKey
from xce.worker import taskauth, ttywire
from xce.worker.runner import JobProcess

if TYPE_CHECKING:
    from xce.worker.agent import Agent

log = logging.getLogger("xce.worker.interactive")

#: How long a started interactive job waits for its user's ``xce`` before it is ended.
ATTACH_WITHIN_S = 60.0
#: Between the hangup (SIGHUP) and SIGKILL, for a job whose terminal went away.
HANGUP_GRACE_S = 2.0
#: Output kept for a user not attached yet; beyond it the job blocks writing, as on a terminal.
HELD_OUTPUT = 1 << 16
#: How long the terminal is still read after the job ended (its last output).
DRAIN_S = 0.3
#: Attach keys kept per job (each is for one attach; several may be on their way).
MAX_KEYS = 8

_terminals: "weakref.WeakKeyDictionary[Agent, dict[int, Terminal]]" = weakref.WeakKeyDictionary()


def is_interactive(job: dict[str, Any]) -> bool:
    return bool((job.get("options") or {}).get("interactive"))


def terminals(agent: "Agent") -> dict[int, "Terminal"]:
    """The interactive jobs running on ``agent``'s host, by job id."""
    return _terminals.setdefault(agent, {})


def watch(agent: "Agent", jp: JobProcess, near: int) -> None:
    """Relay the terminal of ``jp``, just started by the agent on ``near``'s far side, to its user."""
    term = Terminal(agent, jp, near)
    terminals(agent)[jp.jobid] = term
    threading.Thread(target=term.relay, name=f"terminal-{jp.jobid}", daemon=True).start()


def grant(agent: "Agent", action: AttachKey) -> None:
    """The controller's ``attach`` action: a key its owner's ``xce`` is about to attach with."""
    term = terminals(agent).get(action.jobid)
    if term is None or not action.key:
        log.warning("attach key for job %s ignored: it has no terminal on %s", action.jobid, agent.name)
        return
    if action.run is not None and action.run != term.jp.job.get("run"):
        log.warning("attach key for job %s ignored: it is for another run of the job", action.jobid)
        return
    term.grant(action.key)


def serve(agent: "Agent", conn: socket.socket, req: dict[str, Any], challenge: str) -> None:
    """A task-server connection that asks for a job's terminal: relayed until the job ends."""
    try:
        jobid = int(req["jobid"])
    except (KeyError, TypeError, ValueError):
        _reply(conn, {"error": "malformed attach request"})
        return
    term = terminals(agent).get(jobid)
    if term is None:
        # Its user's ``xce`` hears the job started as soon as the controller placed it, and may come
        # before this worker has had the start: worth a retry while the job has neither run nor ended here.
        _reply(conn, {"error": f"job {jobid} has no terminal on {agent.name} (it is not an interactive job "
                               f"running there)", "retry": agent.attach_later(jobid)})
        return
    term.attach(conn, req, challenge)


class Terminal:
    """The near side of one interactive job's terminal, and the thread that relays it."""

    def __init__(self, agent: "Agent", jp: JobProcess, near: int) -> None:
        self.agent, self.jp, self.near = agent, jp, near
        self.jobid = jp.jobid
        self.lock = threading.Lock()
        self.keys: list[str] = []
        self.claimed = False  # an attach got in: no other may
        self.over = False  # the relay ended: nothing to attach to
        self.conn: socket.socket | None = None  # handed from the attaching connection's thread
        self.finished = threading.Event()  # the relay is done with the connection
        self.wake_r, self.wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.deadline = time.monotonic() + ATTACH_WITHIN_S

    def grant(self, key: str) -> None:
        with self.lock:
            self.keys = [*self.keys, key][-MAX_KEYS:]

    # -- the attaching connection's thread ---------------------------------------------------
    def attach(self, conn: socket.socket, req: dict[str, Any], challenge: str) -> None:
        with self.lock:
            # The key first: a caller without one learns nothing of the terminal's state.
            key = next((k for k in self.keys if taskauth.verify(k, challenge, req)), None)
            if key is None:
                why, retry = f"attaching to job {self.jobid} refused: no attach key from the controller matches", True
            elif self.over:
                why, retry = f"job {self.jobid} has ended", False
            elif self.claimed:
                why, retry = f"job {self.jobid}'s terminal is already attached (one client at a time)", False
            else:
                why, retry = None, False
                self.keys.remove(key)
                self.claimed = True
        if why is not None:
            _reply(conn, {"error": why, "retry": retry})
            return
        ttywire.keep_alive(conn)
        try:
            self._set_mode(bool(req.get("raw", True)))
            self._set_window(int(req.get("rows") or 0), int(req.get("cols") or 0))
        except (OSError, TypeError, ValueError) as exc:
            log.warning("job %s: terminal settings from its client not applied: %s", self.jobid, exc)
        _reply(conn, {"attached": self.jobid})
        log.info("job %s: terminal attached", self.jobid)
        self.conn = conn
        _poke(self.wake_w)
        self.finished.wait()

    def _set_mode(self, raw: bool) -> None:
        """A client whose own terminal is not raw (``-I``) echoes and translates line ends itself."""
        if raw:
            return
        import termios

        attrs = termios.tcgetattr(self.near)
        attrs[1] &= ~termios.OPOST
        attrs[3] &= ~(termios.ECHO | termios.ECHONL)
        termios.tcsetattr(self.near, termios.TCSANOW, attrs)

    def _set_window(self, rows: int, cols: int) -> None:
        if rows > 0 and cols > 0:
            import fcntl
            import struct
            import termios

            fcntl.ioctl(self.near, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    # -- the relay thread ---------------------------------------------------------------------
    def relay(self) -> None:
        try:
            _Relay(self).run()
        except Exception:  # never the worker's end: the job is hung up instead
            log.exception("job %s: terminal relay failed", self.jobid)
            self.hang_up("killed: its terminal failed on the worker (see the worker's log)")
        finally:
            with self.lock:
                self.over = True
            terminals(self.agent).pop(self.jobid, None)
            for fd in (self.near, self.wake_r, self.wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self.finished.set()

    def hang_up(self, reason: str) -> None:
        """What a terminal's hangup does (SIGHUP, and SIGCONT so a stopped job sees it), then SIGKILL
        after a grace: an interactive shell ignores SIGTERM, not SIGHUP."""
        jp = self.jp
        if jp.popen is not None and jp.popen.returncode is not None:
            return
        log.warning("job %s %s", self.jobid, reason)
        if not jp.end_reason:
            jp.end_reason = reason
        jp.signal(signal.SIGHUP)
        jp.box.resume(self.jobid, signal.SIGCONT)
        deadline = time.monotonic() + HANGUP_GRACE_S
        jp.kill_at = deadline if jp.kill_at is None else min(jp.kill_at, deadline)


class _Relay:
    """Bytes between the terminal's near side and the attached client, until the job ends."""

    def __init__(self, term: Terminal) -> None:
        self.term = term
        self.sel = selectors.DefaultSelector()
        self.conn: socket.socket | None = None
        self.held = bytearray()  # output while nobody is attached
        self.to_job = bytearray()  # input the terminal has not taken yet
        self.reader = ttywire.Reader()
        self.eof = False  # every process holding the far side has gone
        self.hung_up = False

    def run(self) -> None:
        term = self.term
        os.set_blocking(term.near, False)
        self.sel.register(term.wake_r, selectors.EVENT_READ, "wake")
        self.sel.register(term.near, selectors.EVENT_READ, "near")
        ended_at = None
        while True:
            now = time.monotonic()
            if self.conn is None and term.conn is not None and not self.hung_up:
                self._take(term.conn)
            if ended_at is None and term.jp.popen is not None and term.jp.popen.returncode is not None:
                ended_at = now
            if ended_at is not None and (self.eof or now - ended_at >= DRAIN_S) and \
                    (self.conn is not None or self.hung_up or now >= term.deadline):
                break  # a job that ended before its user attached keeps its output for them until the deadline
            if not term.claimed and not self.hung_up and now >= term.deadline:
                self.hung_up = True
                term.hang_up(f"killed: no terminal attached within {ATTACH_WITHIN_S:g}s (its xce submit -I "
                             f"went away before the job started?)")
            self._watch_near()
            for key, events in self.sel.select(0.05):
                if key.data == "wake":
                    ttywire.drain(term.wake_r)
                elif key.data == "near":
                    if events & selectors.EVENT_READ:
                        self._from_job()
                    if events & selectors.EVENT_WRITE:
                        self._to_job()
                elif key.data == "conn":
                    self._from_client()
        self._end()

    def _take(self, conn: socket.socket) -> None:
        self.conn = conn
        self.sel.register(conn, selectors.EVENT_READ, "conn")
        if self.held:
            self._send(ttywire.frame(ttywire.OUTPUT, bytes(self.held)))
            self.held.clear()

    def _watch_near(self) -> None:
        """Read the job's output while someone takes it (or there is room to hold it); write its input
        while there is some."""
        events = 0
        if not self.eof and (self.conn is not None or len(self.held) < HELD_OUTPUT):
            events |= selectors.EVENT_READ
        if self.to_job and not self.eof:
            events |= selectors.EVENT_WRITE
        near = self.term.near
        registered = near in self.sel.get_map()
        if events and registered:
            if self.sel.get_key(near).events != events:
                self.sel.modify(near, events, "near")
        elif events:
            self.sel.register(near, events, "near")
        elif registered:
            self.sel.unregister(near)

    def _from_job(self) -> None:
        try:
            data = os.read(self.term.near, 65536)
        except BlockingIOError:
            return
        except OSError:  # EIO: nobody holds the far side any more
            data = b""
        if not data:
            self.eof = True
            return
        if self.conn is not None:
            self._send(ttywire.frame(ttywire.OUTPUT, data))
        else:
            self.held += data

    def _to_job(self) -> None:
        try:
            n = os.write(self.term.near, self.to_job)
        except BlockingIOError:
            return
        except OSError:
            self.to_job.clear()
            return
        del self.to_job[:n]

    def _from_client(self) -> None:
        assert self.conn is not None
        try:
            data = self.conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._gone(f"the connection to its xce submit -I client was lost: {exc.strerror or exc}")
            return
        if not data:
            self._gone("its xce submit -I client disconnected")
            return
        try:
            frames = self.reader.feed(data)
        except ttywire.BadFrame as exc:
            self._gone(f"its client sent garbage ({exc})")
            return
        for kind, payload in frames:
            if kind == ttywire.INPUT:
                self.to_job += payload
            elif kind == ttywire.WINDOW:
                try:
                    self.term._set_window(*ttywire.rows_cols(payload))
                except (OSError, ttywire.BadFrame):
                    pass
        if len(self.to_job) > ttywire.MAX_FRAME:  # a job that reads no input: its terminal's would fill too
            del self.to_job[:len(self.to_job) - ttywire.MAX_FRAME]

    def _gone(self, why: str) -> None:
        """The client is gone: so is the job's terminal."""
        if self.conn is not None:
            self.sel.unregister(self.conn)
            self.conn = None
        if not self.hung_up:
            self.hung_up = True
            self.term.hang_up(f"killed: its terminal went away ({why})")

    def _send(self, data: bytes) -> None:
        if self.conn is None:
            return
        try:
            self.conn.sendall(data)
        except OSError as exc:
            self._gone(f"the connection to its xce submit -I client was lost: {exc.strerror or exc}")

    def _end(self) -> None:
        """The job's end, as its user's exit status: the last frame."""
        jp = self.term.jp
        rc = jp.popen.returncode if jp.popen is not None else None
        end: dict[str, Any] = {"exit": rc, "signal": None, "reason": jp.end_reason}
        if rc is not None and rc < 0:
            end["exit"] = 128 - rc
            try:
                end["signal"] = signal.Signals(-rc).name
            except ValueError:
                end["signal"] = f"SIG{-rc}"
        self._send(ttywire.frame(ttywire.END, json.dumps(end).encode()))
        if self.conn is not None:
            try:
                self.conn.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        self.sel.close()


def _reply(conn: socket.socket, msg: dict[str, Any]) -> None:
    try:
        conn.sendall((json.dumps(msg) + "\n").encode())
    except OSError:
        pass


def _poke(fd: int) -> None:
    try:
        os.write(fd, b"x")
    except OSError:
        pass

