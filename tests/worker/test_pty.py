"""The start of an interactive job (``LaunchSpec.tty``): the same start as every job's, with a new
pseudo-terminal as the job's stdin, stdout, stderr and controlling terminal.

Each test reads the near side as the worker does and checks what a person at a terminal relies on:
the job sees a terminal, leads its own session on it, gets SIGINT from a typed Ctrl-C in its
foreground process group, sees window changes, and its exit status comes back. Run as root, the far
side belongs to the job's owner and the job runs as them.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import select
import signal
import struct
import termios
import time

import pytest

from xce.worker import launch
from xce.worker.identity import StartError, resolve_identity
from xce.worker.launch import LaunchSpec

PATH = "/usr/local/bin:/usr/bin:/bin"


class Near:
    """The worker's side of the terminal: what the job wrote so far, and a way to type."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.seen = b""

    def until(self, needle: bytes, timeout: float = 10.0) -> bytes:
        deadline = time.monotonic() + timeout
        while needle not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {needle!r}; the terminal showed {self.seen!r}"
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:  # EIO: the job and everything it started closed the terminal
                    data = b""
                assert data, f"the terminal closed before {needle!r}; it showed {self.seen!r}"
                self.seen += data
        return self.seen

    def type(self, text: bytes) -> None:
        os.write(self.fd, text)


@pytest.fixture
def started():
    """start(argv, identity=None) -> (child, Near); everything it started is killed afterwards."""
    made: list[tuple[launch.Child, int]] = []

    def start(argv: list[str], ident=None, cwd: str = "/") -> tuple[launch.Child, Near]:
        ident = ident or resolve_identity("", run_as_self=True, allow_root=True)
        near, far = launch.terminal(ident)
        spec = LaunchSpec(argv=argv, env={"PATH": PATH, "TERM": "xterm", "HOME": ident.home or "/"}, cwd=cwd,
                          stdout="/nonexistent/out", stderr="/nonexistent/err", identity=ident)
        try:
            child = launch.launch(dataclasses.replace(spec, tty=far))
        finally:
            os.close(far)
        made.append((child, near))
        return child, Near(near)

    yield start
    for child, near in made:
        if child.poll() is None:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except OSError:
                pass
            child.wait(5)
        os.close(near)


def test_the_job_has_a_terminal_as_its_controlling_terminal_and_no_output_files(started):
    child, near = started(["sh", "-c", "test -t 0 && test -t 1 && test -t 2 && echo ALL-TTY; "
                                       "echo via-dev-tty > /dev/tty; ps -o sid= -o tpgid= -p $$; echo END"])
    shown = near.until(b"END")
    assert b"ALL-TTY" in shown and b"via-dev-tty" in shown
    sid, tpgid = shown.split(b"via-dev-tty")[1].split()[:2]
    # it leads its session, and the terminal's foreground group is the job's own
    assert int(sid) == child.pid and int(tpgid) == child.pid
    assert child.wait(10) == 0
    assert not os.path.exists("/nonexistent/out")


def test_a_typed_ctrl_c_interrupts_the_foreground_command_not_the_shell(started):
    child, near = started(["sh", "-c", "trap 'echo SHELL-GOT-INT' INT; sleep 30; echo AFTER-SLEEP rc=$?; exit 7"])
    time.sleep(0.5)  # sleep is running in the foreground
    near.type(b"\x03")
    shown = near.until(b"AFTER-SLEEP")
    assert b"rc=130" in shown  # sleep died of SIGINT, the line discipline made it
    assert child.wait(10) == 7


def test_a_window_change_reaches_the_job(started):
    child, near = started(["sh", "-c", "stty size; trap 'stty size; exit 4' WINCH; echo READY; "
                                       "while :; do sleep 0.05; done"])
    near.until(b"READY")
    assert b"24 80" in near.seen
    fcntl.ioctl(near.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 132, 0, 0))
    near.until(b"40 132")
    assert child.wait(10) == 4


def test_input_typed_reaches_the_job_and_the_line_discipline_echoes_it(started):
    child, near = started(["sh", "-c", "read line; echo \"got <$line>\""])
    near.type(b"hello there\n")
    shown = near.until(b"got <hello there>")
    assert shown.startswith(b"hello there")  # the echo, before the job's answer
    assert child.wait(10) == 0


def test_a_command_that_cannot_start_is_a_reason_not_a_terminal(started):
    with pytest.raises(StartError, match="command not found: no-such-command-xce"):
        started(["no-such-command-xce"])


@pytest.mark.skipif(os.getuid() != 0, reason="the terminal of another user needs a root worker")
def test_as_root_the_terminal_and_the_job_are_the_owners(started, tmp_path):
    import pwd

    nobody = pwd.getpwnam("nobody")
    ident = resolve_identity("nobody", run_as_self=False, allow_root=False)
    child, near = started(["sh", "-c", "id -u; stat -c '%u %a' $(tty); echo END"], ident=ident)
    shown = near.until(b"END").split()
    assert shown[0] == str(nobody.pw_uid).encode()
    assert shown[1:3] == [str(nobody.pw_uid).encode(), b"620"]  # its owner's, not readable by others
    assert child.wait(10) == 0
