"""``xce workload export``, ``xce cluster export`` and ``xce whatif``: the cluster's own history as a
workload and a cluster for the simulator, and last week's workload under another policy in one command.

The exports are client commands (one HTTP request each, the controller streams the answer); ``xce
whatif`` then runs the simulator here, so its heavy imports stay inside the function.
"""

from __future__ import annotations

import os
import sys

from xce.cli.spec import Command, Group, Opt, common_options, path

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
NS = 1_000_000_000


def parse_when(text: str, now_ns: int | None = None) -> int:
    """``7d``/``36h``/``90m``/``2w`` ago, ``now``, or an ISO date or time (``2026-11-24``,
    ``2026-11-24T08:00``, UTC unless it names a zone): nanoseconds since the epoch."""
    import time

    now = time.time_ns() if now_ns is None else now_ns
    t = text.strip()
    if t == "now":
        return now
    unit = _UNITS.get(t[-1:].lower())
    if unit and t[:-1].replace(".", "", 1).isdigit():
        value = float(t[:-1])
        if value > 1e6:
            raise ValueError(f"{text!r} is too far back")
        return now - int(value * unit * NS)
    from datetime import datetime, timezone

    try:
        dt = datetime.fromisoformat(t)
    except ValueError:
        raise ValueError(f"expected a duration ago (7d, 36h, 90m) or an ISO date/time (2026-11-24T08:00), "
                         f"got {text!r}") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return int(dt.timestamp()) * NS + dt.microsecond * 1000


def _window(since: str, until: str | None) -> tuple[int, int]:
    from xce.cli.client import EXIT_USAGE, fail

    try:
        a = parse_when(since)
        b = parse_when(until) if until else None
    except ValueError as exc:
        fail(f"--since/--until: {exc}", EXIT_USAGE)
    if b is not None and b <= a:
        fail(f"--until ({until}) is not after --since ({since})", EXIT_USAGE)
    return a, b  # type: ignore[return-value]


def get_raw(client, target: str, params: dict) -> bytes:
    """The body of a GET that answers text, not JSON (the exports); ApiError on a refusal."""
    import json

    from xce.cli.client import ApiError, query

    q = query(params)
    status, raw = client.send("GET", target + ("?" + q if q else ""), None)
    if status >= 400:
        try:
            obj = json.loads(raw)
        except ValueError:
            obj = raw.decode(errors="replace")
        raise ApiError(status, obj.get("detail", obj) if isinstance(obj, dict) else obj)
    return raw


def _write(raw: bytes, out) -> None:
    from xce.cli.client import fail

    if out is None or str(out) == "-":
        sys.stdout.buffer.write(raw)
        sys.stdout.flush()
        return
    try:
        tmp = f"{out}.part"
        with open(tmp, "wb") as fh:
            fh.write(raw)
        os.replace(tmp, out)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror or exc}")


def fetch_workload(client, since_ns: int, until_ns: int | None, queue: str | None, user: str | None,
                   fmt: str) -> bytes:
    return get_raw(client, "/v1/workload", {"since": since_ns, "until": until_ns, "queue": queue, "user": user,
                                            "format": fmt})


def workload_export(since: str, until: str | None, queue: str | None, user: str | None, out, fmt: str | None,
                    url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect

    if fmt is None:
        fmt = "xce" if out is not None and str(out).endswith((".jsonl", ".ndjson")) else "swf"
    a, b = _window(since, until)
    raw = call(fetch_workload, connect(url, token, state_dir), a, b, queue, user, fmt)
    _write(raw, out)
    if out is not None and str(out) != "-":
        n = raw.count(b"\n") - (1 if fmt == "xce" else sum(1 for ln in raw.split(b"\n") if ln.startswith(b";")))
        print(f"wrote {n} job(s) to {out} ({fmt})", file=sys.stderr)


_FILTERS = [
    Opt("since", ("--since",), required=True, metavar="WHEN",
        help="Start of the window: a duration ago (7d, 36h, 90m) or an ISO date/time (UTC by default)."),
    Opt("until", ("--until",), metavar="WHEN", help="End of the window (default: now)."),
    Opt("queue", ("-q", "--queue"), help="Only jobs of this queue."),
    Opt("user", ("-u", "--user"), help="Only jobs of this user."),
]

WORKLOAD_EXPORT = Command(
    "export", "Write the finished jobs of a window as a workload the simulator reads (SWF or XCE JSON-lines).",
    [
        *_FILTERS,
        Opt("out", ("-o", "--output"), path, metavar="FILE", help="Output file (default: stdout)."),
        Opt("fmt", ("--format",), choices=("swf", "xce"), metavar="FORMAT",
            help="swf (Standard Workload Format), or xce (JSON-lines with request strings, every requested "
                 "resource, arrays and dependencies). Default: xce for a .jsonl file, else swf."),
        *common_options(),
    ],
    workload_export,
    examples=("xce workload export --since 7d -o week.swf", "xce workload export --since 1d -q normal -o day.jsonl",
              "xce workload export --since 2026-11-23 --until 2026-11-30 -u alice --format xce -o alice.jsonl",
              "xce sim run --workload week.swf"),
)

WORKLOAD = Group("workload", "The cluster's finished jobs as a workload for `xce sim run`.", [WORKLOAD_EXPORT],
                 examples=("xce workload export --since 7d -o week.swf",))



def cluster_export(out, url: str | None, token: str | None, state_dir: str | None) -> None:
    from xce.cli.client import call, connect

    raw = call(get_raw, connect(url, token, state_dir), "/v1/cluster/export", {})
    _write(raw, out)
    if out is not None and str(out) != "-":
        print(f"wrote {raw.count(b'[[sim.hosts]]')} host(s) and the queues to {out}", file=sys.stderr)


CLUSTER_EXPORT = Command(
    "export", "Write the hosts and the queue configuration as a cluster file `xce sim run --cluster` reads.",
    [Opt("out", ("-o", "--output"), path, metavar="FILE", help="Output file (default: stdout)."), *common_options()],
    cluster_export,
    examples=("xce cluster export -o cluster.toml",
              "xce sim run --workload week.jsonl --cluster cluster.toml --picker builtin_fcfs"),
)

CLUSTER = Group("cluster", "The cluster as the simulator reads it.", [CLUSTER_EXPORT],
                examples=("xce cluster export -o cluster.toml",))

COMMAND_SPECS = [WORKLOAD, CLUSTER]
