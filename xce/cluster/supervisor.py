"""The process behind ``xce up``: starts a :class:`~xce.cluster.local.LocalCluster` and keeps it running.

``xce up`` returns as soon as the cluster accepts work, but someone has to restart a scheduler,
worker or controller that dies, and to stop everything on ``xce down``: this process, in its own
session, logging to ``<state-dir>/logs/supervisor.log``. It reads the cluster's description from
a 0600 file (``<state-dir>/supervisor.json``: it may hold a database URL with a password), tells
``xce up`` through an inherited pipe whether the cluster came up (one JSON line), then supervises
until SIGTERM, when it stops every process (scheduler and workers first, controllers last).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from xce import logs
from xce.cluster.local import ClusterError, LocalCluster

SPEC_FILE = "supervisor.json"


def _tell(fd: int | None, message: dict[str, Any]) -> None:
    if fd is None:
        return
    try:
        os.write(fd, (json.dumps(message) + "\n").encode())
    finally:
        os.close(fd)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m xce.cluster.supervisor", description=__doc__.splitlines()[0])
    p.add_argument("--spec", required=True, help="JSON file of LocalCluster keyword arguments")
    p.add_argument("--ready-fd", type=int, help="file descriptor to write the start-up outcome to")
    a = p.parse_args(argv)
    spec = json.loads(Path(a.spec).read_text())
    logs.configure("supervisor", spec.get("log_level", "INFO"), spec.get("log_format"))
    stop = threading.Event()

    def on_signal(signum, _frame) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        cluster = LocalCluster(**spec, supervisor_pid=os.getpid())
        cluster.start()
    except ClusterError as exc:
        _tell(a.ready_fd, {"ok": False, "error": str(exc)})
        return 1
    _tell(a.ready_fd, {"ok": True, "urls": cluster.urls, "workers": cluster.worker_names,
                       "pids": {k: p.pid for k, p in cluster.procs.items()}})
    try:
        cluster.supervise(stop)
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
