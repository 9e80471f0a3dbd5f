"""Job scripts spooled on the execution host, as Slurm's slurmd and LSF's sbatchd keep them.

A script is stored with its job at submission (the submitted file may be deleted at once, as
workflow tools do with their temporary scripts) and reaches the worker in the start action. The
worker writes it to ``<spool>/job<ID>.script`` and the job runs that copy:

* **who may read it**: the spool directory is root's, mode 0711 (anyone may pass through it, nobody
  but root may list it or create anything in it); the file is created there by the worker with
  ``O_EXCL | O_NOFOLLOW`` (nothing a user placed can be followed or reused) and then given to the
  job's owner with mode 0500: only the owner (and root) can read it, whatever the other users know
  of its name;
* **how it runs**: under the interpreter its ``#!`` line names, read here exactly as the kernel
  reads it (the interpreter, then at most one argument: the rest of the line), and started as
  ``INTERPRETER [ARG] FILE ARGS...``: the same as executing the file, but also from a spool on a
  ``noexec`` mount, and whatever the mode bits of the submitted file were; with no ``#!`` line, by
  ``/bin/sh`` (as LSF runs a job script);
* **how long it lives**: until the job ends on this host (the reaper removes it); files of jobs a
  restarted worker did not adopt are removed when it starts. The controller keeps its copy as
  long as it keeps the job's record.

The worker writes the file as root but never into a directory a user can write to, so no path of
the user's choosing is ever touched with its rights.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The kernel reads at most this much of a ``#!`` line (BINPRM_BUF_SIZE since Linux 5.1).
SHEBANG_MAX = 256


def interpreter(script: str) -> list[str]:
    """The argv prefix that runs ``script``: its ``#!`` interpreter and argument, or ``/bin/sh``."""
    if not script.startswith("#!"):
        return ["/bin/sh"]
    line = script[2:SHEBANG_MAX].split("\n", 1)[0].lstrip(" \t").rstrip(" \t\r")
    if not line:
        return ["/bin/sh"]
    end = next((i for i, c in enumerate(line) if c in " \t"), len(line))
    arg = line[end:].lstrip(" \t")
    return [line[:end], arg] if arg else [line[:end]]


class Spool:
    """The host's spool directory of job scripts."""

    def __init__(self, path: Path, switch_users: bool) -> None:
        self.path = path
        self.switch_users = switch_users
        path.mkdir(parents=True, exist_ok=True, mode=0o711)
        if switch_users:
            st = path.stat()
            if st.st_uid != os.getuid():
                raise RuntimeError(f"spool directory {path} belongs to uid {st.st_uid}, not to the worker's user")
            os.chmod(path, 0o711)

    def file(self, jobid: int) -> Path:
        return self.path / f"job{jobid}.script"

    def write(self, jobid: int, script: str, uid: int, gid: int) -> str:
        """The job's copy of ``script``, owned by its owner (``uid``, ``gid``) and readable by nobody else."""
        path = self.file(jobid)
        self.remove(jobid)  # a run before a requeue, or a worker crash, may have left it
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o500)
        try:
            if self.switch_users:
                os.fchown(fd, uid, gid)
            data = script.encode("utf-8", "surrogateescape")
            while data:
                data = data[os.write(fd, data):]
        except BaseException:
            os.close(fd)
            self.remove(jobid)
            raise
        os.close(fd)
        return str(path)

    def argv(self, jobid: int, script: str, args: list[str], uid: int, gid: int) -> list[str]:
        """Write the job's copy and return the command that runs it with ``args``."""
        return [*interpreter(script), self.write(jobid, script, uid, gid), *args]

    def remove(self, jobid: int) -> None:
        try:
            os.unlink(self.file(jobid))
        except FileNotFoundError:
            pass

    def keep_only(self, jobids: set[int]) -> None:
        """Remove the scripts of every job but ``jobids`` (a restarted worker's adopted jobs)."""
        for entry in os.scandir(self.path):
            name = entry.name
            if name.startswith("job") and name.endswith(".script") and name[3:-7].isdigit() \
                    and int(name[3:-7]) not in jobids:
                self.remove(int(name[3:-7]))
