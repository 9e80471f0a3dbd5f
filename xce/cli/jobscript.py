"""The values LSF's and Slurm's options take, read as each system reads them, and :class:`Refused`.

A bsub or sbatch option's value (a memory limit in LSF_UNIT_FOR_LIMITS, ``-gpu``'s keywords, a
begin time, a partition list ...) becomes its ``xce submit`` spelling here; the option tables
(:mod:`xce.compat.lsf.options`, :mod:`xce.compat.slurm.options`) say which option uses which, and
:mod:`xce.cli.directives` reads a job script's lines with them. Only ``os`` is imported at start.
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


#: ``-gpu`` keywords other than num= and gmodel=: how GPUs are shared, bound and packed; each job's
#: GPUs are already its own here, so they are kept with the job.
_GPU_KEPT = ("mode", "j_exclusive", "mps", "aff", "block", "gpack", "gvendor", "gtile", "gmem", "glink", "nvlink",
             "mig")


def lsf_gpu(text: str) -> list[str]:
    """bsub's ``-gpu "num=N[/host][:gmodel=NAME][:mode=...:j_exclusive=...]"``: N GPUs on each host
    (LSF's default per-host count, 1 when not given); ``gmodel`` picks the GPU model; the other
    keywords are kept as given."""
    if text.strip() == "-":
        return ["--gpus-per-node", "1"]
    count = "1"
    out: list[str] = []
    kept = []
    for item in text.split(":"):
        key, _, value = item.strip().partition("=")
        if not key:
            continue
        if key == "num":
            count = value.strip().partition("/")[0]
            if not count.isdigit():
                raise Refused(f"-gpu num={value}: Bad GPU requirement syntax (num= takes a whole number of GPUs)")
        elif key == "gmodel":
            out += ["--gpu-model", value.strip()]
        elif key in _GPU_KEPT:
            kept.append(item.strip())
        else:
            raise Refused(f"-gpu {key}=: Bad GPU requirement syntax (the keywords are num, gmodel, "
                          f"{', '.join(_GPU_KEPT)})")
    if kept:
        out += ["--record", "gpu=" + ":".join(kept)]
    return ["--gpus-per-node", count, *out]


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


def slurm_exclusive(value: str) -> list[str]:
    """``--exclusive[=user|mcs|topo]``: only whole hosts to the job itself is offered here."""
    if value:
        raise Refused(f"--exclusive={value}: this cluster shares hosts only between jobs of any user or none "
                      "(plain --exclusive)")
    return ["-x"]


def lsf_clock_fields(text: str) -> list[int] | None:
    """``[[[YYYY:]MM:]DD:]hh:mm`` as its numbers, when each is in range as LSF checks it (minute
    0-59, hour 0-23, day 1-31, month 1-12, a year of four digits); None otherwise."""
    parts = text.strip().split(":")
    if not 2 <= len(parts) <= 5 or not all(p.isdigit() and p.isascii() for p in parts):
        return None
    numbers = [int(p) for p in parts]
    bounds = [(1970, 9999), (1, 12), (1, 31), (0, 23), (0, 59)][5 - len(numbers):]
    if any(not low <= n <= high for n, (low, high) in zip(numbers, bounds, strict=True)):
        return None
    return numbers


def lsf_time(text: str) -> str:
    """bsub's ``-b`` time ``[[year:][month:]day:]hour:minute``, checked as LSF checks it (a
    minute 0-59, an hour 0-23, a day 1-31, a month 1-12); refused in bsub's words otherwise."""
    if lsf_clock_fields(text) is None:
        raise Refused(f"{text}: Bad time specification")
    return text.strip()
