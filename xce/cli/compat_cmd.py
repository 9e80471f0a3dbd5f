"""``xce compat``: install the LSF and Slurm front-ends (``bsub``, ``sbatch``, ...) and LSF's files.

The front-ends go into a directory of their own, never on PATH by themselves, so that a machine with
a real LSF or Slurm keeps it; a site puts ``$(xce compat path)`` first on its users' PATH where XCE is
the scheduler (docs/compat.md).
"""

from __future__ import annotations

import sys

from xce.cli.spec import Arg, Command, Group, Opt, common_options, path


def _install_or_fail(directory: str | None) -> str:
    from xce.cli.client import fail
    from xce.compat.install import InstallError, install

    try:
        where, _ = install(directory)
    except InstallError as exc:
        fail(str(exc))
    return where


#: What to do when the launchers' interpreter is out of other users' reach.
REACH_FIX = ("install XCE where every user can read it (a virtualenv under /opt made by a Python outside any "
             "home directory; docs/compat.md), or give --only-me for launchers that only you run")


def install_cmd(directory, only_me: bool) -> None:
    from xce.cli.client import fail
    from xce.compat.install import out_of_reach
    from xce.compat.programs import LAUNCHERS, PROGRAMS

    if not only_me and (why := out_of_reach()) is not None:
        fail(f"other users could not run the LSF and Slurm commands: {why}; {REACH_FIX}")
    where = _install_or_fail(str(directory) if directory else None)
    print(f"{len(PROGRAMS)} commands in {where}: {' '.join(PROGRAMS)}")
    print(f"{len(LAUNCHERS) - len(PROGRAMS)} other LSF and Slurm command names there say that XCE does not "
          "provide them, so that none falls through to another scheduler's")
    print(f'Put them first on PATH where XCE is the scheduler: export PATH="{where}:$PATH"')
    _install_manuals(where)


def _install_manuals(where: str, quiet: bool = False) -> None:
    """Their man pages and xce's where ``man`` looks (``../share/man`` of each PATH directory); a
    directory that cannot take them is said, and the commands stay installed."""
    from xce.cli.manpage import install

    try:
        pages = install(where)
    except OSError as exc:
        print(f"xce compat: warning: manual pages not written: {exc}", file=sys.stderr)
        return
    if quiet:  # `xce compat path` prints the directory alone
        return
    print(f"Manual pages in {pages[0].parent} and {pages[-1].parent} (man sbatch, man bjobs, man xce)")


def path_cmd() -> None:
    """Prints the directory only, for ``PATH="$(xce compat path):$PATH"``; installs first if need be."""
    from xce.compat.install import default_dir, out_of_reach, stale

    where = default_dir()
    if stale(where):
        where = _install_or_fail(None)
        _install_manuals(where, quiet=True)
    sys.stdout.write(where + "\n")
    if (why := out_of_reach()) is not None:
        print(f"xce compat path: warning: only you can run these commands: {why}", file=sys.stderr)


def lsf_conf_cmd(directory, url, token, state_dir) -> None:
    from xce.cli.client import call, connect, fail
    from xce.compat import lsfconf

    try:
        unit = lsfconf.unit_for_limits()
    except ValueError as exc:
        fail(str(exc))
    cluster, queue = call(lsfconf.cluster_settings, connect(url, token, state_dir))
    try:
        where = lsfconf.write(str(directory) if directory else None, cluster, queue, unit)
    except OSError as exc:
        fail(f"cannot write the LSF files: {exc}")
    print(f"# LSF files for cluster {cluster} (default queue {queue}, LSF_UNIT_FOR_LIMITS={unit}):")
    for key in ("lsf.conf", "lsb.params", "lsb.events"):
        print(f"#   {where[key]}")
    print("# Clients find them through these variables:")
    for key in ("LSF_ENVDIR", "LSF_CONFDIR", "LSB_SHAREDIR"):
        print(f"export {key}={where[key]}")


COMPAT = Group("compat", "The LSF and Slurm commands (bsub, bjobs, sbatch, squeue, ...) over XCE, for scripts "
                         "and workflow tools written for LSF or Slurm.", [
    Command("install", "Write the LSF and Slurm commands into DIR (default: a directory inside XCE's installation, "
                       "not on PATH, so that they never shadow a real LSF or Slurm).",
            [Arg("directory", path, required=False, complete="dir",
                 help="Where to write them (default: the one `xce compat path` prints)."),
             Opt("only_me", ("--only-me",), bool, False,
                 help="Write them although other users could not run them (XCE's Python is out of their "
                      "reach): for a personal installation.")],
            install_cmd, examples=("xce compat install", "xce compat install /opt/xce/compat/bin")),
    Command("path", "Print the directory of the LSF and Slurm commands (installing them first if missing).",
            [], path_cmd, examples=('export PATH="$(xce compat path):$PATH"',)),
    Command("lsf-conf", "Write the LSF files clients read (lsf.conf, lsb.params, lsb.events) from the cluster's "
                        "name and default queue, and print the variables that point at them.",
            [Arg("directory", path, required=False, complete="dir",
                 help="Where to write conf/ and work/ (default: where the LSF commands look: $LSF_ENVDIR, "
                      "$LSF_CONFDIR, $LSB_SHAREDIR, else the state directory's lsf/)."),
             *common_options()],
            lsf_conf_cmd, examples=("xce compat lsf-conf", "eval \"$(xce compat lsf-conf /etc/xce/lsf)\"")),
], examples=('export PATH="$(xce compat path):$PATH"', "xce compat lsf-conf /etc/xce/lsf"))

COMMAND_SPECS = [COMPAT]
