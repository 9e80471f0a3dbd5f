"""Where a controller keeps its files, and how other processes find them.

One directory holds everything a cluster needs to come back after a crash and everything a
client on the same machine needs to reach it, so ``xce up``, tests and the CLI agree on
paths by reading this module rather than by convention::

    <state-dir>/                0700
      tokens/admin|worker|scheduler|metrics   0600  service tokens, issued on first start (stored
                                      hashed in the database; reissued when revoked or removed)
      token                     0600  optional: this user's own token (the CLI reads it first)
      controller.json           0644  {"url", "pid", "ca_file"?, ...} of the running controller; ``xce up``
                                      with several controllers writes {"urls": [...]} here instead
      controller.lock                 held (flock) while a controller runs
      xce.db                          the default SQLite store (WAL)

The CLI imports this in every short-lived client process, so what a client reads (``locate``,
``read_info``, ``controller_urls``, ``read_token``, ``ca_file``) takes plain strings and needs only
``os`` and :mod:`xce.wirejson`: ``pathlib`` and ``typing`` (with the ``urllib`` and ``ipaddress`` they
pull in), or the ``json`` package's regular expressions, would cost a client more start-up time
than its own work.
"""

from __future__ import annotations

import os

from xce import wirejson

TYPE_CHECKING = False  # typing itself is not imported at run time
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

DEFAULT_STATE_DIR = "~/.xce"
SERVICE_ROLES = ("admin", "worker", "scheduler", "metrics")
INFO, USER_TOKEN, TOKENS = "controller.json", "token", "tokens"


def locate(state_dir: str | os.PathLike[str] | None = None) -> str:
    """The state directory: the argument, else ``$XCE_STATE_DIR``, else ``~/.xce``."""
    raw = state_dir or os.environ.get("XCE_STATE_DIR") or DEFAULT_STATE_DIR
    return os.path.expanduser(os.fspath(raw))


def resolve(state_dir: str | os.PathLike[str] | None = None) -> Path:
    """:func:`locate` as a ``Path``, for the services."""
    from pathlib import Path

    return Path(locate(state_dir))


def ensure(state_dir: Path) -> Path:
    state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    (state_dir / "tokens").mkdir(exist_ok=True, mode=0o700)
    return state_dir


def token_path(state_dir: Path, role: str) -> Path:
    return state_dir / TOKENS / role


def info_path(state_dir: Path) -> Path:
    return state_dir / INFO


def lock_path(state_dir: Path) -> Path:
    return state_dir / "controller.lock"


def sqlite_path(state_dir: Path) -> Path:
    return state_dir / "xce.db"


def write_private(path: Path, text: str) -> None:
    """Create ``path`` readable by its owner only; the mode is set before any byte is written."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, text.encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


def write_info(state_dir: Path, info: dict[str, Any]) -> None:
    """Publish the running controller's address atomically (readers never see half a file)."""
    path = info_path(state_dir)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    import json

    tmp.write_text(json.dumps(info, sort_keys=True) + "\n")
    os.replace(tmp, path)


def read_info(state_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    try:
        with open(os.path.join(state_dir, INFO), "rb") as f:
            info = wirejson.loads(f.read())
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def controller_urls(state_dir: str | os.PathLike[str]) -> list[str]:
    """The controllers of this state directory's cluster: ``urls`` of ``controller.json`` (written by
    ``xce up --controllers N``), else its ``url``; empty when there is no such file."""
    info = read_info(state_dir) or {}
    urls = info.get("urls") or ([info["url"]] if info.get("url") else [])
    return [str(u) for u in urls]


def read_token(state_dir: str | os.PathLike[str]) -> str | None:
    """The token a client on this machine should use: the user's own, else the admin token."""
    for path in (os.path.join(state_dir, USER_TOKEN), os.path.join(state_dir, TOKENS, "admin")):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text:
            return text
    return None


def ca_file(state_dir: str | os.PathLike[str]) -> str | None:
    """The CA bundle to verify an HTTPS controller with: ``$XCE_CA_FILE``, else ``controller.json``'s."""
    return os.environ.get("XCE_CA_FILE") or (read_info(state_dir) or {}).get("ca_file")


def worker_endpoint(url: str | None, token: str | None, state_dir: str | os.PathLike[str] | None) \
        -> tuple[str, str, Path]:
    """The controller's address(es) and the worker token a worker-side process (``xce worker``,
    ``xce emulate-hosts``) uses: as given, else ``$XCE_URL``/``$XCE_WORKER_TOKEN``, else what a running
    controller wrote into its state directory. ValueError says what is missing or malformed."""
    from xce.client.urls import parse_urls

    sd = resolve(state_dir)
    url = url or os.environ.get("XCE_URL") or ",".join(controller_urls(sd))
    if not token:
        try:
            token = os.environ.get("XCE_WORKER_TOKEN") or token_path(sd, "worker").read_text().strip()
        except OSError:
            token = None
    if not url or not token:
        raise ValueError(f"need the controller's address and a worker token: pass --url and --token, or "
                         f"--state-dir of a running controller (looked in {sd})")
    parse_urls(url, "--url")
    return url, token, sd
