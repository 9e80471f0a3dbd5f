"""``xce pools`` and ``xce shares``: what the cluster shares and who has had it.

``xce pools`` answers "why does my job wait for a license" (LSF's ``blimits``): each shared pool's
total, who holds it now and who waits for it. ``xce shares`` answers "why does their job go
before mine" in a fair-share queue (LSF's ``bhpart``, Slurm's ``sshare``): each user's (or
project's) shares against the usage the scheduler compares them with.
"""

from __future__ import annotations

import sys
from typing import Any

from xce.cli.spec import JSON, Arg, Command, Opt, common_options


def _amount(name: str, value: int) -> str:
    from xce.core.quantity import human_quantity

    return human_quantity(name, value)


def pools(names: list[str] | None, long: bool, as_json: bool, url: str | None, token: str | None,
          state_dir: str | None) -> int:
    from xce.cli.client import call, connect, fail, print_json
    from xce.cli.output import printable, table

    res = call(connect(url, token, state_dir).get, "/v1/pools")
    if names:
        known = {p["name"] for p in res["pools"]}
        unknown = [n for n in names if n not in known]
        if unknown:
            fail(f"no shared pool named {', '.join(unknown)} (configured: {', '.join(sorted(known)) or 'none'})")
        res["pools"] = [p for p in res["pools"] if p["name"] in names]
    if as_json:
        print_json(res)
        return 0
    if not res["pools"]:
        print("No shared pool is configured ([shared_resources] in xce.toml).")
        return 0
    table(["POOL", "TOTAL", "IN USE", "FREE", "PENDING", "USERS"],
          [[p["name"], _amount(p["name"], p["total"]), _amount(p["name"], p["in_use"]),
            _amount(p["name"], p["free"]), _amount(p["name"], p["pending"]),
            " ".join(f"{u['user']}:{_amount(p['name'], u['amount'])}" for u in p["users"]) or "-"]
           for p in res["pools"]])
    if long:
        for p in res["pools"]:
            print()
            print(printable(p["name"] + (f": {p['description']}" if p["description"] else "")))
            for h in p["holders"]:
                print(printable(f"  job {h['jobid']} ({h['user']}, {h['queue']}, {h['state']}) holds "
                                f"{_amount(p['name'], h['amount'])}"))
            for w in p["waiting"]:
                print(printable(f"  {w['user']} waits for {_amount(p['name'], w['amount'])}"))
    return 0


def _fair_queues(client, call) -> list[str]:
    res = call(client.get, "/v1/queues")
    return [q["name"] for q in res["queues"] if q.get("picker") == "fairshare"]


def _show(res: dict[str, Any]) -> None:
    from xce.cli.output import printable, table

    print(printable(f"Queue {res['queue']}: fair share by {res['by']}, half-life {res['half_life']} s"))
    table(["RANK", res["by"].upper(), "SHARES", "SHARE", "USAGE", "USED", "FACTOR", "PEND", "RUN"],
          [[o["rank"], o["name"], o["shares"], f"{o['share']:.1%}", f"{o['usage']:.1f}", f"{o['usage_share']:.1%}",
            f"{o['factor']:.4f}", o["pending"], o["running"]] for o in res["owners"]])


def shares(queue: str | None, as_json: bool, url: str | None, token: str | None, state_dir: str | None) -> int:
    from xce.cli.client import call, connect, fail, print_json, quote

    client = connect(url, token, state_dir)
    names = [queue] if queue else _fair_queues(client, call)
    if not names:
        fail("no queue is scheduled by fair share (job_pick_plugin = \"fairshare\")")
    answers = [call(client.get, f"/v1/queues/{quote(n)}/shares") for n in names]
    if as_json:
        print_json({"queues": answers})
        return 0
    for i, res in enumerate(answers):
        if i:
            sys.stdout.write("\n")
        _show(res)
    return 0


COMMAND_SPECS = [
    Command("pools", "Shared pools (licenses): total, in use by whom, free, and what pending jobs want.",
            [Arg("names", str, many=True, required=False, help="Only these pools."),
             Opt("long", ("-l", "--long"), bool, False, help="Every job holding each pool, and who waits."),
             JSON, *common_options()], pools,
            examples=("xce pools", "xce pools -l example.com/cfd-license", "xce pools --json"), quick_exit=True),
    Command("shares", "Fair share: each user's (or project's) shares, decayed usage, factor and rank; "
            "the highest factor goes first.",
            [Arg("queue", str, required=False, help="Only this queue (default: every fairshare queue)."),
             JSON, *common_options()], shares,
            examples=("xce shares", "xce shares normal", "xce shares normal --json"), quick_exit=True),
]
