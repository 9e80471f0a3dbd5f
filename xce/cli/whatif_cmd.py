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
    return client.raw("/v1/workload", {"since": since_ns, "until": until_ns, "queue": queue, "user": user,
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

    raw = call(connect(url, token, state_dir).raw, "/v1/cluster/export")
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



def _fmt(key: str, v: float) -> str:
    if key == "utilization":
        return f"{v:.1%}"
    if key in ("jobs", "makespan_s"):
        return f"{int(v):,}"
    return f"{v:,.2f}" if key == "bsld_mean" else f"{v:,.1f}"


def _signed(key: str, v: float) -> str:
    text = _fmt(key, abs(v))
    return ("+" if v > 0 else "-" if v < 0 else "") + text if v else "0"


def _print_tables(base: dict, alt: dict, delta: dict, labels: dict[str, str]) -> None:
    from xce.cli.output import table
    from xce.whatif.compare import FIGURES, GROUP_FIGURES

    table(["ALL JOBS", "BASELINE", "ALTERNATIVE", "DIFFERENCE"],
          [[label, _fmt(k, base["all"].get(k, 0)), _fmt(k, alt["all"].get(k, 0)), _signed(k, delta["all"].get(k, 0))]
           for k, label in FIGURES])
    for group in ("queue", "user"):
        print()
        heads = [group.upper()] + [f"{h} {w}" for k, h in (("jobs", "JOBS"), ("wait_mean_s", "WAIT"),
                                                            ("wait_p95_s", "P95"), ("bsld_mean", "BSLD"))
                                   for w in (("",) if k == "jobs" else ("base", "alt", "diff"))]
        rows = []
        for name in sorted(set(base[group]) | set(alt[group])):
            b, a, d = base[group].get(name, {}), alt[group].get(name, {}), delta[group][name]
            row = [name, _fmt("jobs", b.get("jobs", a.get("jobs", 0)))]
            for k, _ in GROUP_FIGURES[1:]:
                row += [_fmt(k, b.get(k, 0)), _fmt(k, a.get(k, 0)), _signed(k, d.get(k, 0))]
            rows.append(row)
        table([h.strip() for h in heads], rows)


def whatif(since: str, until: str | None, queue: str | None, user: str | None, picker: str | None, config,
           hosts: str | None, settings: list[str] | None, seed: int, report, json_out: bool,
           url: str | None, token: str | None, state_dir: str | None) -> int:
    """Export, simulate twice, compare; see docs/whatif.md."""
    import io
    import json

    from xce.cli.client import EXIT_USAGE, call, connect, fail
    from xce.config.loader import ConfigError
    from xce.sim.cluster_file import parse_cluster_text
    from xce.sim.engine import SimulationError, simulate
    from xce.sim.swf import SwfError
    from xce.sim.workload import parse_jsonl
    from xce.whatif import alter, compare

    if not (picker or config or hosts or settings):
        fail("nothing to compare with: give --picker, --config, --hosts or --set", EXIT_USAGE)
    config_text = None
    if config is not None:
        try:
            config_text = config.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            fail(f"--config {config}: cannot read it: {getattr(exc, 'strerror', None) or exc}", EXIT_USAGE)
    a, b = _window(since, until)
    client = connect(url, token, state_dir)
    raw = call(fetch_workload, client, a, b, queue, user, "xce")
    base_text = call(client.raw, "/v1/cluster/export").decode()
    client.close()
    window = f"jobs submitted since {since}" + (f" until {until}" if until else "")
    try:
        trace = parse_jsonl(io.StringIO(raw.decode()), f"the workload ({window})")
    except SwfError as exc:
        if not any(line.strip() for line in raw.decode().splitlines()[1:]):
            fail(f"no finished job in the window ({window}{', queue ' + queue if queue else ''}"
                 f"{', user ' + user if user else ''}): nothing to simulate")
        fail(str(exc))
    try:
        base = parse_cluster_text(base_text, "the exported cluster")
        alt_text = alter.alternative(base_text, config_text=config_text, settings=settings or [], hosts=hosts)
        alt = parse_cluster_text(alt_text, f"the alternative cluster ({config or 'exported'})")
    except alter.AlterError as exc:
        fail(str(exc), EXIT_USAGE)
    except ConfigError as exc:
        for line in str(exc).splitlines():
            print(f"xce whatif: {line}", file=sys.stderr)
        raise SystemExit(1) from None
    if picker:
        from xce.core.pickers import registry
        from xce.plugins import load_entry_points

        load_entry_points()
        if picker not in registry.available():
            fail(f"--picker: unknown picker {picker!r} (registered: {', '.join(sorted(registry.available()))})",
                 EXIT_USAGE)
        alt = alt.with_picker(picker)
    what = ", ".join(x for x in (f"picker {picker}" if picker else "", f"config {config}" if config else "",
                                 f"hosts {hosts}" if hosts else "", *(settings or [])) if x)
    try:
        rb = simulate(trace, base, seed=seed)
        ra = simulate(trace, alt, seed=seed)
    except SimulationError as exc:
        fail(str(exc))
    fb, fa = compare.figures(rb), compare.figures(ra)
    delta = compare.diff(fb, fa)
    agree = compare.agreement(rb)
    out = {"window": {"since": a, "until": b, "queue": queue, "user": user}, "alternative": what,
           "baseline": fb, "alternative_figures": fa, "difference": delta, "agreement": agree,
           "jobs": len(trace), "skipped": dict(trace.skipped),
           "never_started": {"baseline": len(rb.never_started), "alternative": len(ra.never_started)},
           "too_large": {"baseline": len(rb.too_large), "alternative": len(ra.too_large)}}
    if report is not None:
        from xce.sim.html_report import write_compare_report
        from xce.sim.report import summary

        write_compare_report(report, [("baseline (in force)", rb), (f"alternative ({what})", ra)],
                             [summary(rb, extra={"picker": "baseline"}), summary(ra, extra={"picker": "alternative"})])
        out["report"] = str(report)
    if json_out:
        print(json.dumps(out, indent=2, sort_keys=True))
        return 0
    print(f"What if: {len(trace)} finished job(s) ({window}) on {len(base.hosts)} host(s), "
          f"{base.total_slots} slot(s)")
    print(f"  baseline:    the configuration in force (picker {base.config.job_pick_plugin})")
    print(f"  alternative: {what} ({len(alt.hosts)} host(s), {alt.total_slots} slot(s), picker "
          f"{alt.config.job_pick_plugin})")
    print()
    _print_tables(fb, fa, delta, {})
    print()
    for label, r in (("baseline", rb), ("alternative", ra)):
        if r.never_started or r.too_large:
            print(f"{label}: {len(r.never_started)} job(s) never started, {len(r.too_large)} too large for the cluster")
    if agree["share"] is not None:
        print(f"Baseline against reality: {agree['within']} of {agree['jobs']} job(s) ({agree['share']:.1%}) started "
              f"within {agree['tolerance_s']} s of when they really did (simulated minus real start: median "
              f"{agree['median_s']:+.0f} s, largest |difference| {agree['max_abs_s']} s; beyond "
              f"{agree['tolerance_s']} s: {agree['late']} later, {agree['early']} earlier).")
        if agree["share"] < 0.9:
            print("  Below 90%: read the alternative's figures with care (see docs/whatif.md, Limits).")
    if report is not None:
        print(f"Wrote {report}")
    return 0


WHATIF = Command(
    "whatif", "Run a window of the cluster's own history under the configuration in force and under another, "
              "and compare.",
    [
        *_FILTERS,
        Opt("picker", ("--picker",), help="The alternative's job picker (see `xce sim run --picker`)."),
        Opt("config", ("--config",), path, metavar="FILE",
            help="The alternative's configuration (an xce.toml; its [[sim.hosts]], if any, replace the hosts)."),
        Opt("hosts", ("--hosts",), metavar="+N|-N", help="N more hosts like the last one, or the last N fewer."),
        Opt("settings", ("--set",), multiple=True, metavar="KEY=VALUE",
            help="Change one configuration key for the alternative: queue.normal.priority=40 (repeatable)."),
        Opt("seed", ("--seed",), int, 0, show_default=False, help="Seed of the core's random generator."),
        Opt("report", ("--report",), path, metavar="FILE",
            help="Write the HTML report of both runs side by side (plots included)."),
        Opt("json_out", ("--json",), bool, False, help="Print every figure as JSON."),
        *common_options(),
    ],
    whatif,
    examples=("xce whatif --since 7d --picker easy_backfill",
              "xce whatif --since 7d --hosts +2 --report whatif.html",
              "xce whatif --since 1d -q normal --set queue.normal.priority=40",
              "xce whatif --since 2026-11-23 --until 2026-11-30 --config alt.toml"),
)

COMMAND_SPECS = [WORKLOAD, CLUSTER, WHATIF]
