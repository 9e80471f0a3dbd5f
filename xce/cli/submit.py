"""``xce submit``: like bsub; everything after ``--`` (or the first word that is not an option) is the command."""

from __future__ import annotations

from xce.cli.client import EXIT_USAGE, call, connect, fail, print_json
from xce.cli.spec import JSON, Arg, Command, Opt, common_options
from xce.jobref import array_arg

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


_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_begin(text: str, now: float | None = None) -> int:
    """``-b``: ``+30s``/``+5m``/``+2h``/``+1d`` from now, LSF's ``[[[YYYY:]MM:]DD:]hh:mm`` (the next
    such time), or ``YYYY-MM-DDThh:mm[:ss]``; nanoseconds since the epoch."""
    import time

    now = time.time() if now is None else now
    t = text.strip()
    try:
        if t.startswith("+"):
            unit = t[-1] if t[-1] in _UNITS_S else "s"
            number = t[1:-1] if t[-1] in _UNITS_S else t[1:]
            return int((now + float(number) * _UNITS_S[unit]) * 1e9)
        if "T" in t or "-" in t:
            from datetime import datetime

            return int(datetime.fromisoformat(t).timestamp() * 1e9)
        parts = [int(x) for x in t.split(":")]
        if not 2 <= len(parts) <= 5:
            raise ValueError
        local = time.localtime(now)
        fields = [local.tm_year, local.tm_mon, local.tm_mday][: 5 - len(parts)] + parts
        year, month, day, hour, minute = fields
        stamp = time.mktime((year, month, day, hour, minute, 0, 0, 0, -1))
        if stamp <= now and len(parts) < 5:  # the next such time: tomorrow (or next month, year)
            if len(parts) == 2:
                stamp = time.mktime((year, month, day + 1, hour, minute, 0, 0, 0, -1))
            elif len(parts) == 3:
                stamp = time.mktime((year, month + 1, day, hour, minute, 0, 0, 0, -1))
            else:
                stamp = time.mktime((year + 1, month, day, hour, minute, 0, 0, 0, -1))
        return int(stamp * 1e9)
    except (ValueError, OverflowError):
        raise ValueError(f"expected +30s, +5m, +2h, [[[YYYY:]MM:]DD:]hh:mm or YYYY-MM-DDThh:mm, got {text!r}") from None


def _name_and_array(name: str | None, array: str | None) -> tuple[str | None, str | None]:
    """``-J "sweep[1-10]%2"`` carries an array as LSF's does; ``--array`` may not say it again."""
    from xce.jobref import RefError, parse_array, split_name

    spec = None
    try:
        if name is not None:
            name, spec = split_name(name)
        if array is not None:
            if spec is not None:
                fail("give the array once: in -J NAME[...] or with --array, not both", EXIT_USAGE)
            parse_array(array)
            spec = array
    except RefError as exc:
        fail(str(exc), EXIT_USAGE)
    return name, spec


def submit(**given) -> None:
    """A job script (``xce submit script.sh``) brings its own options (:mod:`xce.cli.jobscript`);
    the command line's win."""
    import os

    command = given["command"]
    if len(command) >= 1 and os.path.isfile(command[0]):
        try:
            with open(command[0], encoding="utf-8", errors="replace") as f:
                head = f.read(1 << 20)
        except OSError as exc:
            fail(f"cannot read the job script {command[0]}: {exc.strerror}")
        if head.startswith("#!") or any(w in head for w in ("#XCE", "#BSUB", "#SBATCH")):
            from xce.cli.jobscript import merge

            try:
                given = merge(SUBMIT, given, command[0], head)
            except ValueError as exc:
                fail(f"{command[0]} {exc}", EXIT_USAGE)
            script = os.path.abspath(command[0])
            runnable = os.access(script, os.X_OK) and head.startswith("#!")
            given["command"] = [script, *command[1:]] if runnable else ["/bin/sh", script, *command[1:]]
    _submit(**given)


def _submit(command: list[str], queue: str | None, tasks: int, request: str, project: str | None, job_type: str,
           priority: int, requests: list[str] | None, limits: list[str] | None, stdout: str | None,
           stderr: str | None, array: str | None, cwd: str | None, env: list[str] | None, name: str | None,
           hold: bool, begin: int | None, allow_pending_forever: bool, depend: str | None, dependency: str | None,
           as_json: bool,
           url: str | None, token: str | None, state_dir: str | None, run_limit: int | None = None,
           time: int | None = None, rerunnable: bool = False) -> None:
    import os

    if run_limit is not None and time is not None:
        fail("submit: -W and --time both set a run limit; give one", EXIT_USAGE)

    body: dict = {"command": command, "tasks": tasks, "priority": priority, "job_type": job_type,
                            "cwd": cwd or os.getcwd()}
    if request:
        body["request"] = request
    name, array = _name_and_array(name, array)
    for key, value in (("queue", queue), ("project", project), ("stdout", stdout), ("stderr", stderr),
                       ("array", array), ("name", name), ("begin_time", begin),
                       ("run_limit", run_limit if time is None else time)):
        if value is not None:
            body[key] = value
    if depend is not None and dependency is not None:
        fail("give the dependency once: -w (LSF) or --dependency (Slurm), not both", EXIT_USAGE)
    if dependency is not None:
        from xce.jobref import RefError, from_slurm

        try:
            depend = from_slurm(dependency)
        except RefError as exc:
            fail(str(exc), EXIT_USAGE)
    if depend is not None:
        body["depend"] = depend
    if hold:
        body["hold"] = True
    if allow_pending_forever:
        body["allow_pending_forever"] = True
    if requests:
        body["requests"] = parse_pairs("--request", requests)
    if limits:
        body["limits"] = parse_pairs("--limit", limits)
    if env:
        pairs = [e.partition("=") for e in env]
        if any(not sep or not k for k, sep, _ in pairs):
            fail("--env expects NAME=VALUE", EXIT_USAGE)
        body["env"] = {k: v for k, _, v in pairs}
    if rerunnable:
        body["rerunnable"] = True
    res = call(connect(url, token, state_dir).post, "/v1/jobs", body)
    if as_json:
        print_json(res)
    elif res.get("array_id") is None:
        print(f"Job <{res['jobid']}> is submitted to queue <{res['queue']}>.")
    else:
        from xce.jobref import format_indexes

        limit = f"%{res['array_limit']}" if res.get("array_limit") else ""
        print(f"Job <{res['jobid']}> is submitted to queue <{res['queue']}>: an array of {res['count']} "
              f"element{'s' if res['count'] != 1 else ''}, {res['jobid']}[{format_indexes(res['indexes'])}]{limit}.")


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
        Opt("array", ("--array",), array_arg, help="An array: N elements (1..N), or indexes with a running limit, 1-100:2%10 "
            "(Slurm's --array); elements are ID[INDEX], $XCE_ARRAY_INDEX in the job.", metavar="SPEC"),
        Opt("name", ("-J", "--job-name"), help='Job name; "NAME[1-100:2]%10" makes it an array (LSF).',
            metavar="NAME"),
        Opt("hold", ("-H", "--hold"), bool, False, help="Submit held: it pends until `xce release`."),
        Opt("begin", ("-b", "--begin"), parse_begin, None, metavar="TIME",
            help="Do not start before TIME: +30s, +5m, hh:mm, MM:DD:hh:mm, YYYY-MM-DDThh:mm."),
        Opt("depend", ("-w", "--depend"), metavar="EXPR",
            help="Start only when EXPR holds: done(ID), exit(ID[, CODE]), ended(ID), started(ID) with &&, || "
            "and parentheses; jobs as ID, ID[INDEX] or NAME (LSF's -w)."),
        Opt("dependency", ("--dependency",), metavar="LIST",
            help="Slurm's form: afterok:ID[:ID],afterany:ID,afternotok:ID,after:ID (',' all, '?' any)."),
        Opt("allow_pending_forever", ("--allow-pending-forever",), bool, False,
            help="Accept a job this cluster can never run (it pends until the cluster grows)."),
        Opt("cwd", ("--cwd",), help="Working directory (default: the current one).", metavar="DIR", complete="dir"),
        Opt("env", ("--env",), multiple=True, help="NAME=VALUE for the job.", metavar="NAME=VALUE"),
        Opt("rerunnable", ("--rerunnable",), bool, False,
            help="If its host is declared down (xceadmin host down --requeue), run the job again elsewhere."),
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
        "xce submit -J \"sweep[1-100:2]%10\" -o 'out.%J.%I' -- ./task.sh",
        "xce submit -H -b +10m -J nightly -- ./report.sh",
        "xce submit -w 'done(prep) && (exit(12, 1) || ended(13[2]))' -- ./next.sh",
        "xce submit job.sh          # reads #XCE, #BSUB and #SBATCH lines at its top",
    ),
)

COMMAND_SPECS = [SUBMIT]
