"""``xce submit``: like bsub; everything after ``--`` (or the first word that is not an option) is the command."""

from __future__ import annotations

import re
from typing import Annotated, Any

import typer

from xce.cli.client import EXIT_USAGE, JsonOpt, StateDirOpt, TokenOpt, UrlOpt, call, connect, fail, print_json

#: Memory resources: a bare number means MiB, as in -R rusage[mem=...] (LSF's habit).
MEMORY = frozenset({"mem", "maxmem", "swp"})
UNITS = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
_QTY = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGT])?B?\s*$", re.IGNORECASE)


def parse_quantity(name: str, text: str) -> int | float:
    """``4G`` -> bytes; a bare memory number is MiB. A fraction that is not whole is passed on as a
    float so the controller refuses it with the naming rules' message."""
    m = _QTY.match(text)
    if not m:
        fail(f"invalid quantity {text!r} for {name} (expected a whole number, optionally with K, M, G or T)", EXIT_USAGE)
    number, unit = m.group(1), (m.group(2) or "").upper()
    mult = UNITS[unit] if unit else (UNITS["M"] if name in MEMORY else 1)
    if "." in number:
        whole, _, frac = number.partition(".")
        num = int((whole or "0") + frac) * mult
        den = 10 ** len(frac)
        return num // den if num % den == 0 else num / den
    return int(number) * mult


def parse_pairs(kind: str, items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            fail(f"{kind} {item!r}: expected NAME=QTY, e.g. mem=4G or example.com/gpu=1", EXIT_USAGE)
        out[name.strip()] = parse_quantity(name.strip(), value)
    return out


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_interspersed_args": False},
                 help="Submit a job: xce submit [OPTIONS] -- COMMAND [ARGS]...")
    def submit(
        command: Annotated[list[str], typer.Argument(help="The command and its arguments.", show_default=False)],
        queue: Annotated[str | None, typer.Option("-q", "--queue", help="Queue (default: the cluster's default queue).")] = None,
        tasks: Annotated[int, typer.Option("-n", "--tasks", help="Number of tasks (slots).")] = 1,
        request: Annotated[str, typer.Option("-R", "--resreq", help='Resource requirement, e.g. "select[mem>4G] rusage[mem=4G]".')] = "",
        project: Annotated[str | None, typer.Option("-P", "--project", help="Project to charge.")] = None,
        job_type: Annotated[str, typer.Option("--type", help="Job type (for drift reports).")] = "",
        priority: Annotated[int, typer.Option("--priority", help="User priority; higher runs first.")] = 0,
        requests: Annotated[list[str] | None, typer.Option("--request", help="Reserve NAME=QTY (repeatable); memory in MiB unless a unit is given.")] = None,
        limits: Annotated[list[str] | None, typer.Option("--limit", help="Cap NAME=QTY the worker enforces (repeatable).")] = None,
        stdout: Annotated[str | None, typer.Option("-o", help="Output file (%J job id, %I array index).")] = None,
        stderr: Annotated[str | None, typer.Option("-e", help="Error file (%J job id, %I array index).")] = None,
        array: Annotated[int | None, typer.Option("--array", help="Submit N similar jobs.", min=1)] = None,
        cwd: Annotated[str | None, typer.Option("--cwd", help="Working directory (default: the current one).")] = None,
        env: Annotated[list[str] | None, typer.Option("--env", help="NAME=VALUE for the job (repeatable).")] = None,
        as_json: JsonOpt = False,
        url: UrlOpt = None,
        token: TokenOpt = None,
        state_dir: StateDirOpt = None,
    ) -> None:
        import os

        body: dict[str, Any] = {"command": command, "tasks": tasks, "priority": priority, "job_type": job_type,
                                "cwd": cwd or os.getcwd()}
        if request:
            body["request"] = request
        for key, value in (("queue", queue), ("project", project), ("stdout", stdout), ("stderr", stderr),
                           ("array", array)):
            if value is not None:
                body[key] = value
        if requests:
            body["requests"] = parse_pairs("--request", requests)
        if limits:
            body["limits"] = parse_pairs("--limit", limits)
        if env:
            pairs = [e.partition("=") for e in env]
            if any(not sep or not k for k, sep, _ in pairs):
                fail("--env expects NAME=VALUE", EXIT_USAGE)
            body["env"] = {k: v for k, _, v in pairs}
        client = connect(url, token, state_dir)
        res = call(client.post, "/v1/jobs", body)
        if as_json:
            print_json(res)
        elif res["count"] == 1:
            print(f"Job <{res['jobid']}> is submitted to queue <{res['queue']}>.")
        else:
            last = res["jobid"] + res["count"] - 1
            print(f"Job array <{res['jobid']}-{last}> ({res['count']} jobs) is submitted to queue <{res['queue']}>.")
