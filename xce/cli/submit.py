"""``xce submit``: like bsub; everything after ``--`` (or the first word that is not an option) is the command."""

from __future__ import annotations

from xce.cli.client import EXIT_USAGE, call, connect, fail, print_json
from xce.cli.spec import JSON, Arg, Command, Opt, common_options
from xce.jobref import array_arg


def _quantity(name: str, text: str) -> int:
    """The one quantity grammar (xce.core.quantity, stdlib only: the fast path stays cheap)."""
    from xce.cli.jobscript import Refused
    from xce.core.quantity import QuantityError, parse_quantity as parse

    try:
        return parse(name, text)
    except QuantityError as exc:
        raise Refused(str(exc)) from None


def parse_quantity(name: str, text: str) -> int:
    from xce.cli.jobscript import Refused

    try:
        return _quantity(name, text)
    except Refused as exc:
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
        minutes = sum(_whole(p, text) * m for p, m in zip(reversed(parts), (1, 60), strict=False))
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


def _pairs(kind: str, items: list[str]) -> dict:
    from xce.cli.jobscript import Refused

    out: dict = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise Refused(f"{kind} {item!r}: expected NAME=QTY, e.g. mem=4G or example.com/gpu=1")
        out[name.strip()] = _quantity(name.strip(), value)
    return out


def parse_pairs(kind: str, items: list[str]) -> dict:
    """``--request``/``--limit`` NAME=QTY items; a usage error (exit 2) for a bad one."""
    from xce.cli.jobscript import Refused

    try:
        return _pairs(kind, items)
    except Refused as exc:
        fail(str(exc), EXIT_USAGE)


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
        from xce.cli.jobscript import lsf_clock_fields

        parts = lsf_clock_fields(t)
        if parts is None:
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
    from xce.cli.jobscript import Refused
    from xce.jobref import RefError, parse_array, split_name

    spec = None
    try:
        if name is not None:
            name, spec = split_name(name)
        if array is not None:
            if spec is not None:
                raise Refused("give the array once: in -J NAME[...] or with --array, not both")
            parse_array(array)
            spec = array
    except RefError as exc:
        raise Refused(str(exc)) from None
    return name, spec


def parse_nodes(text: str) -> int:
    """``-N N`` (also Slurm's ``N-N``): XCE places a job on an exact host count, not a range."""
    low, dash, high = text.strip().partition("-")
    if not low.isdigit() or (dash and high != low) or int(low) < 1:
        raise ValueError(f"expected a host count such as 2 (a range MIN-MAX cannot be honoured here), got {text!r}")
    return int(low)


def parse_memory(text: str) -> int:
    """Slurm's ``--mem``: MB without a unit, K/M/G/T powers of 1024 (xce's grammar reads it so)."""
    from xce.core.quantity import parse_quantity as parse

    return parse("mem", text)


# The API's bounds (xce.controller.web.models), repeated here because importing pydantic would cost the
# submit command's start-up; tests/cli/test_directives.py checks they agree.
MAX_SCRIPT_BYTES = 4 * 1024 * 1024
MAX_ENV, MAX_ENV_BYTES, MAX_ARG_LEN = 1024, 256 * 1024, 65536
#: command[0] of a job whose script came on standard input, or from --wrap (Slurm's job name for it).
STDIN_NAME, WRAP_NAME = "stdin", "wrap"


def _decode(data: bytes, where: str) -> str:
    from xce.cli.jobscript import Refused

    if len(data) > MAX_SCRIPT_BYTES:
        raise Refused(f"the job script {where} is larger than {MAX_SCRIPT_BYTES // (1024 * 1024)} MiB, the most a "
                      "job may carry: keep the data in a file the script reads")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"the job script {where} is not UTF-8 text (byte {exc.start + 1})") from None


def _job_script(path: str) -> str | None:
    """The content of ``path`` when it is a job script (it starts with ``#!`` or holds directives)."""
    import os

    from xce.cli.jobscript import Refused

    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 20)
            text = head.decode("utf-8", errors="replace")
            if not (text.startswith("#!") or any(w in text for w in ("#XCE", "#BSUB", "#SBATCH"))):
                return None
            return _decode(head + f.read(MAX_SCRIPT_BYTES + 1 - len(head)), path)
    except OSError as exc:
        raise Refused(f"cannot read the job script {path}: {exc.strerror}") from None


def _with_directives(given: dict, text: str, where: str) -> dict:
    from xce.cli.directives import merge
    from xce.cli.jobscript import Refused

    try:
        return merge(SUBMIT, given, text)
    except Refused as exc:
        raise Refused(f"{where} {exc}") from None


def job_request(given: dict, *, stdin=None, environ: dict[str, str], cwd: str, host: str,
                prog: str = "xce submit", merged: dict | None = None) -> dict:
    """The body of ``POST /v1/jobs`` for a parsed command line: the one way from options to a job.

    ``stdin`` returns standard input's bytes, None when it is a terminal: with no command it is the
    job script (``xce submit < job.sh``); it is never read when a command is given (workflow tools
    pass an empty pipe). Refused for anything that cannot become this job as asked. ``prog`` names
    the program in a warning (where Slurm or LSF adjusts a job and says so); ``merged``, when given,
    receives the options with the script's directives in (``-Is`` in a ``#BSUB`` line: a terminal).
    """
    import os

    from xce.cli.jobscript import Refused

    command = list(given.get("command") or [])
    script = None
    if given.get("wrap") is not None:
        if command:
            raise Refused("--wrap TEXT is the whole job (#!/bin/sh, then TEXT): give no command with it")
        command, script = [WRAP_NAME], f"#!/bin/sh\n{given['wrap']}\n"
    elif not command:
        if stdin is None:
            raise Refused("missing COMMAND: give a command, a job script, or the script on standard input "
                          "(xce submit < job.sh)")
        script = _decode(stdin(), "on standard input")
        if not script.strip():
            raise Refused("no command given and standard input is empty: give a command or pipe a job script in")
        given, command = _with_directives(given, script, "standard input"), [STDIN_NAME]
    elif len(command) == 1 and any(c.isspace() for c in command[0]) and not os.path.exists(command[0]):
        command = ["/bin/sh", "-c", command[0]]  # bsub "echo a; echo b": one word is a shell line
    else:
        script = _job_script(command[0])
        if script is not None:
            given = _with_directives(given, script, command[0])
    if merged is not None:
        merged.update(given)

    def warn(text: str) -> None:  # where Slurm or LSF warns and adjusts the job, on standard error
        import sys

        sys.stderr.write(f"{prog}: warning: {text}\n")

    return _body(given, command, script, environ=environ, cwd=cwd, host=host, warn=warn)


def _written_span(g: dict) -> tuple[str, int] | None:
    """The span a ``-R`` the user wrote gives (``span[hosts=1]``, ``span[ptile=N]``): it fixes the
    slots each host gets."""
    found = None
    for text in g.get("request") or []:
        at = text.find("span[")
        if at >= 0:
            key, _, value = text[at + 5:text.find("]", at)].partition("=")
            if key.strip() in ("hosts", "ptile") and value.strip().isdigit():
                found = (key.strip(), int(value))
    return found


def _slots(g: dict, warn) -> tuple[int, int, int | None, str | None, int | None]:
    """Slots, CPUs per task, the slots each host gets (None: not known), the span it implies, and
    the host count.

    Tasks are ``-n`` (Slurm's ntasks, LSF's slots), else ``--nodes`` x ``--ntasks-per-node``, else one
    per node; each is ``-c`` slots (or ``--cpus-per-gpu`` x its GPUs). More hosts than tasks is what
    sbatch corrects with a warning: one host per task."""
    tasks, nodes, per_node = g.get("tasks"), g.get("nodes"), g.get("ntasks_per_node")
    cpus = g.get("cpus_per_task") or 1
    if g.get("cpus_per_gpu") and not g.get("cpus_per_task"):  # with -c, -c says the task's CPUs
        cpus = g["cpus_per_gpu"] * _gpus_per_task(g, tasks or 1)
    if tasks is None:
        tasks = (nodes or 1) * per_node if per_node else (nodes or 1)
    if nodes and tasks < nodes:
        warn(f"can't run {tasks} processes on {nodes} nodes, setting nnodes to {tasks}")
        nodes = tasks
    slots = tasks * cpus
    span = None
    written = _written_span(g)
    if per_node and nodes:  # sbatch -N 2 --ntasks-per-node=4: the hosts are given, tasks spread evenly
        host_slots = slots // nodes if slots % nodes == 0 else None
    elif per_node:
        span = f"span[ptile={per_node * cpus}]"
        host_slots = per_node * cpus
    elif nodes:
        host_slots = slots // nodes if slots % nodes == 0 else None
    elif written == ("hosts", 1) or tasks == 1:
        host_slots = slots
        if tasks == 1 and slots > 1 and not written:  # a task's CPUs are on one host, as in Slurm
            span = "span[hosts=1]"
    elif written and written[0] == "ptile":
        host_slots = written[1]
    else:
        host_slots = None
    return slots, cpus, host_slots, span, nodes


def _tasks_per_gpu(g: dict) -> dict:
    """sbatch's ``--ntasks-per-gpu=N`` as the task count or the GPUs it implies: given GPUs and no
    ``--ntasks``, N tasks for each of the job's GPUs; given ``--ntasks`` and no GPUs, one GPU for
    every N tasks (sbatch(1)). Not with ``--gpus-per-task`` or ``--ntasks-per-node``, as in sbatch."""
    from xce.cli.jobscript import Refused
    from xce.cli.placement import gpu_spec

    per_gpu = g.get("ntasks_per_gpu")
    if not per_gpu:
        return g
    for field in ("gpus_per_task", "ntasks_per_node"):
        if g.get(field):
            raise Refused(f"--ntasks-per-gpu is not compatible with --{field.replace('_', '-')} (as in sbatch)")
    if g.get("gpus"):
        total = gpu_spec(g["gpus"], "--gpus")[1]
    elif g.get("gpus_per_node") or g.get("gres"):
        total = _node_gpus(g) * (g.get("nodes") or 1)
    elif g.get("tasks"):
        return {**g, "gpus": str(-(-g["tasks"] // per_gpu))}
    else:
        raise Refused("--ntasks-per-gpu needs GPUs (--gpus, --gpus-per-node or --gres) or a task count (--ntasks)")
    return g if g.get("tasks") else {**g, "tasks": total * per_gpu}


def _gpus_per_task(g: dict, tasks: int) -> int:
    from xce.cli.jobscript import Refused
    from xce.cli.placement import gpu_spec

    if g.get("gpus_per_task"):
        return gpu_spec(g["gpus_per_task"], "--gpus-per-task")[1]
    if tasks == 1 and g.get("gpus"):
        return gpu_spec(g["gpus"], "--gpus")[1]
    if tasks == 1 and (g.get("gpus_per_node") or g.get("gres")) and (g.get("nodes") or 1) == 1:
        return _node_gpus(g)
    raise Refused("--cpus-per-gpu needs the GPUs of each task: give --gpus-per-task (or one task with --gpus)")


def _node_gpus(g: dict) -> int:
    from xce.cli.jobscript import Refused
    from xce.cli.placement import gpu_spec, gres_gpus

    given = [x for x in ("gpus_per_node", "gres") if g.get(x)]
    if len(given) > 1:
        raise Refused("give GPUs per host once: --gpus-per-node or --gres=gpu:N")
    return gpu_spec(g["gpus_per_node"], "--gpus-per-node")[1] if g.get("gpus_per_node") else gres_gpus(g["gres"])[1]


def _gpu_model(g: dict) -> str | None:
    """The GPU model asked for: ``--gpu-model``, or the type in ``--gres=gpu:TYPE:N``, ``--gpus=TYPE:N``,
    ``--gpus-per-node``/``--gpus-per-task=TYPE:N`` (one model per job)."""
    from xce.cli.jobscript import Refused
    from xce.cli.placement import gpu_spec, gres_gpus

    named = {}
    if g.get("gpu_model"):
        named["--gpu-model"] = g["gpu_model"]
    for field, option in (("gpus", "--gpus"), ("gpus_per_node", "--gpus-per-node"), ("gpus_per_task", "--gpus-per-task")):
        if g.get(field) and gpu_spec(g[field], option)[0]:
            named[option] = gpu_spec(g[field], option)[0]
    if g.get("gres") and gres_gpus(g["gres"])[0]:
        named["--gres"] = gres_gpus(g["gres"])[0]
    if len(set(named.values())) > 1:
        raise Refused("the GPU model is given twice, differently (" + ", ".join(f"{o} {m}" for o, m in named.items())
                      + "); a job's GPUs are of one model")
    return next(iter(named.values()), None)


def _per_host_needs_slots(g: dict) -> bool:
    """Whether an amount is per host (``--mem``, GPUs per node): it needs the slots each host gets."""
    return bool(g.get("mem") or g.get("gpus_per_node") or g.get("gres"))


def _gpus_per_slot(g: dict, slots: int, cpus: int, host_slots: int | None) -> int | None:
    from xce.cli.jobscript import Refused
    from xce.cli.placement import gpu_spec, per_slot

    given = [f for f in ("gpus", "gpus_per_node", "gres", "gpus_per_task") if g.get(f)]
    if not given:
        return None
    if g.get("gpus_per_task") and len(given) > 1:
        _same_gpus(g, slots // cpus, host_slots // cpus if host_slots else None)
    elif len(given) > 1 and not (set(given) == {"gpus_per_node", "gres"}):
        raise Refused(f"give the job's GPUs one way ({', '.join('--' + f.replace('_', '-') for f in given)} "
                      "were given)")
    fix = "ask for a multiple of that many GPUs, or as many slots as GPUs"
    if g.get("gpus_per_task"):
        return per_slot(gpu_spec(g["gpus_per_task"], "--gpus-per-task")[1], cpus, "GPU(s) per task", fix, "per task")
    if g.get("gpus"):
        return per_slot(gpu_spec(g["gpus"], "--gpus")[1], slots, "GPU(s) of the job", fix, "of the job")
    return per_slot(_node_gpus(g), host_slots, "GPU(s) per host", fix)


def _gpus(g: dict, slots: int, cpus: int, host_slots: int | None) -> tuple[int | None, int | None]:
    """The job's GPUs as (per slot, per host). Per slot where the count divides among the slots it
    is given for; else per host, reserved once on each host the job uses (``rusage[xce.io/gpu=N/host]``),
    where that is what was asked: GPUs per node (``--gres=gpu:N``, ``--gpus-per-node``, ``bsub -gpu
    num=N``, per host in both systems), or GPUs per task or of the job whose tasks share one host
    (``-c 8 --gpus-per-task=1``, ``-n 4 -R span[hosts=1] -gpu num=1``)."""
    from xce.cli.jobscript import Refused
    from xce.cli.placement import gpu_spec

    if g.get("gpus_per_task") and any(g.get(f) for f in ("gpus", "gpus_per_node", "gres")):
        _same_gpus(g, slots // cpus, host_slots // cpus if host_slots else None)  # they must agree
    try:
        return _gpus_per_slot(g, slots, cpus, host_slots), None
    except Refused:
        if g.get("gpus_per_task") and host_slots == slots:
            return None, gpu_spec(g["gpus_per_task"], "--gpus-per-task")[1] * (slots // cpus)
        if g.get("gpus") and not g.get("gpus_per_task") and host_slots == slots:
            return None, gpu_spec(g["gpus"], "--gpus")[1]
        if (g.get("gpus_per_node") or g.get("gres")) and not g.get("gpus") and not g.get("gpus_per_task"):
            return None, _node_gpus(g)
        raise


def _same_gpus(g: dict, tasks: int, host_tasks: int | None) -> None:
    """``--gpus-per-task`` with ``--gres=gpu:N``/``--gpus-per-node``/``--gpus``: Slurm takes them
    together when they agree (``-n 2 --gpus-per-task=1 --gres=gpu:2`` on one node), so the per-task
    count decides and the others must come to the same GPUs, or the job is refused naming them."""
    from xce.cli.jobscript import Refused
    from xce.cli.placement import gpu_spec

    per_task = gpu_spec(g["gpus_per_task"], "--gpus-per-task")[1]
    if g.get("gpus") and gpu_spec(g["gpus"], "--gpus")[1] != per_task * tasks:
        raise Refused(f"--gpus {g['gpus']} and --gpus-per-task {g['gpus_per_task']} over {tasks} task(s) ask for "
                      "different GPUs; give one of them")
    if g.get("gpus_per_node") or g.get("gres"):
        if host_tasks is None or _node_gpus(g) != per_task * host_tasks:
            raise Refused(f"GPUs per node ({_node_gpus(g)}) and --gpus-per-task {g['gpus_per_task']} over "
                          f"{host_tasks or 'an unknown number of'} task(s) per node ask for different GPUs; "
                          "give one of them")


def _memory(g: dict, cpus: int, host_slots: int | None, gpus: int | None,
            host_gpus: int | None = None) -> tuple[int | None, bool]:
    """Slurm's memory options as memory per slot, and whether the job wants whole hosts (``--mem=0``)."""
    from xce.cli.jobscript import Refused

    given = [f for f in ("mem", "mem_per_cpu", "mem_per_gpu") if g.get(f) is not None]
    if len(given) > 1:
        raise Refused("--mem, --mem-per-cpu and --mem-per-gpu exclude each other (as in sbatch); give one")
    if not given:
        return None, False
    if g.get("mem") is not None:
        if g["mem"] == 0:  # all of each host's memory: the hosts to itself
            return None, True
        if host_slots is None:
            raise Refused("--mem is memory per node, and the tasks of this job cannot be spread evenly over "
                          "its nodes: give --mem-per-cpu, or a task count that --nodes divides")
        return -(-g["mem"] // host_slots), False
    if g.get("mem_per_cpu") is not None:
        return g["mem_per_cpu"], False
    if host_gpus and host_slots:  # the host's GPUs' memory, spread over its slots
        return -(-g["mem_per_gpu"] * host_gpus // host_slots), False
    if not gpus:
        raise Refused("--mem-per-gpu needs GPUs (--gpus, --gpus-per-task, --gpus-per-node or --gres)")
    return g["mem_per_gpu"] * gpus, False


#: The key of a body whose job waits for its namesakes (``--dependency=singleton``): taken out by
#: :func:`after_namesakes`, where the submitting program can ask the controller for them.
SINGLETON = "singleton"


def _without_singleton(text: str) -> tuple[str, bool]:
    """Slurm's dependency list without its ``singleton`` part, and whether there was one."""
    from xce.cli.jobscript import Refused

    sep = "?" if "?" in text else ","
    parts = [p.strip() for p in text.split(sep)]
    rest = [p for p in parts if p != "singleton"]
    if len(rest) < len(parts) and sep == "?" and rest:
        raise Refused(f"dependency {text!r}: singleton cannot be one of several alternatives ('?') here; use ','")
    return sep.join(rest), len(rest) < len(parts)


def after_namesakes(body: dict, earlier) -> dict:
    """``--dependency=singleton`` (sbatch(1)): the job starts after every earlier job of the same
    name and user has ended, so one of them runs at a time. ``earlier(name)`` gives the ids of the
    caller's unfinished jobs of that name (the controller's answer); each becomes ``ended(ID)``,
    AND-ed with the rest of the dependency. A body without singleton is returned as it is."""
    import os

    if not body.pop(SINGLETON, False):
        return body
    terms = [f"ended({i})" for i in earlier(body.get("name") or os.path.basename(body["command"][0]))]
    if terms:
        body["depend"] = " && ".join(([f"({body['depend']})"] if body.get("depend") else []) + terms)
    return body


def _workdir(given: str | None, cwd: str) -> str:
    """The job's working directory: a relative ``--chdir``/``-cwd`` (``.``, ``./run``) names a
    directory under the one it was submitted from, as sbatch and bsub read it."""
    import os

    if not given:
        return cwd
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(given)))


def _body(g: dict, command: list[str], script: str | None, *, environ: dict[str, str], cwd: str,
          host: str, warn) -> dict:
    from xce.cli.envcopy import EnvError, check_size, job_env
    from xce.cli.jobscript import Refused
    from xce.cli.placement import host_list, merge_requirements, warning

    if g.get("run_limit") is not None and g.get("time") is not None:
        raise Refused("-W and --time both set a run limit; give one")
    if g.get("depend") is not None and g.get("dependency") is not None:
        raise Refused("give the dependency once: -w (LSF) or --dependency (Slurm), not both")
    if g.get("request"):
        from xce.cli.placement import gpu_rusage

        texts, lsf_gpus = gpu_rusage(g["request"])
        if lsf_gpus is not None:
            if any(g.get(f) for f in ("gpus", "gpus_per_node", "gres", "gpus_per_task")):
                raise Refused("give the job's GPUs one way (-gpu, or rusage[] of an LSF GPU resource)")
            g = {**g, "request": texts, "gpus_per_node": str(lsf_gpus)}
    g = _tasks_per_gpu(g)
    slots, cpus, host_slots, span, nodes = _slots(g, warn)
    if host_slots is None and not nodes and _per_host_needs_slots(g):
        # Slurm fills a node's CPUs before it takes the next (block distribution): a job without -N
        # whose amounts are per node runs on one host, which holds all its slots.
        span, host_slots = "span[hosts=1]", slots
    gpus, host_gpus = _gpus(g, slots, cpus, host_slots)
    if host_gpus is not None:
        span = " ".join(filter(None, (span, f"rusage[xce.io/gpu={host_gpus}/host]")))
    mem, whole_hosts = _memory(g, cpus, host_slots, gpus, host_gpus)
    body: dict = {"command": command, "tasks": slots, "priority": g.get("priority") or 0,
                  "job_type": g.get("job_type") or "", "cwd": _workdir(g.get("cwd"), cwd)}
    if script is not None:
        body["script"] = script
    if cpus != 1:
        body["cpus_per_task"] = cpus
    request = merge_requirements([*(g.get("request") or []), *([span] if span else [])])
    if request:
        body["request"] = request
    name, array = _name_and_array(g.get("name"), g.get("array"))
    for key, value in (("queue", g.get("queue")), ("project", g.get("project")), ("stdout", g.get("stdout")),
                       ("stderr", g.get("stderr")), ("array", array), ("name", name),
                       ("begin_time", g.get("begin")), ("run_limit", g.get("run_limit") or g.get("time")),
                       ("nodes", nodes), ("open_mode", g.get("open_mode")),
                       ("constraint", g.get("constraint")), ("gpu_model", _gpu_model(g))):
        if value is not None:
            body[key] = value
    depend = g.get("depend")
    if g.get("dependency") is not None:
        from xce.jobref import RefError, from_slurm

        rest, singleton = _without_singleton(g["dependency"])
        try:
            depend = from_slurm(rest) if rest else None
        except RefError as exc:
            raise Refused(str(exc)) from None
        if singleton:
            body[SINGLETON] = True
    if depend is not None:
        body["depend"] = depend
    for flag in ("hold", "allow_pending_forever", "rerunnable"):
        if g.get(flag):
            body[flag] = True
    if g.get("interactive") or g.get("pty"):  # bsub -I in a job script's #BSUB lines, too
        body["interactive"] = True
    if g.get("exclusive") or whole_hosts:
        body["exclusive"] = True
    requests = _pairs("--request", g["requests"]) if g.get("requests") else {}
    for resource, amount, option in (("mem", mem, "--mem"), ("xce.io/gpu", gpus, "the GPU options")):
        if amount is not None:
            if resource in requests:
                raise Refused(f"--request {resource}= and {option} both reserve {resource}; give one")
            requests[resource] = amount
    if requests:
        body["requests"] = requests
    if g.get("limits"):
        body["limits"] = _pairs("--limit", g["limits"])
    hosts, exclude = host_list(g.get("hosts")), host_list(g.get("exclude"))
    if hosts:
        body["hosts"] = hosts
    if exclude:
        body["exclude_hosts"] = exclude
    body.update(warning(g.get("signal"), g.get("warn_signal"), g.get("warn_time")))
    try:
        env = job_env(g.get("env"), environ)
        check_size(env, MAX_ENV, MAX_ENV_BYTES, MAX_ARG_LEN)
    except EnvError as exc:
        raise Refused(str(exc)) from None
    if env:
        body["env"] = env
    body["submit_host"] = host
    recorded = _recorded(g.get("record"))
    recorded.update(_mail(g.get("mail_type"), g.get("mail_user")))
    if g.get("cpus_per_gpu") and g.get("cpus_per_task"):  # -c says the task's CPUs; the ratio is kept
        recorded.setdefault("cpus_per_gpu", str(g["cpus_per_gpu"]))
    if recorded:
        body["recorded"] = recorded
    return body


def _mail(types: str | None, to: str | None) -> dict[str, str]:
    """``--mail-type``/``--mail-user`` as the job keeps them (the recorded options the views show and
    the controller mails from, :mod:`xce.mail.asked`); a type Slurm refuses is refused."""
    out = {}
    if types is not None:
        from xce.cli.jobscript import Refused
        from xce.mail.asked import parse_mail_type

        try:
            parse_mail_type(types)
        except ValueError as exc:
            raise Refused(str(exc)) from None
        out["mail_type"] = types
    if to:
        out["mail_user"] = to
    return out


def _recorded(items: list[str] | None) -> dict[str, str]:
    from xce.cli.jobscript import Refused

    out: dict[str, str] = {}
    for item in items or []:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise Refused(f"--record {item!r}: expected NAME=TEXT")
        out[name.strip()] = value
    return out


def submit(**given) -> None:
    """A job script (``xce submit script.sh``, ``xce submit < script.sh``) brings its own options
    (:mod:`xce.cli.jobscript`); the command line's win."""
    import os
    import sys

    from xce.cli.jobscript import Refused

    as_json, url, token, state_dir = given["as_json"], given["url"], given["token"], given["state_dir"]
    stdin = None if sys.stdin is None or sys.stdin.isatty() else \
        (lambda: sys.stdin.buffer.read(MAX_SCRIPT_BYTES + 1))
    try:
        # os.uname() is gethostname() without importing socket (the submit command stays cheap)
        merged: dict = {}
        body = job_request(given, stdin=stdin, environ=dict(os.environ), cwd=os.getcwd(), host=os.uname().nodename,
                           merged=merged)
    except Refused as exc:
        fail(str(exc), EXIT_USAGE)
    interactive = body.get("interactive")  # -I, -Is, -Ip here or in the script's #BSUB lines
    if interactive:  # bsub -I, -Is, -Ip: wait for it, then be its terminal (xce.cli.interactive)
        from xce.cli import interactive as terminal

        body = terminal.prepare(body)
    if body.get(SINGLETON):
        client = connect(url, token, state_dir)
        body = after_namesakes(body, lambda name: [j["jobid"] for j in call(client.get, "/v1/jobs", name=name)["jobs"]])
    res = call(connect(url, token, state_dir).post, "/v1/jobs", body)
    if interactive:
        return terminal.follow(connect(url, token, state_dir), res, raw=bool(merged.get("pty")))
    if as_json:
        print_json(res)
    elif res.get("array_id") is None:
        print(f"Job <{res['jobid']}> is submitted to queue <{res['queue']}>.")
    else:
        from xce.jobref import format_indexes

        limit = f"%{res['array_limit']}" if res.get("array_limit") else ""
        print(f"Job <{res['jobid']}> is submitted to queue <{res['queue']}>: an array of {res['count']} "
              f"element{'s' if res['count'] != 1 else ''}, {res['jobid']}[{format_indexes(res['indexes'])}]{limit}.")


_SLURM = "As sbatch"
SUBMIT = Command(
    "submit", "Submit a job, like bsub: everything after -- (or from the first word that is not an option) is the "
    "command and its arguments; one word with spaces is a shell line; a job script's #XCE, #BSUB and #SBATCH lines "
    "are read, and with no command the script comes on standard input.",
    [
        Arg("command", many=True, required=False, help="The command and its arguments, or a job script and its "
            "arguments (spooled: it may be deleted once submitted)."),
        Opt("queue", ("-q", "--queue"), help="Queue (default: the cluster's default queue).", complete="queues"),
        Opt("tasks", ("-n", "--tasks"), int, None, help="Number of tasks (slots; with -c each task is that many "
            "slots). Default 1.", min=1, metavar="N"),
        Opt("request", ("-R", "--resreq"), multiple=True, metavar="REQ",
            help='Resource requirement, e.g. "select[mem>4G] rusage[mem=4G]"; several are merged as LSF merges them.'),
        Opt("project", ("-P", "--project"), help="Project to charge."),
        Opt("run_limit", ("-W",), parse_run_limit, None, metavar="[HH:]MM",
            help="Run limit in minutes (or hours:minutes): the job is ended when it has run this long."),
        Opt("time", ("--time",), parse_time, None, metavar="TIME",
            help="Run limit as sbatch writes it: MINUTES, MM:SS, HH:MM:SS or DAYS-HH[:MM[:SS]]."),
        Opt("job_type", ("--type",), str, "", help="Job type (for drift reports)."),
        Opt("priority", ("--priority",), int, 0, help="User priority; higher runs first.", metavar="N"),
        Opt("requests", ("--request",), multiple=True, metavar="NAME=QTY",
            help="Reserve NAME=QTY per slot; units K, M, G, T, P are powers of 1024 (2G = 2GB = 2g); memory in MiB "
            "without a unit."),
        Opt("limits", ("--limit",), multiple=True, metavar="NAME=QTY", help="Cap NAME=QTY the worker enforces."),
        Opt("stdout", ("-o",), help="Output file (%J job id, %I array index; %j %A %a %x %u %N as Slurm writes them); "
            "errors go there too unless -e.", metavar="FILE", complete="file"),
        Opt("stderr", ("-e",), help="Error file (the same codes as -o).", metavar="FILE", complete="file"),
        Opt("open_mode", ("--open-mode",), choices=("append", "truncate"), metavar="MODE",
            help="append to the output files (bsub -o, the default) or truncate them first (bsub -oo, sbatch)."),
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
        Opt("env", ("--env",), multiple=True, metavar="LIST",
            help="The job's environment: all (the default: yours, but XCE_TOKEN), none, NAME=VALUE, NAME (your "
            "value), ~NAME (left out); comma-separated or repeated."),
        Opt("rerunnable", ("--rerunnable",), bool, False, negate=("--no-rerunnable",),
            help="If its host is declared down (xceadmin host down --requeue), run the job again elsewhere."),
        Opt("exclusive", ("-x", "--exclusive"), bool, False, help="Whole hosts: no other job on them while it runs."),
        Opt("hosts", ("-m", "--hosts"), multiple=True, metavar="HOSTS", complete="hosts",
            help="Only on these hosts or host groups: names separated by spaces or commas, node[1-3,5] ranges."),
        Opt("exclude", ("--exclude",), multiple=True, metavar="HOSTS", help="Never on these hosts (as --hosts)."),
        Opt("nodes", ("--nodes",), parse_nodes, None, metavar="N", help="On exactly N hosts, tasks spread evenly."),
        Opt("cpus_per_task", ("-c", "--cpus-per-task"), int, None, min=1, metavar="N",
            help="Slots of each task (sbatch -c): the job has N x -n slots."),
        Opt("ntasks_per_node", ("--ntasks-per-node",), int, None, min=1, metavar="N",
            help=f"{_SLURM}: N tasks on each host (span[ptile=N x -c]); without -n, --nodes x N tasks."),
        Opt("mem", ("--mem",), parse_memory, None, metavar="MEM",
            help=f"{_SLURM}: memory per host (MB without a unit), reserved per slot; without --nodes the tasks run on "
            "one host; 0 = whole hosts."),
        Opt("mem_per_cpu", ("--mem-per-cpu",), parse_memory, None, metavar="MEM", help=f"{_SLURM}: memory per slot."),
        Opt("mem_per_gpu", ("--mem-per-gpu",), parse_memory, None, metavar="MEM", help=f"{_SLURM}: memory per GPU."),
        Opt("gpus", ("--gpus",), metavar="[TYPE:]N", help=f"{_SLURM}: GPUs of the whole job (xce.io/gpu, per slot "
            "here)."),
        Opt("gpus_per_node", ("--gpus-per-node",), metavar="[TYPE:]N", help=f"{_SLURM}: GPUs on each host."),
        Opt("gpus_per_task", ("--gpus-per-task",), metavar="[TYPE:]N", help=f"{_SLURM}: GPUs of each task."),
        Opt("ntasks_per_gpu", ("--ntasks-per-gpu",), int, None, min=1, metavar="N",
            help=f"{_SLURM}: N tasks for every GPU: without -n, the GPUs asked for x N tasks; with -n and no GPUs, "
                 "one GPU for every N tasks."),
        Opt("gres", ("--gres",), multiple=True, metavar="gpu[:TYPE]:N", help=f"{_SLURM}: GPUs per host."),
        Opt("cpus_per_gpu", ("--cpus-per-gpu",), int, None, min=1, metavar="N",
            help=f"{_SLURM}: slots per GPU (with -c, -c says each task's slots)."),
        Opt("constraint", ("--constraint",), metavar="EXPR",
            help=f"{_SLURM} (-C): only hosts with these features: a&b, a|b, [a|b], a*2 (Slurm's grammar)."),
        Opt("gpu_model", ("--gpu-model",), metavar="NAME",
            help="Only GPUs of this model (sbatch --gres=gpu:NAME:N, bsub -gpu gmodel=NAME)."),
        Opt("signal", ("--signal",), metavar="[B:]SIG[@S]",
            help="Send SIG S seconds (default 60) before the run limit; B: to the job script's shell only (sbatch)."),
        Opt("warn_signal", ("--warn-signal",), metavar="SIG", help="As bsub -wa: the signal sent before the run limit."),
        Opt("warn_time", ("--warn-time",), parse_run_limit, None, metavar="[HH:]MM",
            help="As bsub -wt: how long before the run limit --warn-signal is sent."),
        Opt("wrap", ("--wrap",), metavar="TEXT", help="The job is TEXT run by /bin/sh (sbatch --wrap)."),
        Opt("mail_type", ("--mail-type",), metavar="TYPES",
            help=f"{_SLURM}: mail when the job begins, ends, fails ...: BEGIN, END, FAIL, REQUEUE, TIME_LIMIT, ALL, "
            "ARRAY_TASKS, NONE, comma-separated (sent where the site configured [mail])."),
        Opt("mail_user", ("--mail-user",), metavar="ADDRESS",
            help="Where the job's mail goes (sbatch --mail-user, bsub -u); by default its user at the site's domain."),
        Opt("record", ("--record",), multiple=True, metavar="NAME=TEXT",
            help="Keep NAME=TEXT with the job (options that have no effect here: wckey, comment ...)."),
        Opt("interactive", ("-I", "--interactive"), bool, False,
            help="Interactive (bsub -I): once the job starts, its input and output are this terminal's and its exit "
            "status is this command's; Ctrl-C while it waits kills it."),
        Opt("pty", ("-Is", "-Ip", "--pty"), bool, False,
            help="Interactive on a pseudo-terminal in raw mode, for shells and full-screen programs (bsub -Is, "
            "-Ip; srun --pty)."),
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
        "xce submit < job.sh        # the script on standard input",
        "xce submit \"echo a; echo b\"  # one word: a shell line",
    ),
)

COMMAND_SPECS = [SUBMIT]
