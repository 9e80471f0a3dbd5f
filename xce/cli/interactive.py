"""The user's side of an interactive job (``xce submit -I``/``-Is``, LSF's ``bsub -I``/``-Is``; the
building blocks of ``srun --pty`` and ``salloc``): wait for the job to start, then be its terminal.

The job is submitted like any other (``"interactive": true``) and waits its turn; meanwhile LSF's
lines go to stderr (``Job <N> is submitted to queue <Q>.``, ``<<Waiting for dispatch ...>>``,
``<<Starting on HOST>>``) and Ctrl-C kills it. Once it runs, the controller gives its owner, and
nobody else, the address of its terminal on the head host and a key for one attach
(``POST /v1/jobs/ID/attach``); the worker there relays the terminal (:mod:`xce.worker.interactive`).

With ``raw`` (``-Is``, ``-Ip``) and a terminal here, this terminal goes into raw mode: every key,
Ctrl-C and Ctrl-Z included, goes to the job's terminal, whose line discipline makes the signals for
the job's foreground processes, as over ``ssh -t``; window changes follow. Without (``-I``), lines
are edited here and Ctrl-C, Ctrl-Z and Ctrl-\\ are passed on as the keys they came from. The job's
exit status is this command's; if this command goes away (killed, its network gone), the job is
hung up.
"""

from __future__ import annotations

import os
import sys

from xce.cli.client import EXIT_FAILED, EXIT_USAGE, ApiError, Client, Unreachable, describe, fail

#: Job states in which the job has a terminal to attach to.
STARTED = ("RUN", "USUSP", "SSUSP")
ENDED = ("DONE", "EXIT")
#: How long attaching is retried while the worker has not received the key yet.
ATTACH_RETRY_S = 15.0


def prepare(body: dict) -> dict:
    """The submission's body for an interactive job: its terminal type comes from this one."""
    if body.get("array"):
        fail("an interactive job (-I) cannot be an array", EXIT_USAGE)
    env = dict(body.get("env") or {})
    env.setdefault("TERM", os.environ.get("TERM") or "xterm")
    return {**body, "interactive": True, "env": env}


def say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def follow(client: Client, submitted: dict, raw: bool) -> int:
    """Wait for the submitted job to start, then be its terminal; the job's exit status."""
    jobid = int(submitted["jobid"])
    say(f"Job <{jobid}> is submitted to queue <{submitted['queue']}>.")
    say("<<Waiting for dispatch ...>>")
    grant = wait_for_start(client, jobid)
    if isinstance(grant, int):
        return grant
    say(f"<<Starting on {grant['host']}>>")
    return attach(client, grant, raw)


def attach(client: Client, grant: dict, raw: bool) -> int:
    """Be the started job's terminal (``grant``: :func:`wait_for_start`'s); its exit status."""
    try:
        return Session(grant, raw).run()
    except KeyboardInterrupt:  # before the terminal was attached: its worker hangs the job up
        return 130
    except NoTerminal as exc:  # a job that could not start has none: say how it ended, if it did
        job = client.get("/v1/jobs", id=int(grant["jobid"]), all="true")["jobs"][0]
        if job["state"] not in ENDED:
            fail(str(exc))
        return _ended(job)


class NoTerminal(Exception):
    """The head host has no terminal for the job (and waiting would not make one)."""


def _ended(job: dict) -> int:
    say(f"<<Job {job['jobid']} ended before its terminal was attached: {job.get('reason') or job['state']}>>")
    return int(job["exit_code"]) if job.get("exit_code") is not None else EXIT_FAILED


class _Interrupted(Exception):
    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def wait_for_start(client: Client, jobid: int) -> dict | int:
    """The attach grant once the job runs, or the exit status if it ended first or was interrupted
    here (Ctrl-C, a hangup or a kill of this command kill the waiting job: nobody would attach)."""
    import signal
    import time

    def interrupted(signum, _frame):
        raise _Interrupted(signum)

    caught = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    before = {s: signal.signal(s, interrupted) for s in caught}
    delay = 0.05
    unreachable = False
    try:
        while True:
            try:
                job = client.get("/v1/jobs", id=jobid, all="true")["jobs"][0]
                if job["state"] in STARTED:
                    return client.post(f"/v1/jobs/{jobid}/attach")
            except ApiError as exc:
                if exc.status != 409:  # 409: it ended or was requeued since; the next look says which
                    fail("; ".join(describe(exc)))
                time.sleep(delay)
                continue
            except Unreachable as exc:  # a controller's restart or takeover: the job is still there
                if not unreachable:
                    say(f"xce: {exc}; still trying")
                unreachable = True
                time.sleep(1.0)
                continue
            unreachable = False
            if job["state"] in ENDED:
                try:  # ended before this look: its head host may still hold its output for us
                    return client.post(f"/v1/jobs/{jobid}/attach")
                except ApiError:
                    return _ended(job)
            time.sleep(delay)
            delay = min(1.0, delay * 1.5)
    except _Interrupted as exc:
        for s in caught:
            signal.signal(s, signal.SIG_IGN)  # one kill, however often the key is pressed
        if os.isatty(2):
            sys.stderr.write("\n")  # after the terminal's ^C
        try:
            client.post(f"/v1/jobs/{jobid}/kill")
            say(f"<<Job {jobid} killed: interrupted while waiting for dispatch>>")
        except (ApiError, Unreachable) as err:
            say(f"xce: job {jobid} was interrupted but could not be killed ({err}); kill it with xce kill {jobid}")
        return 128 + exc.signum
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


class Session:
    """This terminal, relayed to the job's."""

    def __init__(self, grant: dict, raw: bool) -> None:
        self.grant = grant
        self.jobid = int(grant["jobid"])
        self.tty = os.isatty(0)
        self.raw = raw and self.tty
        self.sock = None
        self.leftover = b""

    def run(self) -> int:
        from xce.worker import ttywire

        self._connect()
        reader = ttywire.Reader()
        early = reader.feed(self.leftover)
        saved = self._enter_raw()
        try:
            return self._relay(reader, early)
        finally:
            self._leave_raw(saved)
            self.sock.close()

    # -- attaching ------------------------------------------------------------------------
    def _connect(self) -> None:
        """Connect to the head host's task server and prove the key; retried while the key is on its
        way to the worker."""
        import time

        addr, _, port = str(self.grant["address"]).rpartition(":")
        deadline = time.monotonic() + ATTACH_RETRY_S
        while True:
            try:
                reply = self._handshake(addr.strip("[]"), int(port))
            except (OSError, ValueError) as exc:
                fail(f"cannot reach the terminal of job {self.jobid} on {self.grant['host']} at "
                     f"{self.grant['address']}: {exc}")
            if "attached" in reply:
                return
            self.sock.close()
            if not reply.get("retry") or time.monotonic() > deadline:
                raise NoTerminal(f"{reply.get('error') or 'attaching refused'} (on {self.grant['host']})")
            time.sleep(0.1)

    def _handshake(self, addr: str, port: int) -> dict:
        import json
        import socket

        from xce.worker import taskauth, ttywire

        self.sock = sock = socket.create_connection((addr, port), timeout=10)
        nonce = json.loads(self._line())["nonce"]
        rows, cols = _size()
        request = {"jobid": self.jobid, "attach": True, "rows": rows, "cols": cols, "raw": self.raw}
        sock.sendall((json.dumps(taskauth.sign(str(self.grant["key"]), str(nonce), request)) + "\n").encode())
        reply = json.loads(self._line())
        if not isinstance(reply, dict):
            raise ValueError("the worker's answer is not a JSON object")
        sock.settimeout(None)
        ttywire.keep_alive(sock)
        return reply

    def _line(self) -> bytes:
        """One JSON line of the handshake; what came after it is the first frames'."""
        buf = self.leftover
        while b"\n" not in buf:
            chunk = self.sock.recv(4096)
            if not chunk or len(buf) > 65536:
                raise OSError("the worker closed the connection")
            buf += chunk
        line, _, self.leftover = buf.partition(b"\n")
        return line

    # -- the terminal -----------------------------------------------------------------------
    def _enter_raw(self):
        if not self.raw:
            return None
        import termios
        import tty

        saved = termios.tcgetattr(0)
        tty.setraw(0, termios.TCSANOW)
        return saved

    def _leave_raw(self, saved) -> None:
        if saved is not None:
            import termios

            try:
                termios.tcsetattr(0, termios.TCSADRAIN, saved)
            except termios.error:
                pass

    def _relay(self, reader, early: list) -> int:
        import json
        import select
        import signal

        from xce.worker import ttywire

        wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        pending: list[int] = []

        def note(signum, _frame):
            pending.append(signum)

        # Keys typed here (not in raw mode) or signals sent to this command: passed on as those keys.
        watched = [signal.SIGWINCH, signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT]
        if not self.raw:
            watched.append(signal.SIGTSTP)
        before = {s: signal.signal(s, note) for s in watched}
        old_wakeup = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        keys = {signal.SIGINT: b"\x03", signal.SIGTSTP: b"\x1a", signal.SIGQUIT: b"\x1c"}
        stdin_open = True
        frames = early
        try:
            while True:
                for kind, payload in frames:
                    if kind == ttywire.OUTPUT:
                        _write_all(1, payload)
                    elif kind == ttywire.END:
                        return self._ended(json.loads(payload))
                frames = []
                while pending:
                    signum = pending.pop(0)
                    if signum == signal.SIGWINCH:
                        self.sock.sendall(ttywire.window(*_size()))
                    elif signum in keys:
                        self.sock.sendall(ttywire.frame(ttywire.INPUT, keys[signum]))
                    else:  # this command is told to go: so is the job's terminal
                        return 128 + signum
                ready, _, _ = select.select([self.sock, wake_r] + ([0] if stdin_open else []), [], [])
                if wake_r in ready:
                    ttywire.drain(wake_r)
                if 0 in ready:
                    data = os.read(0, 65536)
                    if not data:  # no more input (a pipe, or ^D here): the terminal's end-of-file
                        stdin_open = False
                        data = b"\x04"
                    self.sock.sendall(ttywire.frame(ttywire.INPUT, data))
                if self.sock in ready:
                    data = self.sock.recv(65536)
                    if not data:
                        self._leave_raw_now()
                        say(f"xce: lost the connection to job {self.jobid}'s terminal on {self.grant['host']}")
                        return EXIT_FAILED
                    frames = reader.feed(data)
        except (OSError, ttywire.BadFrame) as exc:
            self._leave_raw_now()
            say(f"xce: lost the connection to job {self.jobid}'s terminal on {self.grant['host']}: {exc}")
            return EXIT_FAILED
        finally:
            signal.set_wakeup_fd(old_wakeup)
            for s, handler in before.items():
                signal.signal(s, handler)
            os.close(wake_r)
            os.close(wake_w)

    def _leave_raw_now(self) -> None:
        """Messages after this are read on a sane terminal (raw mode is left again by run(); harmless)."""
        if self.raw:
            import termios

            try:
                attrs = termios.tcgetattr(0)
                attrs[1] |= termios.OPOST | termios.ONLCR
                termios.tcsetattr(0, termios.TCSANOW, attrs)
            except termios.error:
                pass

    def _ended(self, end: dict) -> int:
        self._leave_raw_now()
        if end.get("reason"):
            say(f"<<Job {self.jobid} {end['reason']}>>" if str(end["reason"]).startswith("killed")
                else f"<<Job {self.jobid}: {end['reason']}>>")
        code = end.get("exit")
        return int(code) if code is not None else EXIT_FAILED


def _size() -> tuple[int, int]:
    for fd in (0, 1, 2):
        try:
            cols, rows = os.get_terminal_size(fd)
            return rows, cols
        except OSError:
            continue
    return 0, 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            import select

            select.select([], [fd], [])
            continue
        view = view[n:]

