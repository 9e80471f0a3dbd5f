"""Putting the LSF and Slurm front-ends where a site can reach them, and nowhere else.

Why a directory of launchers and not console scripts: console scripts land in the virtualenv's
``bin``, which is on the PATH of anyone who uses ``xce``; a ``bsub`` there would shadow a real LSF on
the same machine. The launchers go into a directory of their own (``<prefix>/libexec/xce-compat/bin``),
which a site or a user puts first on PATH on purpose (``PATH=$(xce compat path):$PATH``).

Each launcher is four lines run by this interpreter, so that starting ``bjobs`` costs what starting
``xce`` costs: the interpreter, the program's module, nothing else. :func:`launch` is the part they
share; this module imports only what the interpreter has already loaded, because every launcher
imports it.
"""

from __future__ import annotations

import os
import sys

#: The second line of every launcher: how the installer knows a file is its own and may be replaced.
MARK = "# xce compat launcher:"


#: A directory of the site's choice instead of the one inside the installation (a shared file system).
DIR_ENV = "XCE_COMPAT_DIR"


def default_dir() -> str:
    """``$XCE_COMPAT_DIR``, else inside the installation (not on PATH): one per virtualenv or prefix."""
    return os.environ.get(DIR_ENV) or os.path.join(sys.prefix, "libexec", "xce-compat", "bin")


def launcher_text(program: str, module: str, python: str | None = None) -> str:
    return (f"#!{python or sys.executable}\n"
            f"{MARK} {program} -> {module} (rewritten by `xce compat install`)\n"
            f"from xce.compat.install import launch\n"
            f"launch({program!r}, {module!r})\n")


def launch(program: str, module: str) -> None:
    """Run ``module.main(argv)`` as the program ``program`` and end the process with its status.

    The interpreter's teardown is skipped once the output is flushed (as ``xce``'s quick commands
    do) when no other thread is left to finish: a status poll run in a loop by a workflow tool pays
    for its start and its request, not for freeing memory."""
    try:
        main = __import__(module, fromlist=["main"]).main
    except ModuleNotFoundError as exc:
        if not exc.name or not module.startswith(exc.name):
            raise
        sys.stderr.write(f"{program}: not available in this XCE installation (no module {module}); "
                         f"run `xce compat install` again after upgrading XCE\n")
        sys.stderr.flush()
        os._exit(1)
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        code = 130
    if code is None:
        code = 0
    elif not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        pass
    threading = sys.modules.get("threading")
    if threading is None or threading.active_count() <= 1:
        os._exit(code & 0xFF)
    raise SystemExit(code)


def out_of_reach(targets: list[str] | None = None) -> str | None:
    """Why another user could not run the launchers, or None: the interpreter they start
    (``#!`` names it), the standard library and XCE itself must be readable, and every directory
    above them searchable, by everyone (a Python built under ``/root``, mode 0700, is not)."""
    import stat

    if targets is None:
        targets = [os.path.realpath(sys.executable), os.path.dirname(os.path.realpath(os.__file__)),
                   os.path.dirname(os.path.dirname(os.path.realpath(__file__)))]
    for target in targets:
        path = "/"
        for part in target.strip("/").split("/"):
            path = os.path.join(path, part)
            try:
                mode = os.stat(path).st_mode
            except OSError as exc:
                return f"{path}: {exc.strerror}"
            # a directory on the way must be searchable; the target itself readable (and searchable
            # or executable: a directory of modules, the interpreter)
            need = stat.S_IXOTH | (stat.S_IROTH if path == target else 0)
            if mode & need != need:
                return f"{path} is {stat.filemode(mode)}, so other users cannot reach {target}"
    return None


class InstallError(Exception):
    """The directory cannot take the launchers; the message says which file or why."""


def _is_ours(path: str) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            f.readline()
            return f.readline().startswith(MARK)
    except OSError:
        return False


def stale(directory: str, programs: dict[str, str] | None = None) -> list[str]:
    """The programs whose launcher in ``directory`` is missing or not what :func:`install` writes now
    (another interpreter, a program added to the table)."""
    if programs is None:
        from xce.compat.programs import LAUNCHERS as programs
    out = []
    for name, module in programs.items():
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                if f.read() == launcher_text(name, module) and os.access(f.name, os.X_OK):
                    continue
        except (OSError, UnicodeDecodeError):
            pass
        out.append(name)
    return out


def install(directory: str | None = None, programs: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """Write one launcher per program into ``directory`` (created if need be); returns the directory and
    the programs written. A file there that is not one of XCE's launchers (a real ``bsub``) is never
    overwritten: :class:`InstallError` names it and nothing is written."""
    if programs is None:
        from xce.compat.programs import LAUNCHERS as programs
    directory = os.path.abspath(directory or default_dir())
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise InstallError(f"cannot create {directory}: {exc.strerror}") from None
    foreign = [n for n in programs if os.path.lexists(p := os.path.join(directory, n)) and not _is_ours(p)]
    if foreign:
        raise InstallError(f"{directory} already holds {', '.join(sorted(foreign))}, not written by XCE; "
                           f"choose another directory (a real LSF or Slurm must not be overwritten)")
    written = []
    for name in stale(directory, programs):
        target = os.path.join(directory, name)
        tmp = f"{target}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(launcher_text(name, programs[name]))
            os.chmod(tmp, 0o755)
            os.replace(tmp, target)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise InstallError(f"cannot write {target}: {exc.strerror}") from None
        written.append(name)
    return directory, written
