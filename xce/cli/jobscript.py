"""``xce submit script.sh``: options written in the script's leading comment block, as ``bsub <
script`` and ``sbatch script`` read them.

Lines ``#XCE OPTIONS`` carry ``xce submit`` options as typed; ``#BSUB`` and ``#SBATCH`` lines carry
LSF's and Slurm's options, each translated to its XCE spelling. An option either changes the job
as it would under LSF or Slurm, or is kept with the job (``--record``) where it cannot matter here
(mail, accounting keys), or is refused with the reason; none is dropped in silence. Slurm's long
options may be shortened to any unambiguous prefix (``--ntasks-per-n=2``), as getopt allows. The
block ends at the first line that is neither a comment nor blank. Options given on the command line
win over the script's; within the script a later line wins over an earlier one, except for the
options that may be given many times (``-R``, ``--env``, ``--record`` ...), whose lines add up.
Only ``shlex`` is imported, and only when a script is given.
"""

from __future__ import annotations

import os


class Refused(ValueError):
    """A directive or option this cluster cannot honour; the message says why."""


# -- values that LSF and Slurm write differently ---------------------------------------------------

_LSF_UNITS = {"KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4, "PB": 1024**5, "EB": 1024**6}
#: LSF reads ``-M`` (and its configuration says so: ``badmin showconf``) in this unit; a site that
#: sets ``LSF_UNIT_FOR_LIMITS`` in lsf.conf sets it in the environment of its submitters.
LSF_UNIT_FOR_LIMITS = "KB"


def lsf_unit() -> int:
    """Bytes in one unit of ``-M``: ``$LSF_UNIT_FOR_LIMITS``, else :data:`LSF_UNIT_FOR_LIMITS`."""
    name = os.environ.get("LSF_UNIT_FOR_LIMITS", LSF_UNIT_FOR_LIMITS).strip().upper()
    if name not in _LSF_UNITS:
        raise Refused(f"LSF_UNIT_FOR_LIMITS={name!r} is not one of {', '.join(_LSF_UNITS)}")
    return _LSF_UNITS[name]


def lsf_memory(text: str) -> str:
    """bsub's ``-M``: a bare number in LSF_UNIT_FOR_LIMITS, or a number with its own unit; the
    amount as xce's quantity grammar writes it exactly."""
    from xce.core.quantity import QuantityError, format_quantity, parse_quantity

    value = text.strip().rstrip("!")
    try:
        amount = int(value) * lsf_unit() if value.isdigit() else parse_quantity("mem", value)
    except QuantityError as exc:
        raise Refused(f"-M {text}: {exc}") from None
    if amount <= 0:
        raise Refused(f"-M {text}: expected a memory limit above 0")
    return format_quantity("mem", amount)


def lsf_resreq(text: str) -> str:
    """bsub's ``-R``: a bare ``mem=N`` inside ``rusage[...]`` is in LSF_UNIT_FOR_LIMITS, as LSF reads it
    (xce's own grammar reads a bare memory amount as MiB); everything else is kept as written."""
    out, pos = [], 0
    while (at := text.find("rusage[", pos)) >= 0 and (end := text.find("]", at)) >= 0:
        out += [text[pos:at], _rusage_in_unit(text[at:end + 1])]
        pos = end + 1
    return "".join(out) + text[pos:]


def _rusage_in_unit(section: str) -> str:
    from xce.core.quantity import format_quantity

    out, pos = [], 0
    while (at := section.find("mem=", pos)) >= 0:
        start = stop = at + 4
        while stop < len(section) and (section[stop].isdigit() or section[stop] == "."):
            stop += 1
        number = section[start:stop]
        whole_key = at == 0 or section[at - 1] in "[,: ("
        bare = number and number != "." and (stop == len(section) or not section[stop].isalpha())
        out.append(section[pos:start])
        out.append(format_quantity("mem", int(float(number) * lsf_unit())) if whole_key and bare else number)
        pos = stop
    return "".join(out) + section[pos:]


def lsf_slots(text: str) -> str:
    """bsub's ``-n MIN,MAX``: the job runs on MAX slots (XCE starts a job on a fixed count)."""
    return text.rpartition(",")[2].strip()


def lsf_gpu(text: str) -> list[str]:
    """bsub's ``-gpu "num=N[:mode=...:j_exclusive=...]"``: N GPUs on each host (LSF's default per-host
    count); the modes are kept as given (each job's GPUs are already its own here)."""
    if text.strip() == "-":
        return ["--gpus-per-node", "1"]
    out: list[str] = []
    kept = []
    for item in text.replace(",", ":").split(":"):
        key, _, value = item.strip().partition("=")
        if not key:
            continue
        if key == "num":
            out += ["--gpus-per-node", value.strip().partition("/")[0]]
        elif key in ("mode", "j_exclusive", "mps", "aff", "block"):
            kept.append(item.strip())
        else:
            raise Refused(f"-gpu {key}=: this cluster cannot choose GPUs by {key} (only num=N, and mode=, "
                          "j_exclusive=, mps= which are kept with the job)")
    if kept:
        out += ["--record", "gpu=" + ":".join(kept)]
    return out or ["--gpus-per-node", "1"]


def slurm_partition(text: str) -> str:
    """``-p a,b``: Slurm takes the first partition that can run the job; XCE runs it in the first."""
    return text.split(",")[0].strip()


def slurm_nice(text: str) -> str:
    """``--nice[=N]`` lowers the job's priority by N (100 when not given)."""
    value = text.strip() or "100"
    try:
        return str(-int(value))
    except ValueError:
        raise Refused(f"--nice={text}: expected a whole number") from None


def slurm_begin(text: str) -> str:
    """``--begin``: Slurm's forms, as ``xce submit -b`` reads them."""
    import datetime

    t = text.strip().lower()
    names = {"midnight": "00:00", "noon": "12:00", "teatime": "16:00", "now": "+0s", "today": "+0s",
             "fika": "15:00"}
    if t in names:
        return names[t]
    if t == "tomorrow":
        return (datetime.date.today() + datetime.timedelta(days=1)).isoformat() + "T00:00"
    if t.startswith("now+"):
        amount = t[4:]
        number = amount.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = amount[len(number):] or "seconds"
        scale = next((s for words, s in (
            (("s", "sec", "second", "seconds"), "s"), (("m", "min", "minute", "minutes"), "m"),
            (("h", "hour", "hours"), "h"), (("d", "day", "days"), "d")) if unit in words), None)
        if unit in ("week", "weeks") and number.isdigit():
            return f"+{int(number) * 7}d"
        if scale is None or not number.isdigit():
            raise Refused(f"--begin={text}: expected now+N[seconds|minutes|hours|days|weeks]")
        return f"+{number}{scale}"
    if t.count(":") == 2 and "-" not in t:  # HH:MM:SS: XCE starts jobs on the minute
        return t.rpartition(":")[0]
    return text.strip()


def _exclusive(value: str) -> list[str]:
    if value:
        raise Refused(f"--exclusive={value}: this cluster shares hosts only between jobs of any user or none "
                      "(plain --exclusive)")
    return ["-x"]


def _refuse(option: str, why: str):
    def refuse(value: str):
        raise Refused(f"{option}: {why}")
    return refuse


def _record(name: str):
    return lambda value: ["--record", f"{name}={value}"]


def _same(flag: str):
    return lambda value: [flag, value]


def _flag(*words: str):
    return lambda value: list(words)


_NO_FEATURES = ("hosts here have no Slurm node features; write the condition on host resources as "
                "-R 'select[...]' (xce hosts -l shows them)")

#: bsub's options: (takes a value, the xce submit words for that value).
BSUB = {
    "-J": (True, _same("-J")), "-q": (True, _same("-q")), "-P": (True, _same("-P")),
    "-n": (True, lambda v: ["-n", lsf_slots(v)]), "-nnodes": (True, lambda v: ["--nodes", v, "-x"]),
    "-R": (True, lambda v: ["-R", lsf_resreq(v)]), "-M": (True, lambda v: ["--limit", "mem=" + lsf_memory(v)]),
    "-W": (True, _same("-W")), "-We": (True, _record("estimated_run_time")),
    "-o": (True, _same("-o")), "-oo": (True, lambda v: ["-o", v, "--open-mode", "truncate"]),
    "-e": (True, _same("-e")), "-eo": (True, lambda v: ["-e", v, "--open-mode", "truncate"]),
    "-cwd": (True, _same("--cwd")), "-env": (True, lambda v: ["--env", _env_lsf(v)]),
    "-w": (True, _same("-w")), "-b": (True, _same("-b")), "-H": (False, _flag("-H")),
    "-sp": (True, _same("--priority")), "-x": (False, _flag("-x")), "-m": (True, _same("--hosts")),
    "-r": (False, _flag("--rerunnable")), "-rn": (False, _flag("--no-rerunnable")),
    "-wa": (True, _same("--warn-signal")), "-wt": (True, _same("--warn-time")),
    "-gpu": (True, lsf_gpu),
    "-G": (True, _record("user_group")), "-U": (True, _record("reservation")), "-app": (True, _record("app")),
    "-L": (True, _record("login_shell")), "-g": (True, _record("job_group")),
    "-u": (True, _record("mail_user")), "-B": (False, _flag("--record", "mail_begin=yes")),
    "-N": (False, _flag("--record", "mail_end=yes")), "-Ne": (False, _flag("--record", "mail_error=yes")),
}

#: sbatch's options: (takes a value: True, False, or "optional" (only as --opt=V), the xce words).
SBATCH = {
    "--job-name": (True, _same("-J")), "--output": (True, _same("-o")), "--error": (True, _same("-e")),
    "--partition": (True, lambda v: ["-q", slurm_partition(v)]), "--account": (True, _same("-P")),
    "--time": (True, _same("--time")), "--ntasks": (True, _same("-n")), "--nodes": (True, _same("--nodes")),
    "--ntasks-per-node": (True, _same("--ntasks-per-node")), "--cpus-per-task": (True, _same("-c")),
    "--cpus-per-gpu": (True, _same("--cpus-per-gpu")), "--mem": (True, _same("--mem")),
    "--mem-per-cpu": (True, _same("--mem-per-cpu")), "--mem-per-gpu": (True, _same("--mem-per-gpu")),
    "--gres": (True, _same("--gres")), "--gpus": (True, _same("--gpus")),
    "--gpus-per-node": (True, _same("--gpus-per-node")), "--gpus-per-task": (True, _same("--gpus-per-task")),
    "--ntasks-per-gpu": (True, _refuse("--ntasks-per-gpu", "GPUs are reserved per slot here; give "
                                       "--gpus-per-task instead")),
    "--array": (True, _same("--array")), "--dependency": (True, _same("--dependency")),
    "--hold": (False, _flag("-H")), "--begin": (True, lambda v: ["-b", slurm_begin(v)]),
    "--chdir": (True, _same("--cwd")), "--export": (True, lambda v: ["--env", _env_slurm(v)]),
    "--wrap": (True, _refuse("--wrap", "a job script cannot also give --wrap (sbatch refuses it too)")),
    "--parsable": (False, _flag()), "--quiet": (False, _flag()),
    "--comment": (True, _record("comment")), "--signal": (True, _same("--signal")),
    "--open-mode": (True, _same("--open-mode")), "--wckey": (True, _record("wckey")),
    "--qos": (True, _record("qos")), "--constraint": (True, _refuse("--constraint", _NO_FEATURES)),
    "--exclusive": ("optional", _exclusive), "--requeue": (False, _flag("--rerunnable")),
    "--no-requeue": (False, _flag("--no-rerunnable")), "--reservation": (True, _record("reservation")),
    "--clusters": (True, _record("clusters")), "--exclude": (True, _same("--exclude")),
    "--nodelist": (True, _same("--hosts")), "--nice": ("optional", lambda v: ["--priority", slurm_nice(v)]),
    "--mail-type": (True, _record("mail_type")), "--mail-user": (True, _record("mail_user")),
    "--time-min": (True, _record("time_min")), "--licenses": (True, _record("licenses")),
    "--core-spec": (True, _record("core_spec")), "--ntasks-per-core": (True, _record("ntasks_per_core")),
    "--gpu-bind": (True, _record("gpu_bind")),
}
#: sbatch's one-letter spellings.
SBATCH_SHORT = {"-J": "--job-name", "-o": "--output", "-e": "--error", "-p": "--partition", "-A": "--account",
                "-t": "--time", "-n": "--ntasks", "-N": "--nodes", "-c": "--cpus-per-task", "-G": "--gpus",
                "-a": "--array", "-d": "--dependency", "-H": "--hold", "-D": "--chdir", "-q": "--qos",
                "-C": "--constraint", "-M": "--clusters", "-x": "--exclude", "-w": "--nodelist",
                "-L": "--licenses", "-Q": "--quiet"}


def _env_lsf(value: str) -> str:
    from xce.cli.envcopy import from_lsf

    return from_lsf(value)


def _env_slurm(value: str) -> str:
    from xce.cli.envcopy import from_slurm

    return from_slurm(value)


def _long_option(name: str) -> str:
    """``--ntasks-per-n``: the one sbatch option it abbreviates (getopt's rule; exact names first)."""
    if name in SBATCH:
        return name
    matches = [full for full in SBATCH if full.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise Refused(f"SBATCH option {name} is ambiguous (could be {', '.join(sorted(matches))})")
    raise Refused(f"SBATCH option {name!r} is not an sbatch option this cluster knows")


def translate_bsub(words: list[str]) -> list[str]:
    """One ``#BSUB`` line (or bsub's arguments) as xce submit words."""
    out, i = [], 0
    while i < len(words):
        name = words[i]
        if name not in BSUB:
            raise Refused(f"BSUB option {name!r} is not a bsub option this cluster knows")
        takes, make = BSUB[name]
        if not takes:
            out += make("")
            i += 1
            continue
        if i + 1 >= len(words):
            raise Refused(f"BSUB option {name} needs a value")
        out += make(words[i + 1])
        i += 2
    return out


def translate_sbatch(words: list[str]) -> list[str]:
    """One ``#SBATCH`` line (or sbatch's options) as xce submit words."""
    out, i = [], 0
    while i < len(words):
        word = words[i]
        i += 1
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            name = _long_option(name)
            has_value = bool(eq)
        elif word.startswith("-") and word[:2] in SBATCH_SHORT:
            name, value = SBATCH_SHORT[word[:2]], word[2:]
            has_value = bool(value)
        else:
            raise Refused(f"SBATCH expected an option, found {word!r}")
        takes, make = SBATCH[name]
        if takes is False:
            if has_value:
                raise Refused(f"SBATCH option {name} takes no value")
            out += make("")
            continue
        if takes == "optional":
            out += make(value if has_value else "")
            continue
        if not has_value:
            if i >= len(words):
                raise Refused(f"SBATCH option {name} needs a value")
            value = words[i]
            i += 1
        out += make(value)
    return out


def directives(text: str) -> list[tuple[int, str, list[str]]]:
    """The leading block's directives as xce submit arguments: (line number, kind, words)."""
    import shlex

    found = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        for prefix, translate in (("#XCE", None), ("#BSUB", translate_bsub), ("#SBATCH", translate_sbatch)):
            if stripped.startswith(prefix) and (len(stripped) == len(prefix) or stripped[len(prefix)].isspace()):
                try:
                    words = shlex.split(stripped[len(prefix):], comments=translate is not None)
                    found.append((number, prefix[1:], words if translate is None else translate(words)))
                except ValueError as exc:
                    raise Refused(f"line {number}: {exc}") from None
                break
    return found


def merge(spec, given: dict, text: str) -> dict:
    """``given`` (the command line's values) completed with the script's directives: a value the
    command line left at its default is taken from the script; the lines of a repeatable option
    add up. A script with ``#SBATCH`` lines writes its output files as sbatch does (truncated)."""
    from xce.cli.spec import UsageError

    opts = {o.name: o for o in spec.params if getattr(o, "flags", None) is not None}
    from_script: dict = {}
    slurm = False
    for number, kind, words in directives(text):
        slurm = slurm or kind == "SBATCH"
        try:
            parsed = spec.parse([*words, "--", "x"])
        except UsageError as exc:
            raise Refused(f"line {number}: {exc}") from None
        for name, opt in opts.items():
            if parsed[name] == opt.default:
                continue
            if opt.multiple:
                from_script[name] = from_script.get(name, []) + parsed[name]
            else:
                from_script[name] = parsed[name]
    if slurm and "open_mode" in opts:
        from_script.setdefault("open_mode", "truncate")
    out = dict(given)
    for name, value in from_script.items():
        if given.get(name) == opts[name].default:
            out[name] = value
    return out
