"""``xceadmin check``: is the running cluster healthy? Every controller, the leader, the database, the
clocks, the scheduler and the workers, one line each, ``OK`` or ``PROBLEM`` with what is wrong.

It asks every controller address (``--url``/``$XCE_URL``/the state directory, several separated by
commas) for ``GET /v1/status``, which followers answer too, and judges from the answers. Exit
status: 0 all well, 1 at least one problem, 3 no controller answered.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from xce.cli.spec import JSON, Command, Opt, common_options

#: Default tolerances: a clock further off than this from the database's, a scheduler silent longer
#: than this, a database round trip slower than this, are problems.
CLOCK_TOLERANCE_S = 1.0
SCHEDULER_SILENT_S = 15.0
DB_SLOW_MS = 500.0


@dataclass(frozen=True)
class Limits:
    clock_s: float = CLOCK_TOLERANCE_S
    scheduler_silent_s: float = SCHEDULER_SILENT_S


@dataclass
class Report:
    lines: list[tuple[bool, str, str]] = field(default_factory=list)
    answered: int = 0

    def ok(self, what: str, text: str) -> None:
        self.lines.append((True, what, text))

    def problem(self, what: str, text: str) -> None:
        self.lines.append((False, what, text))

    @property
    def problems(self) -> int:
        return sum(1 for ok, _, _ in self.lines if not ok)


def _ask(url: str, token: str | None, ca_file: str | None = None) -> tuple[dict[str, Any] | None, str | None, float]:
    """(status, error, local time at mid-request in ns)."""
    from xce.cli.client import ApiError, Client, Unreachable, describe

    client = Client(url, token, timeout=5.0, ca_file=ca_file if url.startswith("https://") else None)
    t0 = time.time_ns()
    try:
        st = client.get("/v1/status")
    except Unreachable as exc:
        return None, str(exc), 0.0
    except ApiError as exc:
        return None, "; ".join(describe(exc)), 0.0
    finally:
        client.close()
    return st, None, (t0 + time.time_ns()) / 2


def judge(urls: list[str], token: str | None, limits: Limits = Limits(), ca_file: str | None = None) -> Report:
    """``ca_file``: the site CA an ``https://`` controller is verified with (else the system's)."""
    rep = Report()
    answers: dict[str, dict[str, Any]] = {}
    local_skew: list[float] = []
    for url in urls:
        st, err, mid = _ask(url, token, ca_file)
        if st is None:
            rep.problem(f"controller {url}", f"does not answer: {err}")
            continue
        answers[url] = st
        local_skew.append((st["controller"]["time_ns"] - mid) / 1e9)
    rep.answered = len(answers)
    if not answers:
        return rep
    leaders = {u: st for u, st in answers.items() if st["controller"]["role"] == "leader"}
    leader_url = next(iter(leaders), None)
    for url, st in answers.items():
        c = st["controller"]
        if c["role"] == "leader":
            lease = st.get("leader") or {}
            rep.ok(f"controller {url}", f"leader (term {lease.get('term', '?')}, pid {c['pid']} on {c['host']}), "
                                        f"version {c['version']}")
            if c["url"] != url and c["url"] not in urls:
                rep.problem(f"controller {url}", f"advertises itself as {c['url']}, which is not in the address list "
                                                 f"({', '.join(urls)}): followers send clients there")
        else:
            named = (st.get("leader") or {}).get("url")
            if leader_url and named and named != leader_url and named != answers[leader_url]["controller"]["url"]:
                rep.problem(f"controller {url}", f"follower sending clients to {named}, but {leader_url} leads")
            elif not named:
                rep.problem(f"controller {url}", "follower, and no controller leads now (a takeover under way, or "
                                                 "the leader cannot reach the database)")
            else:
                rep.ok(f"controller {url}", f"follower of {named}, version {c['version']}")
    if len(leaders) > 1:
        rep.problem("leader", f"{len(leaders)} controllers claim to lead: {', '.join(leaders)}")
    elif not leaders:
        rep.problem("leader", "none of the controllers answering leads")
    _database(rep, answers[leader_url] if leader_url else next(iter(answers.values())))
    _clocks(rep, answers, local_skew, limits.clock_s)
    if leader_url:
        _scheduler(rep, answers[leader_url], limits.scheduler_silent_s)
        _workers(rep, answers[leader_url])
    return rep


def _database(rep: Report, st: dict[str, Any]) -> None:
    db = st["database"]
    what = f"database {db['url']}"
    if db.get("error"):
        rep.problem(what, f"the controller cannot use it: {db['error']}")
    elif db.get("revision") != db.get("head"):
        rep.problem(what, f"schema revision {db.get('revision')}, this XCE needs {db.get('head')}: run "
                          f"`xceadmin db upgrade` (after a backup, controllers stopped)")
    elif db.get("latency_ms", 0) > DB_SLOW_MS:
        rep.problem(what, f"slow: a round trip took {db['latency_ms']:.0f} ms")
    else:
        rep.ok(what, f"revision {db['revision']} (up to date), round trip {db.get('latency_ms', 0):.1f} ms")


def _clocks(rep: Report, answers: dict[str, dict[str, Any]], local_skew: list[float], tolerance: float) -> None:
    bad = []
    worst = 0.0
    for url, st in answers.items():
        db_ns = st["database"].get("time_ns")
        if db_ns is None:
            continue
        off = (st["controller"]["time_ns"] - db_ns) / 1e9
        worst = max(worst, abs(off))
        if abs(off) > tolerance:
            bad.append(f"controller {url} is {off:+.2f} s off the database's clock")
    here = max(local_skew, key=abs) if local_skew else 0.0
    if abs(here) > tolerance:
        bad.append(f"this host's clock is {-here:+.2f} s off the controllers'")
    if bad:
        rep.problem("clocks", "; ".join(bad) + " (run NTP/chrony everywhere)")
    else:
        rep.ok("clocks", f"controllers within {worst:.3f} s of the database, this host within {abs(here):.3f} s")


def _scheduler(rep: Report, st: dict[str, Any], silent_s: float) -> None:
    s = st.get("scheduler") or {}
    age = s.get("last_request_age_s")
    if age is None:
        rep.problem("scheduler", "has not read the event log since this controller began to lead (is `xce "
                                 "scheduler` running, and can it reach the controllers?)")
    elif age > silent_s:
        rep.problem("scheduler", f"has not read the event log for {age:.0f} s ({s.get('lag', 0)} event(s) unread): "
                                 f"jobs are not being scheduled")
    else:
        rep.ok("scheduler", f"read the event log {age:.1f} s ago, {s.get('lag', 0)} event(s) behind")


def _workers(rep: Report, st: dict[str, Any]) -> None:
    workers = st.get("workers") or []
    timeout = float(st.get("worker_timeout_s") or 30.0)
    if not workers:
        rep.problem("workers", "none registered (start `xce worker` on the execution hosts)")
        return
    down = [w["name"] for w in workers if w["status"] != "ok"]
    quiet = [f"{w['name']} ({w['silent_s']:.0f} s)" for w in workers
             if w["status"] == "ok" and w["silent_s"] > timeout / 2]
    ok = [w["name"] for w in workers if w["status"] == "ok"]
    if down:
        rep.problem("workers", f"{len(down)} not reporting: {', '.join(down)}")
    if quiet:
        rep.problem("workers", f"silent for more than half the worker timeout ({timeout:g} s): {', '.join(quiet)}")
    if not down and not quiet:
        shown = ", ".join(ok[:10]) + (f", ... ({len(ok) - 10} more)" if len(ok) > 10 else "")
        rep.ok("workers", f"{len(ok)} reporting ({shown})")


def check(as_json: bool, clock_tolerance: float, scheduler_silence: float, ca_file: str | None, url: str | None,
          token: str | None, state_dir: str | None) -> int:
    import os

    from xce.cli.client import EXIT_UNREACHABLE, fail, print_json
    from xce.client import statedir
    from xce.client.urls import parse_urls

    sd = statedir.resolve(state_dir)
    text = url or os.environ.get("XCE_URL") or ",".join(statedir.controller_urls(sd))
    if not text:
        fail(f"no controller address: pass --url, set XCE_URL, or --state-dir of a cluster "
             f"(no {statedir.info_path(sd)})", EXIT_UNREACHABLE)
    try:
        urls = parse_urls(text)
    except ValueError as exc:
        fail(str(exc), 2)
    token = token or os.environ.get("XCE_TOKEN") or statedir.read_token(sd)
    rep = judge(urls, token, Limits(clock_tolerance, scheduler_silence), ca_file or statedir.ca_file(sd))
    reachable = rep.answered > 0
    if as_json:
        print_json({"ok": rep.problems == 0 and reachable,
                    "checks": [{"ok": ok, "what": what, "detail": d} for ok, what, d in rep.lines]})
    else:
        for ok, what, detail in rep.lines:
            print(f"{'OK     ' if ok else 'PROBLEM'}  {what}: {detail}")
        print("all well" if rep.problems == 0 else f"{rep.problems} problem(s)")
    if not reachable:
        return EXIT_UNREACHABLE
    return 1 if rep.problems else 0


COMMAND_SPECS = [Command(
    "check", "Verify a running cluster: controllers, leader, database, clocks, scheduler, workers; print what is "
             "wrong (exit 0 all well, 1 problems, 3 no controller answers).",
    [JSON,
     Opt("clock_tolerance", ("--clock-tolerance",), float, CLOCK_TOLERANCE_S, min=0.0, metavar="SECONDS",
         help="Seconds a clock may be off the database's."),
     Opt("scheduler_silence", ("--scheduler-silence",), float, SCHEDULER_SILENT_S, min=0.0, metavar="SECONDS",
         help="Seconds the scheduler may go without reading the event log."),
     Opt("ca_file", ("--ca-file",), metavar="FILE", complete="file", show_default=False, section="Connection",
         help="CA bundle an https:// controller's certificate is verified with [env XCE_CA_FILE; default from "
              "the state dir, else the system's CAs]"),
     *common_options()],
    check,
    examples=("xceadmin check", "xceadmin check --url http://ctl1:6820,http://ctl2:6820", "xceadmin check --json"),
)]
