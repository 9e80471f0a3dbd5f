"""``xce submit``: like bsub; everything after ``--`` (or the first word that is not an option) is the command."""

from __future__ import annotations

from xce.cli.client import EXIT_USAGE, call, connect, fail, print_json
from xce.cli.spec import JSON, Arg, Command, Opt, common_options

def parse_quantity(name: str, text: str) -> int:
    """The one quantity grammar (xce.core.quantity, stdlib only: the fast path stays cheap)."""
    from xce.core.quantity import QuantityError, parse_quantity as parse

    try:
        return parse(name, text)
    except QuantityError as exc:
        fail(str(exc), EXIT_USAGE)


def _whole(text: str, what: str) -> int:
    if not text.isdigit() or not text.isascii():
        raise ValueError(f"invalid run limit {what!r}")
    return int(text)


def parse_run_limit(text: str) -> int:
    """``-W``, as bsub reads it: ``MINUTES`` or ``HOURS:MINUTES``; the limit in seconds."""
    parts = text.strip().split(":")
    if len(parts) > 2:
        raise ValueError(f"invalid run limit {text!r} (expected MINUTES or HOURS:MINUTES, e.g. 90 or 1:30)")
    try:
        minutes = sum(_whole(p, text) * m for p, m in zip(reversed(parts), (1, 60)))
    except ValueError:
        raise ValueError(f"invalid run limit {text!r} (expected MINUTES or HOURS:MINUTES, e.g. 90 or 1:30)") from None
    if minutes <= 0:
        raise ValueError(f"invalid run limit {text!r} (expected at least one minute)")
    return minutes * 60


def parse_time(text: str) -> int:
    """``--time``, as sbatch reads it: ``M``, ``M:S``, ``H:M:S``, ``D-H``, ``D-H:M``, ``D-H:M:S``; seconds."""
    bad = f"invalid time {text!r} (expected MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS or DAYS-HOURS[:MINUTES[:SECONDS]])"
    days_text, dash, rest = text.strip().rpartition("-") if "-" in text else ("", "", text.strip())
    parts = rest.split(":")
    try:
        days = _whole(days_text, text) if dash else 0
        nums = [_whole(p, text) for p in parts]
    except ValueError:
        raise ValueError(bad) from None
    if dash:  # D-H, D-H:M, D-H:M:S
        if len(nums) > 3:
            raise ValueError(bad)
        nums += [0] * (3 - len(nums))
        seconds = ((days * 24 + nums[0]) * 60 + nums[1]) * 60 + nums[2]
    elif len(nums) == 1:
        seconds = nums[0] * 60
    elif len(nums) == 2:
        seconds = nums[0] * 60 + nums[1]
    elif len(nums) == 3:
        seconds = (nums[0] * 60 + nums[1]) * 60 + nums[2]
    else:
        raise ValueError(bad)
    if seconds <= 0:
        raise ValueError(f"invalid time {text!r} (expected at least one second)")
    return seconds


def parse_pairs(kind: str, items: list[str]) -> dict:
    out: dict = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            fail(f"{kind} {item!r}: expected NAME=QTY, e.g. mem=4G or example.com/gpu=1", EXIT_USAGE)
        out[name.strip()] = parse_quantity(name.strip(), value)
    return out


def submit(command: list[str], queue: str | None, tasks: int, request: str, project: str | None, job_type: str,
           priority: int, requests: list[str] | None, limits: list[str] | None, stdout: str | None,
           stderr: str | None, array: int | None, cwd: str | None, env: list[str] | None, as_json: bool,
           url: str | None, token: str | None, state_dir: str | None, run_limit: int | None = None,
           time: int | None = None) -> None:
    import os

    if run_limit is not None and time is not None:
        fail("submit: -W and --time both set a run limit; give one", EXIT_USAGE)

    body: dict = {"command": command, "tasks": tasks, "priority": priority, "job_type": job_type,
                            "cwd": cwd or os.getcwd()}
    if request:
        body["request"] = request
    for key, value in (("queue", queue), ("project", project), ("stdout", stdout), ("stderr", stderr),
                       ("array", array), ("run_limit", run_limit if time is None else time)):
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
    res = call(connect(url, token, state_dir).post, "/v1/jobs", body)
    if as_json:
        print_json(res)
    elif res["count"] == 1:
        print(f"Job <{res['jobid']}> is submitted to queue <{res['queue']}>.")
    else:
        last = res["jobid"] + res["count"] - 1
        print(f"Job array <{res['jobid']}-{last}> ({res['count']} jobs) is submitted to queue <{res['queue']}>.")


SUBMIT = Command(
    "submit", "Submit a job, like bsub: everything after -- (or from the first word that is not an option) is the command and its arguments.",
    [
        Arg("command", many=True, help="The command and its arguments."),
        Opt("queue", ("-q", "--queue"), help="Queue (default: the cluster's default queue)."),
        Opt("tasks", ("-n", "--tasks"), int, 1, help="Number of tasks (slots).", min=1, metavar="N"),
        Opt("request", ("-R", "--resreq"), str, "", help='Resource requirement, e.g. "select[mem>4G] rusage[mem=4G]".'),
        Opt("project", ("-P", "--project"), help="Project to charge."),
        Opt("run_limit", ("-W",), parse_run_limit, None, metavar="[HH:]MM",
            help="Run limit in minutes (or hours:minutes): the job is ended when it has run this long."),
        Opt("time", ("--time",), parse_time, None, metavar="TIME",
            help="Run limit as sbatch writes it: MINUTES, MM:SS, HH:MM:SS or DAYS-HH[:MM[:SS]]."),
        Opt("job_type", ("--type",), str, "", help="Job type (for drift reports)."),
        Opt("priority", ("--priority",), int, 0, help="User priority; higher runs first.", metavar="N"),
        Opt("requests", ("--request",), multiple=True, metavar="NAME=QTY",
            help="Reserve NAME=QTY; units K, M, G, T, P are powers of 1024 (2G = 2GB = 2g); memory in MiB without a unit."),
        Opt("limits", ("--limit",), multiple=True, metavar="NAME=QTY", help="Cap NAME=QTY the worker enforces."),
        Opt("stdout", ("-o",), help="Output file (%J job id, %I array index).", metavar="FILE", complete="file"),
        Opt("stderr", ("-e",), help="Error file (%J job id, %I array index).", metavar="FILE", complete="file"),
        Opt("array", ("--array",), int, None, help="Submit N similar jobs.", min=1, metavar="N"),
        Opt("cwd", ("--cwd",), help="Working directory (default: the current one).", metavar="DIR", complete="dir"),
        Opt("env", ("--env",), multiple=True, help="NAME=VALUE for the job.", metavar="NAME=VALUE"),
        JSON,
        *common_options(),
    ],
    submit,
    interspersed=False,
    quick_exit=True,
    examples=(
        "xce submit -- sleep 60",
        "xce submit -W 1:30 -n 4 -- ./simulate",
        "xce submit -n 8 -R \"span[ptile=4] rusage[mem=2G]\" -q normal -- mpirun ./solver",
        "xce submit --type etl --request mem=500M --limit mem=1G -o out.%J -- python etl.py",
        "xce submit --array 100 --priority 5 -- ./task.sh",
    ),
)

COMMAND_SPECS = [SUBMIT]
