"""How sizes, durations and times of day are written for people: every spelling XCE prints, here.

Why one module: the few lines that turn a byte count, a number of seconds or a timestamp into text
had been written again wherever such a number reached a person (three byte, five duration and five
clock formatters), and copies drift apart. A format is now chosen by name, and a new output picks
one of these instead of writing a sixth. Where two spellings really differ they are two functions:
the LSF and Slurm front-ends print what the real programs print (clients parse it), so their
formats are named for the program and never changed to match XCE's own.

Timestamps are nanoseconds since the epoch (the API's unit) unless a parameter says seconds, and
are written in local time unless the name says UTC. A missing value is ``-`` (the dashboard's
``–``), except where a front-end's program prints something else.
"""

from __future__ import annotations

import time

# -- other people's text ------------------------------------------------------------------------


def printable(text: str, keep: str = "") -> str:
    """``text`` with every control or format character (ESC, CR, BEL, DEL, C1 controls, bidi
    overrides...) shown as its escape (``\\x1b``): job names, commands, paths and reasons are other
    users' text, and on a terminal raw escapes would be obeyed (clear it, retitle it, hide lines,
    fake output). ``keep`` lists the ones left as they are (the newlines of a multi-line form).
    The one rule for all of XCE's output: ``xce``'s tables and the LSF and Slurm front-ends."""
    if text.isprintable() or (keep and text.translate(_dropping(keep)).isprintable()):
        return text
    return "".join(c if c.isprintable() or c in keep else c.encode("unicode_escape").decode("ascii") for c in text)


_DROP: dict[str, dict[int, None]] = {}


def _dropping(keep: str) -> dict[int, None]:
    table = _DROP.get(keep)
    if table is None:
        table = _DROP[keep] = dict.fromkeys(map(ord, keep))
    return table


# -- sizes --------------------------------------------------------------------------------------


def size(n: int | float | None) -> str:
    """Bytes in the largest unit they reach, one decimal when not whole: ``4G``, ``1.5G``, ``512B``.

    The quantity grammar's own reading (``xce.core.quantity``, where the core's pending reasons
    use it), so what a person reads can be pasted back into ``-R "rusage[mem=...]"``."""
    if n is None:
        return "-"
    from xce.core.quantity import human_quantity

    return human_quantity("", n, memory=True)


# -- durations (seconds) ------------------------------------------------------------------------


def hms(seconds: int) -> str:
    """``H:MM:SS``, hours unbounded: run limits (``1:30:00``, ``0:05:00``, ``36:00:00``)."""
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def seconds_or_hms(seconds: float) -> str:
    """Tenths of a second under a minute (``12.5s``), :func:`hms` from there: time spent in a state."""
    return f"{seconds:.1f}s" if seconds < 60 else hms(int(seconds))


def compact(seconds: float | None) -> str:
    """Whole seconds, shortest first: ``42s``, ``3:07`` (min:s), ``2:03:07``, ``3d 2:03:07``."""
    if seconds is None:
        return "-"
    s = int(round(seconds))
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    if d:
        return f"{d}d {h}:{m:02d}:{s:02d}"
    if h:
        return f"{h}:{m:02d}:{s:02d}"
    return f"{m}:{s:02d}" if m else f"{s}s"


def in_words(seconds: float | None) -> str:
    """Two units in words, the larger first: ``4.2 s``, ``95 s``, ``12 min 5 s``, ``3 h 20 min``, ``2 d 4 h``."""
    if seconds is None:
        return "–"
    s = max(0.0, float(seconds))
    if s < 10:
        return f"{s:.1f} s"
    s = int(round(s))
    if s < 120:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 120:
        return f"{m} min {s} s"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h} h {m} min"
    d, h = divmod(h, 24)
    return f"{d} d {h} h"


def _dhms(seconds: float | None) -> tuple[int, int, int, int]:
    s = max(0, int(seconds or 0))
    days, s = divmod(s, 86400)
    hours, s = divmod(s, 3600)
    minutes, s = divmod(s, 60)
    return days, hours, minutes, s


def slurm_duration(seconds: float | None) -> str:
    """squeue's ``%M``/``%l``: ``M:SS``, ``H:MM:SS`` or ``D-HH:MM:SS``."""
    days, hours, minutes, s = _dhms(seconds)
    if days:
        return f"{days}-{hours:02d}:{minutes:02d}:{s:02d}"
    if hours:
        return f"{hours}:{minutes:02d}:{s:02d}"
    return f"{minutes}:{s:02d}"


def slurm_elapsed(seconds: float | None) -> str:
    """sacct's ``Elapsed``: ``HH:MM:SS`` or ``D-HH:MM:SS``."""
    days, hours, minutes, s = _dhms(seconds)
    return (f"{days}-" if days else "") + f"{hours:02d}:{minutes:02d}:{s:02d}"


# -- times of day -------------------------------------------------------------------------------


def _local(pattern: str, ns: int) -> str:
    return time.strftime(pattern, time.localtime(ns / 1e9))


def recent(ns: int | None) -> str:
    """``14:03:27`` within the last day, ``Dec 02 09:10`` before: a column of a table."""
    if not ns:
        return "-"
    return _local("%H:%M:%S" if time.time() - ns / 1e9 < 86400 else "%b %d %H:%M", ns)


def minute(ns: int | None) -> str:
    """``2026-12-03 14:03``."""
    return _local("%Y-%m-%d %H:%M", ns) if ns else "-"


def second(ns: int | None) -> str:
    """``2026-12-03 14:03:27``."""
    return _local("%Y-%m-%d %H:%M:%S", ns) if ns else "-"


def millisecond(ns: int | None) -> str:
    """``2026-12-03 14:03:27.512``: the moves of one job, which may be milliseconds apart."""
    return f"{second(ns)}.{(ns // 1_000_000) % 1000:03d}" if ns else "-"


def zoned(ns: int | None) -> str:
    """``2026-12-03 14:03:27 CET``: for a reader who may be elsewhere than the cluster."""
    return _local("%Y-%m-%d %H:%M:%S %Z", ns) if ns else "–"


def utc_minute(seconds: float) -> str:
    """``2026-12-03 13:03 UTC``: a simulated trace's time (seconds), the same wherever it is read."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(seconds))


def utc_millisecond(seconds: float) -> str:
    """``2026-12-03T13:03:27.512Z`` (seconds): log lines, which processes on several hosts write."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds % 1 * 1000):03d}Z"


def slurm_clock(ns: int | None, missing: str = "N/A") -> str:
    """``2026-12-03T14:03:27``, Slurm's time; ``missing`` as the program prints none (``N/A``, ``Unknown``)."""
    return missing if ns is None else _local("%Y-%m-%dT%H:%M:%S", ns)


def slurm_banner(seconds: float) -> str:
    """``Thu Dec 03 14:03:27 2026``: the line ``squeue -l`` starts with."""
    return time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(seconds))


def lsf_short(ns: int | None) -> str:
    """``Dec  3 09:10``, LSF's time in tables (empty when none)."""
    return _local("%b %e %H:%M", ns) if ns else ""


def lsf_long(ns: int | None) -> str:
    """``Thu Dec  3 09:10:22``, LSF's time at the start of a line of the long forms (empty when none)."""
    return _local("%a %b %e %H:%M:%S", ns) if ns else ""


def lsf_banner(seconds: float) -> str:
    """``Thu Dec  3 09:10:22 2026``: the heading of ``badmin showconf`` and ``bparams -a``."""
    return time.strftime("%a %b %e %H:%M:%S %Y", time.localtime(seconds))
