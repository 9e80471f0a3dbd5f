"""``xce config ...``: working with the cluster configuration file without starting anything.

Operators edit ``xce.toml`` on clusters that are in production; checking a change must be cheap,
side-effect free and scriptable (exit status 1 on any problem), like ``nginx -t`` or ``slurmd -C``.
"""

from __future__ import annotations

import sys

from xce.cli.spec import Arg, Command, Group, Opt, path


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def summary(cfg) -> str:
    """The one-line inventory, so an operator sees at a glance that the file says what they meant."""
    return ", ".join(
        [
            _count(len(cfg.queues), "queue"),
            _count(len(cfg.projects), "project"),
            _count(len(cfg.shared_resources), "shared resource"),
        ]
    )


def check(files: list, plugins: bool) -> int:
    """Validate configuration files without starting anything.

    Reports every problem, one per line, with the line and the key path; exits 1 if any file has one.
    """
    from xce.config.loader import ConfigError, load_config

    failed = False
    for file in files:
        try:
            cfg = load_config(file, check_plugins=plugins)
        except ConfigError as exc:
            failed = True
            print(str(exc), file=sys.stderr)
            print(f"{file}: {_count(len(exc.errors), 'error')}", file=sys.stderr)
            continue
        print(f"{file}: OK ({summary(cfg)})")
    return 1 if failed else 0


CHECK = Command(
    "check",
    "Validate configuration files without starting anything.\n\nReports every problem, one per line, with the "
    "line and the key path; exits 1 if any file has one.",
    [Arg("files", path, many=True, metavar="FILE", help="Configuration files to check."),
     Opt("plugins", ("--plugins",), bool, True, negate=("--no-plugins",), show_default=False,
         help="Check that picker and preemption policy names are registered plugins on this machine "
              "(the default; --no-plugins skips it).")],
    check,
    epilog=("\b\nExample:\n  $ xce config check /etc/xce/xce.toml\n  /etc/xce/xce.toml: OK (3 queues, 1 project, "
            "1 shared resource)\n  $ xce config check bad.toml\n  bad.toml:9: queues.low.max_running: expected an "
            "integer >= 1, got integer 0\n  bad.toml: 1 error"),
    examples=("xce config check /etc/xce/xce.toml", "xce config check --no-plugins site.toml"),
)

CONFIG = Group("config", "Check and explain the cluster configuration file (xce.toml).", [CHECK],
               examples=("xce config check xce.toml",))

COMMAND_SPECS = [CONFIG]
