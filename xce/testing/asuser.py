"""Running XCE's front-ends (``sbatch``, ``bsub``, ``xce`` ...) as an ordinary Unix user, many times
and quickly, from a test that runs as root.

Why not ``su USER -c sbatch``: the interpreter of a development machine may live where other users
cannot read it (a 0700 home), so a process that became the user could not start Python, nor import
a module it had not loaded yet. One helper process started here (as root) loads the front-ends and
the standard modules they use, then serves requests from its standard input: for each, it forks a
child that takes all the user's ids and groups before it reads anything, enters the working
directory, and runs the program's ``main`` exactly as its launcher from ``xce compat install``
would (:func:`xce.compat.install.launch`), with the given environment, standard input and
arguments. Each run costs a fork, not an interpreter start.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass

#: Modules loaded before the switch to the user: the front-ends and what they import later, lazily.
PRELOAD = (
    "xce.compat.install", "xce.compat.programs", "xce.compat.slurm.sbatch", "xce.compat.slurm._getopt",
    "xce.compat.slurm.options", "xce.compat.lsf.options", "xce.cli.directives", "xce.compat.optable",
    "xce.compat.slurm.tables", "xce.compat.lsf.tables", "xce.compat.manual", "xce.compat.slurm._states",
    "xce.compat.slurm._api", "xce.compat.lsf.bsub", "xce.compat.lsf._args", "xce.compat.lsf._client",
    "xce.cli.main", "xce.cli.client", "xce.cli.submit", "xce.cli.jobscript", "xce.cli.envcopy",
    "xce.cli.placement", "xce.cli.spec", "xce.client.transport", "xce.client.follow", "xce.client.urls",
    "xce.client.statedir", "xce.jobfiles", "xce.core.quantity", "xce.mail", "xce.mail.asked", "xce.munge",
    "xce.wirejson", "xce.hostlist",
    "json", "shlex", "datetime", "socket", "ssl", "http.client", "urllib.parse", "email.parser",
    "email.feedparser", "encodings.idna", "base64", "hashlib", "hmac", "secrets", "uuid", "re", "string",
    "textwrap", "difflib", "getpass", "pwd", "grp", "signal", "select", "selectors", "tempfile", "shutil",
    "glob", "fnmatch", "stat", "errno", "locale", "decimal", "fractions", "math", "struct", "zlib", "codecs",
    "unicodedata", "calendar", "typing", "dataclasses", "enum", "functools", "itertools", "collections",
    "contextlib", "traceback", "warnings", "logging", "copy", "pathlib", "subprocess", "threading", "queue",
    "random", "bisect", "heapq", "operator", "ctypes", "importlib.metadata", "zoneinfo", "ipaddress",
)

_SERVER = r'''
import importlib, json, os, sys
for m in json.loads(sys.argv[1]):
    try:
        importlib.import_module(m)
    except ImportError:
        pass
uid, gid, name = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
groups = os.getgrouplist(name, gid)
for line in sys.stdin:
    req = json.loads(line)
    rin, win = os.pipe()
    rout, wout = os.pipe()
    rerr, werr = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups(groups); os.setgid(gid); os.setuid(uid)
            os.dup2(rin, 0); os.dup2(wout, 1); os.dup2(werr, 2)
            for fd in (rin, win, rout, wout, rerr, werr):
                os.close(fd)
            os.chdir(req["cwd"])
            os.environ.clear(); os.environ.update(req["env"])
            sys.argv = [req["argv"][0], *req["argv"][1:]]
            from xce.compat.install import launch
            from xce.compat.programs import PROGRAMS
            prog = req["argv"][0]
            launch(prog, PROGRAMS[prog] if prog in PROGRAMS else "xce.cli.main")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code & 0xFF)
        except BaseException as exc:
            try:
                os.write(2, f"asuser: {type(exc).__name__}: {exc}\n".encode())
            finally:
                os._exit(70)
        os._exit(0)
    for fd in (rin, wout, werr):
        os.close(fd)
    import threading
    data = req["stdin"].encode()
    feeder = threading.Thread(target=lambda: (os.write(win, data) if data else None, os.close(win)))
    feeder.start()
    out, err = [], []
    readers = [threading.Thread(target=lambda fd=fd, acc=acc: [acc.append(c) for c in iter(lambda: os.read(fd, 65536), b"")])
               for fd, acc in ((rout, out), (rerr, err))]
    for t in readers: t.start()
    for t in readers: t.join()
    feeder.join()
    os.close(rout); os.close(rerr)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    sys.stdout.write(json.dumps({"rc": code, "stdout": b"".join(out).decode(errors="replace"),
                                 "stderr": b"".join(err).decode(errors="replace")}) + "\n")
    sys.stdout.flush()
'''


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


class AsUser:
    """One helper process for one user; :meth:`run` is safe to call from several threads (the runs
    take turns)."""

    def __init__(self, uid: int, gid: int, name: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVER, json.dumps(PRELOAD), str(uid), str(gid), name],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lock = threading.Lock()

    def run(self, argv: list[str], *, cwd: str, env: dict[str, str], stdin: str = "") -> Result:
        """``argv[0]`` is a program of :data:`xce.compat.programs.PROGRAMS` (else ``xce``'s own main)."""
        with self.lock:
            assert self.proc.stdin and self.proc.stdout
            self.proc.stdin.write(json.dumps({"argv": argv, "cwd": cwd, "env": env, "stdin": stdin}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the helper running {argv[0]} as another user exited ({self.proc.poll()})")
        got = json.loads(line)
        return Result(got["rc"], got["stdout"], got["stderr"])

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self) -> "AsUser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
