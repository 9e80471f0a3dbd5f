"""``xce submit -Is`` driven as a person would, through a terminal (tmux), against a live cluster.

Each test runs ``xce`` inside its own tmux server (a unique socket name, killed afterwards even
when the test fails), types into it and reads the screen with ``capture-pane``: the job's shell
answers, sees window changes, takes Ctrl-C for the command in its foreground, runs a full-screen
program, and its exit status is ``xce``'s; a client that dies takes its job with it; Ctrl-C while
the job waits kills it. Needs tmux (tools/system-packages.txt).
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

if shutil.which("tmux") is None:
    pytest.fail("tmux is needed for the interactive job tests (tools/system-packages.txt)", pytrace=False)

SHELL = ["bash", "--norc", "--noprofile"]


class Screen:
    """A terminal of ``width`` x ``height`` running ``xce ARGS`` (a tmux session on a private server)."""

    def __init__(self, base: Path, env: dict[str, str], cwd: Path) -> None:
        self.base, self.env, self.cwd = base, env, cwd
        self.server = f"xce-test-{secrets.token_hex(6)}"
        self.rc_file = base / f"{self.server}.rc"
        self.pid_file = base / f"{self.server}.pid"

    def tmux(self, *args: str, check: bool = True) -> str:
        r = subprocess.run(["tmux", "-L", self.server, "-f", "/dev/null", *args], capture_output=True, text=True,
                           timeout=30)
        if check and r.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)}: {r.stderr}")
        return r.stdout

    def start(self, args: list[str], width: int = 100, height: int = 30) -> "Screen":
        """``xce ARGS`` in the terminal; its exit status lands in ``rc_file``, its pid in ``pid_file``."""
        script = self.base / f"{self.server}.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in self.env.items())
        script.write_text(
            "#!/bin/sh\n" + exports + f"cd {shlex.quote(str(self.cwd))}\n"
            "trap true INT\n"  # the terminal's Ctrl-C is for xce, not for this wrapper
            f"echo $$ > {shlex.quote(str(self.pid_file))}\n"
            f"{shlex.quote(sys.executable)} -m xce.cli.main {' '.join(shlex.quote(a) for a in args)}\n"
            f"echo $? > {shlex.quote(str(self.rc_file))}\n"
            "exec sleep 600\n")
        script.chmod(0o755)
        self.tmux("new-session", "-d", "-s", "main", "-x", str(width), "-y", str(height), str(script))
        self.tmux("set-option", "-g", "status", "off")
        return self

    def close(self) -> None:
        self.tmux("kill-server", check=False)

    def text(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "main")

    def wait(self, pattern: str, timeout: float = 30.0) -> re.Match:
        return wait_for(lambda: re.search(pattern, self.text(), re.M), timeout,
                        lambda: f"{pattern!r} on the screen, which shows:\n{self.text()}")

    def type(self, line: str) -> None:
        self.tmux("send-keys", "-t", "main", "-l", line)
        self.tmux("send-keys", "-t", "main", "Enter")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "main", *keys)

    def size(self) -> tuple[int, int]:
        rows, cols = self.tmux("display-message", "-p", "-t", "main", "#{pane_height} #{pane_width}").split()
        return int(rows), int(cols)

    def client_pid(self) -> int:
        """The pid of xce itself (the wrapper's child)."""
        shell = int(wait_for(lambda: self.pid_file.exists() and self.pid_file.read_text().strip(), 15, "a pid"))
        def child() -> int | None:
            out = subprocess.run(["pgrep", "-P", str(shell), "-f", "xce.cli.main"], capture_output=True, text=True)
            return int(out.stdout.split()[0]) if out.stdout.split() else None
        return wait_for(child, 15, "xce to run")

    def exit_status(self, timeout: float = 30.0) -> int:
        return int(wait_for(lambda: self.rc_file.exists() and self.rc_file.read_text().strip(), timeout,
                            lambda: f"xce to exit; the screen shows:\n{self.text()}"))


@pytest.fixture
def screens(tmp_path):
    """screen(cluster, cli) -> a Screen for that cluster; every tmux server is killed afterwards."""
    made: list[Screen] = []

    def make(cluster, cli) -> Screen:
        s = Screen(tmp_path, {**cluster.env(), "TERM": "xterm"}, cli.cwd)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def jobid_on(screen: Screen) -> int:
    return int(screen.wait(r"^Job <(\d+)> is submitted to queue <\w+>\.$").group(1))


def test_an_interactive_shell_is_the_users_terminal(make_cluster, screens):
    cluster, cli = make_cluster(workers=1, slots=1)
    pages = cli.cwd / "pages.txt"
    pages.write_text("".join(f"line-{i:03d}\n" for i in range(1, 201)))
    screen = screens(cluster, cli).start(["submit", "-Is", "--", *SHELL])
    jobid = jobid_on(screen)
    screen.wait(r"^<<Waiting for dispatch \.\.\.>>$")
    screen.wait(r"^<<Starting on \S+>>$")
    assert screen.text().index("Job <") < screen.text().index("<<Waiting") < screen.text().index("<<Starting")
    screen.type("PS1='xce$ '; clear")
    screen.wait(r"^xce\$\s*$")

    # a command typed, its output read; it runs as a job: in its container, with the job's variables
    screen.type("echo result=$((6*7)) job=$XCE_JOBID; test -t 0 && echo on-a-tty")
    screen.wait(rf"^result=42 job={jobid}$")
    screen.wait(r"^on-a-tty$")
    assert cli.job(jobid)["state"] == "RUN"

    # the window size is the terminal's, and follows it
    rows, cols = screen.size()
    screen.type("clear; stty size; tput cols")
    screen.wait(rf"^{rows} {cols}\n{cols}$")
    screen.tmux("resize-window", "-t", "main", "-x", "132", "-y", "40")
    rows, cols = wait_for(lambda: (s := screen.size()) != (rows, cols) and s, 10, "tmux to resize")
    assert cols == 132
    screen.type("clear; stty size; tput cols")
    screen.wait(rf"^{rows} 132\n132$")

    # Ctrl-C interrupts the command in the foreground, not the session
    screen.type("clear; sleep 100")
    time.sleep(1.0)
    screen.keys("C-c")
    screen.wait(r"^\^C$", timeout=10)
    screen.type("echo sleep-ended=$?")  # the shell was not interrupted: it tells how sleep ended
    screen.wait(r"^sleep-ended=130$", timeout=10)

    # a full-screen program: its first page, its last, and back to the shell
    screen.type(f"clear; less {pages.name}")
    screen.wait(r"^line-001$")
    assert "line-200" not in screen.text()
    screen.keys("G")
    screen.wait(r"^line-200$")
    screen.keys("q")
    screen.type("clear; echo back-from-less")
    screen.wait(r"^back-from-less$")

    # the shell's exit status is xce's, and the job's
    screen.type("exit 3")
    assert screen.exit_status() == 3
    job = cli.wait_state(jobid, "EXIT")
    assert job["exit_code"] == 3


def test_the_job_ends_when_its_terminal_goes_away(make_cluster, screens):
    cluster, cli = make_cluster(workers=1, slots=1)
    screen = screens(cluster, cli).start(["submit", "-Is", "--", *SHELL])
    jobid = jobid_on(screen)
    screen.wait(r"^<<Starting on \S+>>$")
    screen.type("echo ready-$XCE_JOBID")
    screen.wait(rf"^ready-{jobid}$")
    os.kill(screen.client_pid(), signal.SIGKILL)
    job = cli.wait_state(jobid, "EXIT", timeout=30)
    assert "terminal went away" in job["reason"], job["reason"]
    assert cli.job(jobid)["exit_code"] == 128 + signal.SIGHUP


def test_ctrl_c_while_waiting_for_dispatch_kills_the_pending_job(make_cluster, screens):
    cluster, cli = make_cluster(workers=1, slots=1)
    blocker = cli.submit("--", "sleep", "120")
    cli.wait_state(blocker, "RUN")
    screen = screens(cluster, cli).start(["submit", "-Is", "--", *SHELL])
    jobid = jobid_on(screen)
    screen.wait(r"^<<Waiting for dispatch \.\.\.>>$")
    assert cli.job(jobid)["state"] == "PEND"
    screen.keys("C-c")
    screen.wait(rf"^<<Job {jobid} killed: interrupted while waiting for dispatch>>$", timeout=15)
    assert screen.exit_status() == 128 + signal.SIGINT
    job = cli.wait_state(jobid, "EXIT")
    assert "killed by" in job["reason"]
    assert "<<Starting" not in screen.text()
    cli("kill", str(blocker))


def test_without_a_pty_mode_input_and_output_pass_through_unchanged(make_cluster):
    """``-I`` with a pipe as input: lines in, the same lines out, and end-of-input is the job's."""
    cluster, cli = make_cluster(workers=1, slots=1)
    r = subprocess.run([sys.executable, "-m", "xce.cli.main", "submit", "-I", "--", "sh", "-c",
                        "while read l; do echo \"got $l\"; done; echo end-of-input; exit 5"],
                       input="one\ntwo\n", env=cluster.env(), cwd=cli.cwd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 5, r.stderr
    assert r.stdout == "got one\ngot two\nend-of-input\n"
    assert re.search(r"^<<Starting on \S+>>$", r.stderr, re.M)


def test_a_job_that_ends_before_its_user_attaches_still_shows_its_output_and_status(make_cluster):
    """``bsub -I hostname``: the job is often over before its user's ``xce`` looks again; its output
    and exit status are kept on its host for it. A job that could not start says why."""
    cluster, cli = make_cluster(workers=1, slots=2)
    clients = [subprocess.Popen([sys.executable, "-m", "xce.cli.main", "submit", "-I", "--", "sh", "-c",
                                 f"echo quick-{i}; exit 3"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=cluster.env(), cwd=cli.cwd, text=True) for i in range(4)]
    for i, c in enumerate(clients):
        out, err = c.communicate(timeout=60)
        assert (c.returncode, out) == (3, f"quick-{i}\n"), err
    r = subprocess.run([sys.executable, "-m", "xce.cli.main", "submit", "-I", "--", "no-such-command-here"],
                       stdin=subprocess.DEVNULL, env=cluster.env(), cwd=cli.cwd, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0 and "ended before its terminal was attached" in r.stderr, r.stderr


def test_attach_is_refused_for_a_batch_job_and_one_not_started(make_cluster):
    cluster, cli = make_cluster(workers=1, slots=1)

    def attach(jobid: int) -> tuple[int, str]:
        with cluster.session(cluster.token("admin")) as http:
            r = http.post(f"/v1/jobs/{jobid}/attach", json={})
        return r.status_code, r.json().get("detail", "")

    batch = cli.submit("--", "sleep", "60")
    cli.wait_state(batch, "RUN")
    status, why = attach(batch)
    assert status == 409 and "not interactive" in why
    waiting = cluster.request("POST", "/v1/jobs", {"command": ["true"], "interactive": True})["jobid"]
    status, why = attach(waiting)
    assert status == 409 and "PEND" in why
    assert attach(999_999)[0] == 404
    cli("kill", str(batch), str(waiting))
