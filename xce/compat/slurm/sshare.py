"""``sshare``: fair share as Slurm shows its association tree, from XCE's fair-share queues.

Each fair-share queue is an account under ``root`` (:mod:`xce.compat.slurm._shares`); a queue
shared among users lists them as user rows of that account, a queue shared among projects lists
the projects as its sub-accounts. RawShares are the shares configured (1 where none is), NormShares
the owner's part of its queue's shares, RawUsage the decayed slot-seconds XCE charges, EffectvUsage
the owner's part of its queue's usage, FairShare the factor the fairshare picker orders by.
Without ``-a`` or ``-u`` only the caller's user rows are shown, as Slurm does."""

from __future__ import annotations

import sys

from xce.compat.slurm import _format as fmt, _shares as shares
from xce.compat.slurm._getopt import NONE, REQUIRED, UsageError, parse, refuse

PROG = "sshare"
LONGS = {"all": NONE, "accounts": REQUIRED, "users": REQUIRED, "long": NONE, "parsable": NONE, "parsable2": NONE,
         "noheader": NONE, "clusters": REQUIRED, "verbose": NONE, "version": NONE, "help": NONE, "usage": NONE}
SHORTS = {"a": "all", "A": "accounts", "u": "users", "l": "long", "p": "parsable", "P": "parsable2",
          "n": "noheader", "M": "clusters", "v": "verbose", "V": "version", "h": "help"}
#: Column -> width (Account left-justified, the others right), sshare's.
WIDTHS = {"Account": -20, "User": 10, "RawShares": 10, "NormShares": 11, "RawUsage": 11, "NormUsage": 11,
          "EffectvUsage": 13, "FairShare": 10, "LevelFS": 10}
SHORT = ("Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage", "FairShare")
LONG = ("Account", "User", "RawShares", "NormShares", "RawUsage", "NormUsage", "EffectvUsage", "FairShare", "LevelFS")


def _row(values: dict[str, str], columns, parsable: str | None) -> str:
    if parsable is None:
        return " ".join(fmt.sacct_cell(values.get(c, ""), WIDTHS[c]) for c in columns)
    text = "|".join(values.get(c, "") for c in columns)
    return text + "|" if parsable == "last" else text


def rows(c, me: str, users: list[str] | None, accounts: list[str]) -> list[dict[str, str]]:
    """Every row: root, each fair-share queue, then its owners (users shown: ``users``, None for all)."""
    queues = shares.fair_queues(c)
    views = [shares.standing(c, q["name"]) for q in queues]
    total = sum(v["usage"] for v in views)
    out = [{"Account": "root", "NormShares": "", "RawUsage": str(int(total)), "NormUsage": f"{1.0:.6f}",
            "EffectvUsage": f"{1.0:.6f}"}]
    for v in views:
        name = v["queue"]
        owned = accounts and name not in accounts
        part = v["usage"] / total if total else 0.0
        if not owned:
            out.append({"Account": f" {name}", "RawShares": "1", "NormShares": f"{1 / len(views):.6f}",
                        "RawUsage": str(int(v["usage"])), "NormUsage": f"{part:.6f}", "EffectvUsage": f"{part:.6f}",
                        "FairShare": "", "LevelFS": ""})
        for o in v["owners"]:
            by_user = v["by"] == "user"
            if by_user and (owned or (users is not None and o["name"] not in users)):
                continue
            if not by_user and accounts and name not in accounts and o["name"] not in accounts:
                continue
            level = o["share"] / o["usage_share"] if o["usage_share"] else float("inf")
            out.append({"Account": f"  {name}" if by_user else f"  {o['name']}", "User": o["name"] if by_user else "",
                        "RawShares": str(o["shares"]), "NormShares": f"{o['share']:.6f}",
                        "RawUsage": str(int(o["usage"])), "NormUsage": f"{o['usage_share'] * part:.6f}",
                        "EffectvUsage": f"{o['usage_share']:.6f}", "FairShare": f"{o['factor']:.6f}",
                        "LevelFS": "inf" if level == float("inf") else f"{level:.6f}"})
    return out


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _api

    try:
        opts, operands = parse(argv, LONGS, SHORTS)
        if operands:
            return _api.fail(PROG, f"Unknown arguments: {' '.join(operands)}")
    except UsageError as exc:
        return refuse(PROG, str(exc))
    everyone, users, accounts, columns, parsable, header = False, [], [], SHORT, None, True
    for name, value in opts:
        if name == "all":
            everyone = True
        elif name == "users":
            users += [u.strip() for u in (value or "").split(",") if u.strip()]
        elif name == "accounts":
            accounts += [a.strip() for a in (value or "").split(",") if a.strip()]
        elif name == "long":
            columns = LONG
        elif name == "parsable":
            parsable = "last"
        elif name == "parsable2":
            parsable = "nolast"
        elif name == "noheader":
            header = False
        elif name in ("help", "usage"):
            sys.stdout.write("Usage: sshare [-a] [-A accounts] [-u users] [-l] [-n] [-p|-P]\n")
            return 0
        elif name == "version":
            sys.stdout.write("slurm 23.11.0\n")
            return 0
    try:
        c = _api.client()
        me = _api.request(c, "GET", "/v1/whoami")["name"]
        shown = None if everyone or "all" in users else (users or [me])
        found = rows(c, me, shown, accounts)
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    out = []
    if header:
        out.append(_row({col: col for col in columns}, columns, parsable))
        if parsable is None:
            out.append(" ".join("-" * abs(WIDTHS[col]) for col in columns))
    out += [_row(r, columns, parsable) for r in found]
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
