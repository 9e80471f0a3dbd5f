"""Columns and times as Slurm prints them.

squeue's ``-o`` codes are ``%[.][WIDTH]X`` (``.``: right-justified; a width also cuts the value to
it), sacct's fields ``NAME[%WIDTH]`` (a value too long ends in ``+``); times are local
``YYYY-MM-DDTHH:MM:SS`` and durations ``[D-]H:MM:SS`` or ``M:SS`` (squeue), ``[D-]HH:MM:SS``
(sacct), written by :mod:`xce.formats`."""

from __future__ import annotations

import time

# Slurm's spellings of times live with every other format (xce.formats); the column tables call
# them by these names, which is why they are listed in __all__.
from xce.formats import slurm_clock as clock, slurm_duration as duration, slurm_elapsed as elapsed

__all__ = ["Part", "cell", "clock", "cpu_time", "duration", "elapsed", "limit", "mem_per_slot", "memory",
           "fields_format", "job_name", "nodes", "ns", "parse_date", "percent_codes", "rss", "sacct_cell", "tres", "uid", "unquote", "used"]

#: One piece of a ``%`` format: (literal text, code, width, right-justified); a literal has no code.
Part = tuple[str, str | None, int | None, bool]


def percent_codes(text: str, codes: dict[str, object], what: str, sized: bool = False) -> list[Part]:
    """squeue's and sinfo's ``-o`` text ``%[.][WIDTH]X`` (``%%`` is a ``%``) as parts; sinfo's
    ``%#X`` (``sized``) asks for the widest value's width, given here as -1. ValueError names an
    unknown code as the program does (``Invalid job format specification: z``)."""
    parts: list[Part] = []
    i, lit = 0, ""
    while i < len(text):
        if text[i] != "%":
            lit += text[i]
            i += 1
            continue
        i += 1
        if i < len(text) and text[i] == "%":
            lit += "%"
            i += 1
            continue
        right = i < len(text) and text[i] == "."
        i += right
        widest = sized and i < len(text) and text[i] == "#"
        i += widest
        start = i
        while i < len(text) and text[i].isdigit():
            i += 1
        width = int(text[start:i]) if i > start else (-1 if widest else None)
        if i >= len(text) or text[i] not in codes:
            raise ValueError(f"Invalid {what} format specification: {text[i] if i < len(text) else ''}")
        if lit:
            parts.append((lit, None, None, False))
            lit = ""
        parts.append(("", text[i], width, right))
        i += 1
    if lit:
        parts.append((lit, None, None, False))
    return parts


def fields_format(text: str, fields: dict[str, str], titles: dict[str, str], what: str) -> list[Part]:
    """squeue's and sinfo's ``-O name[:[.]width][suffix],...`` (``_parse_long_token``) as the parts of the
    ``-o`` codes printing the same: names in any case, 20 characters a field unless a width is given,
    left-justified unless ``.``, the text after the width printed after the field (Slurm's own default
    formats are written so: ``partition:9 ,available:.5 ``). A part's literal is its title where it is
    not the code's (``titles``). ValueError names an unknown field as the program does."""
    parts: list[Part] = []
    for item in text.split(","):
        if not item.strip():
            continue
        name, colon, spec = item.strip().partition(":")
        key = name.lower()
        if key not in fields:
            raise ValueError(f"Invalid {what} format specification: {name}")
        right = spec.startswith(".")
        spec = spec[right:]
        digits = ""
        while spec and spec[0].isdigit():
            digits, spec = digits + spec[0], spec[1:]
        parts.append((titles.get(key, ""), fields[key], int(digits) if digits else (0 if colon else 20), right))
        if spec:
            parts.append((spec, None, None, False))
    return parts


def cell(value: str, width: int | None, right: bool) -> str:
    """squeue's ``_print_str``: padded to ``width`` and cut to it; as is without a width."""
    if not width:
        return value
    value = value[:width]
    return value.rjust(width) if right else value.ljust(width)


def sacct_cell(value: str, width: int) -> str:
    """sacct's ``print_fields_str``: negative width left-justifies; a longer value ends in ``+``."""
    n = abs(width)
    if len(value) > n:
        value = value[:n - 1] + "+"
    return value.ljust(n) if width < 0 else value.rjust(n)


def ns(t: int | None) -> float | None:
    return None if t is None else t / 1e9


def limit(seconds: int | None) -> str:
    """A time limit: ``UNLIMITED`` when there is none."""
    return "UNLIMITED" if not seconds else duration(seconds)


def used(job: dict, now: float) -> float:
    """Seconds the job has run (0 while it waits)."""
    start, end = job.get("start_time"), job.get("end_time")
    if start is None:
        return 0.0
    return ((end / 1e9) if end is not None else now) - start / 1e9


def nodes(job: dict) -> list[str]:
    return [p["host"] for p in job.get("placement") or []]


def job_name(job: dict) -> str:
    """squeue's ``%j``, the JSON ``name``: the job's name, else its command's file name."""
    return job.get("name") or (job.get("command") or [""])[0].rpartition("/")[2]


def uid(user: str) -> int:
    """The user's id on this host (0 for a name it does not know)."""
    import pwd

    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        return 0


def unquote(text: str) -> str:
    """A format written with its quotes inside one word (``-o '"%u"'``, as one client does)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


def parse_date(text: str, now: float) -> float | None:
    """sacct's ``-S``/``-E``: ``now``, ``now-Nunit``, ``today``, ``midnight``, ``YYYY-MM-DD[THH:MM[:SS]]``,
    ``MM/DD[/YY]``, ``HH:MM[:SS]`` (today); seconds since the epoch, or None if unreadable."""
    from datetime import datetime

    t = text.strip().lower()
    if t in ("now", ""):
        return now
    if t in ("today", "midnight"):
        lt = time.localtime(now)
        return time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, 0, 0, 0, 0, 0, -1))
    if t.startswith("now-") or t.startswith("now+"):
        sign = -1 if t[3] == "-" else 1
        amount = t[4:]
        number = amount.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = amount[len(number):] or "seconds"
        scales = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "m": 60, "min": 60, "mins": 60,
                  "minute": 60, "minutes": 60, "h": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400,
                  "days": 86400, "week": 604800, "weeks": 604800}
        if not number.isdigit() or unit not in scales:
            return None
        return now + sign * int(number) * scales[unit]
    try:
        if "/" in t:
            parts = [int(p) for p in t.split("/")]
            lt = time.localtime(now)
            year = lt.tm_year if len(parts) == 2 else (parts[2] + 2000 if parts[2] < 100 else parts[2])
            return time.mktime((year, parts[0], parts[1], 0, 0, 0, 0, 0, -1))
        if "-" not in t and ":" in t:
            parts = [int(p) for p in t.split(":")] + [0]
            lt = time.localtime(now)
            return time.mktime((lt.tm_year, lt.tm_mon, lt.tm_mday, parts[0], parts[1], parts[2], 0, 0, -1))
        return datetime.fromisoformat(text.strip().upper().replace("T", "T") if "t" in t else text.strip()).timestamp()
    except (ValueError, IndexError, OverflowError):
        return None


# -- what a job asked for and used, in Slurm's units --------------------------------------------

MiB = 1 << 20


def cpu_time(ms: int | None) -> str:
    """sacct's ``TotalCPU``/``UserCPU``/``SystemCPU``: ``MM:SS.mmm`` below an hour (the milliseconds
    are what a short job's figure is made of), ``HH:MM:SS`` then, ``D-HH:MM:SS`` from a day; empty
    when never measured."""
    if ms is None:
        return ""
    seconds, millis = divmod(int(ms), 1000)
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{secs:02d}"
    if hours:
        return f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{minutes:02d}:{secs:02d}.{millis:03d}"


def memory(n_bytes: int | None, exact: bool = False) -> str:
    """A memory request as Slurm prints one (``ReqMem``, ``squeue %m``, ``MinMemoryNode``): megabytes,
    in gigabytes (or more) when whole (``4G``, ``500M``, ``1536M``); ``exact``: megabytes always
    (``sacct --noconvert``). ``0`` for none."""
    if not n_bytes:
        return "0"
    mb = -(-int(n_bytes) // MiB)
    if exact:
        return f"{mb}M"
    for unit in ("T", "G"):
        scale = 1024 if unit == "G" else 1024 * 1024
        if mb % scale == 0:
            return f"{mb // scale}{unit}"
    return f"{mb}M"


def rss(n_bytes: int | None, unit: str | None = None) -> str:
    """sacct's ``MaxRSS``/``AveRSS``: kilobytes (``10452K``), or in ``--units`` with two decimals
    (``10.21M``); empty when never measured."""
    if n_bytes is None:
        return ""
    if unit is None or unit == "K":
        return f"{int(n_bytes) // 1024}K"
    scale = 1024 ** "KMGTP".index(unit) * 1024
    return f"{n_bytes / scale:.2f}{unit}"


def mem_per_slot(job: dict) -> int:
    """Bytes the job reserves per slot (``--mem-per-cpu``, or ``--mem`` over the slots of a host); 0
    for none."""
    return int((job.get("requests") or {}).get("mem") or 0)


def tres(job: dict, allocated: bool, sorted_names: bool = True) -> str:
    """``ReqTRES``/``AllocTRES`` of the whole job: ``billing=N,cpu=N,gres/gpu=N,mem=SIZE,node=N`` as
    sacct sorts them, or in Slurm's own order (``cpu,mem,node,billing,gres/gpu``: ``scontrol show
    job``'s ``TRES=``); empty for an allocation not made yet."""
    placed = nodes(job)
    if allocated and not placed:
        return ""
    cpus = int(job["tasks"])
    pairs = [("cpu", str(cpus))]
    mem = mem_per_slot(job) * cpus
    if mem:
        pairs.append(("mem", memory(mem)))
    pairs += [("node", str(len(placed) or 1)), ("billing", str(cpus))]
    gpus = int((job.get("requests") or {}).get("xce.io/gpu") or 0) * cpus
    if gpus:
        pairs.append(("gres/gpu", str(gpus)))
    if sorted_names:
        pairs.sort()
    return ",".join(f"{k}={v}" for k, v in pairs)


def field_list(text: str, table: dict[str, tuple]) -> list[tuple[str, int]]:
    """``-o NAME[%WIDTH],...`` as sacct and sstat read it: a name in any case, or the first field of
    ``table`` (name -> (default width, ...)) it begins; UsageError in Slurm's words otherwise."""
    from xce.compat.slurm._getopt import UsageError

    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, pct, width = item.partition("%")
        match = next((f for f in table if f.lower() == name.lower()), None) or \
            next((f for f in table if f.lower().startswith(name.lower())), None)
        if match is None or not name:
            raise UsageError(f'Invalid field requested: "{name}"')
        w = table[match][0]
        if pct:
            try:
                w = int(width) or w
            except ValueError:
                raise UsageError(f'Invalid field width: "{item}"') from None
        out.append((match, w))
    return out
