"""``xce up`` and ``xce down``: a whole cluster on this machine in one command, and gone in another."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from xce.cli.spec import LOG_FORMATS, LOG_LEVELS, Command, Opt, path, upper


def up(workers: int, slots: int | None, state_dir: str | None, config, port: int, worker_timeout: float,
       report_interval: float, round_interval: float, multi_user: bool, db: str | None, controllers: int,
       log_level: str, log_format: str | None) -> int:
    import shlex

    if multi_user and os.geteuid() != 0:
        print("xce up: --multi-user needs root: the workers switch to each job's owner, which only root "
                   "can do (run it with sudo, or leave out --multi-user for a personal cluster)", file=sys.stderr)
        return 2

    from xce import logs
    from xce.client import statedir
    from xce.cluster.local import is_postgres, read_cluster_file
    from xce.procs import pid_alive

    sd = statedir.resolve(state_dir).absolute()
    problem = logs.check(log_level, log_format or "text")
    if controllers > 1 and not is_postgres(db):
        problem = (f"--controllers {controllers} needs a database the controllers share: "
                   f"add --db postgresql://USER@HOST:PORT/DB")
    if problem:
        print(f"xce up: {problem}", file=sys.stderr)
        return 2
    existing = read_cluster_file(sd)
    if existing and any(pid_alive(pid) for pid in [*existing.get("pids", {}).values(), existing.get("supervisor", 0)]
                        if pid):
        print(f"xce up: a cluster is already running from {sd} ({existing.get('url')}); "
                   f"stop it with `xce down --state-dir {sd}`", file=sys.stderr)
        return 1
    spec = {"state_dir": str(sd), "workers": workers, "slots": slots,
            "config": str(config.absolute()) if config else None, "port": port,
            "worker_timeout": worker_timeout, "report_interval": report_interval,
            "round_interval": round_interval, "db": db, "controllers": controllers, "log_level": log_level,
            "log_format": log_format, "run_as_self": not multi_user}
    outcome = _start_supervisor(sd, spec)
    if not outcome.get("ok"):
        print(f"xce up: the cluster did not start: {outcome.get('error')}", file=sys.stderr)
        return 1
    urls = outcome["urls"]
    default = statedir.resolve(None).absolute() == sd and not os.environ.get("XCE_STATE_DIR")
    where = f"controller {urls[0]}" if len(urls) == 1 else f"controllers {', '.join(urls)}"
    print(f"XCE cluster up: {where}, scheduler, {workers} worker(s) "
               f"({', '.join(outcome['workers'])}); supervised: a process that dies is restarted")
    print(f"State and logs: {sd} (logs in {sd / 'logs'})")
    print(f"Dashboard: {urls[0]}/ui/ (log in with a token: yours is in {sd / 'token'})")
    if multi_user:
        print("Multi-user: each job runs as the user who submitted it. Give each user a token, and them "
                   "the address:")
        print(f"  xceadmin token create USER --state-dir {shlex.quote(str(sd))}")
        print(f"  export XCE_URL={','.join(urls)} XCE_TOKEN=...   # as that user")
    else:
        print("Personal: every job runs as you, and only you are served "
                   "(`xce up --multi-user`, as root, serves everyone as themselves).")
    print("")
    if not default:
        print(f"  export XCE_STATE_DIR={shlex.quote(str(sd))}")
    print("  xce submit -- sleep 1")
    print("  xce jobs -a")
    print("  xce hosts")
    print("  xceadmin check" + ("" if default else f" --state-dir {shlex.quote(str(sd))}"))
    print("  xce down" + ("" if default else f" --state-dir {shlex.quote(str(sd))}"))
    return 0


def down(state_dir: str | None, timeout: float) -> int:
    from xce.client import statedir
    from xce.cluster.local import ClusterError, down as stop

    sd = statedir.resolve(state_dir).absolute()
    try:
        pids, killed = stop(sd, timeout)
    except ClusterError as exc:
        print(f"xce down: {exc}", file=sys.stderr)
        return 1
    print(f"XCE cluster in {sd} stopped ({len(pids)} process(es)"
               + (f"; {len(killed)} did not stop in {timeout:g}s and were killed)" if killed else ")"))
    return 0


def _start_supervisor(sd: Path, spec: dict) -> dict:
    """Start :mod:`xce.cluster.supervisor` in its own session and wait for its verdict."""
    import json
    import select
    import subprocess
    import sys
    import time

    from xce.client import statedir

    statedir.ensure(sd)
    spec_path = sd / "supervisor.json"
    statedir.write_private(spec_path, json.dumps(spec, indent=2) + "\n")
    (sd / "logs").mkdir(exist_ok=True)
    log_path = sd / "logs" / "supervisor.log"
    env = {k: v for k, v in os.environ.items() if k not in ("XCE_URL", "XCE_TOKEN", "XCE_STATE_DIR")}
    env["PYTHONUNBUFFERED"] = "1"
    read_end, write_end = os.pipe()
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "xce.cluster.supervisor", "--spec", str(spec_path),
                                 "--ready-fd", str(write_end)], pass_fds=(write_end,), stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, start_new_session=True, env=env, cwd=str(sd))
    os.close(write_end)
    data = b""
    deadline = time.monotonic() + 180
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([read_end], [], [], 1.0)
            if ready:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    break
                data += chunk
    finally:
        os.close(read_end)
    try:
        return json.loads(data.decode().strip().splitlines()[0])
    except (ValueError, IndexError):
        if proc.poll() is None:
            proc.terminate()
        tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
        return {"ok": False, "error": f"the supervisor gave no answer; see {log_path}:\n{tail}"}


def _state_dir() -> Opt:
    return Opt("state_dir", ("--state-dir",), complete="dir", help="State directory [env XCE_STATE_DIR; ~/.xce]")


COMMAND_SPECS = [
    Command("up", "Start a controller, a scheduler and N workers on 127.0.0.1, in the background, and keep them "
                  "running (a process that dies is restarted). A personal cluster runs every job as you; "
                  "--multi-user (as root) runs each job as its owner.", [
        Opt("workers", ("--workers",), int, 2, min=1, metavar="N", help="Number of workers."),
        Opt("slots", ("--slots",), int, None, min=1, metavar="N", help="Slots per worker [default: usable CPUs]."),
        _state_dir(),
        Opt("config", ("--config",), path, metavar="FILE", help="Cluster configuration (TOML)."),
        Opt("port", ("--port",), int, 0, min=0, max=65535, show_default=False,
            help="Controller port (the Nth controller: PORT+N-1); 0 picks free ones."),
        Opt("worker_timeout", ("--worker-timeout",), float, 30.0, min=0.1, metavar="SECONDS",
            help="Seconds of silence before a worker is unreachable."),
        Opt("report_interval", ("--report-interval",), float, 2.0, min=0.05, metavar="SECONDS",
            help="Seconds between worker reports."),
        Opt("round_interval", ("--round-interval",), float, None, min=0.0, metavar="SECONDS",
            help="Least seconds between scheduling rounds (default: [scheduler] round_interval_s, 0.2)."),
        Opt("multi_user", ("--multi-user",), bool, False,
            help="Run the workers as root so that each job runs as the user who submitted it (needs root); "
                 "without it every job runs as you and only you are served."),
        Opt("db", ("--db",), metavar="URL",
            help="Database URL (postgresql://USER@HOST:PORT/DB) [default: SQLite in the state directory]. A new, "
                 "empty database is initialised."),
        Opt("controllers", ("--controllers",), int, 1, min=1, metavar="N",
            help="Controllers sharing the database (--db postgresql://... for more than one); one leads, the "
                 "others take over."),
        Opt("log_level", ("--log-level",), upper, "INFO", choices=LOG_LEVELS, metavar="LEVEL",
            help="Services' log level: DEBUG, INFO, WARNING, ERROR."),
        Opt("log_format", ("--log-format",), choices=LOG_FORMATS, metavar="FORMAT",
            help="Services' log format: text or json [env XCE_LOG_FORMAT]."),
    ], up, examples=("xce up", "xce up --workers 4 --slots 8 --config examples/preemption.toml",
                     "XCE_STATE_DIR=/tmp/c1 xce up --state-dir /tmp/c1",
                     "sudo xce up --multi-user --workers 2 --state-dir /var/lib/xce",
                     "xce up --db postgresql://xce@db/xce --controllers 2 --workers 3")),
    Command("down", "Stop the cluster `xce up` started: its supervisor, controllers, scheduler and workers, "
                    "including any restarted since.", [
        _state_dir(),
        Opt("timeout", ("--timeout",), float, 15.0, min=0.0, metavar="SECONDS", help="Seconds to wait before killing."),
    ], down, examples=("xce down", "xce down --state-dir /tmp/c1")),
]
