"""``sstat``: what running jobs use now, in sstat's fields and layout (``-o``, ``-p``/``-P``, ``-n``).

XCE has no numbered steps: a job is one ``batch`` step (and its ``extern`` allocation, which runs
nothing), so ``-j N`` shows ``N.batch`` where Slurm would pick the lowest numbered step, and
``-a`` adds nothing more. The figures are the workers' measurements of the whole job
(:mod:`xce.compat.slurm._usage`); what XCE does not measure (virtual memory, pages, disk I/O,
energy, CPU frequency) is left empty, never invented.
"""

from __future__ import annotations

import sys

from xce.compat.slurm import _format as fmt, _ids as ids, _usage as usage, tables
from xce.compat.slurm._getopt import UsageError, parse, refuse

PROG = "sstat"
#: getopt reads the options the help and the man page list (:mod:`xce.compat.slurm.tables`).
LONGS, SHORTS = tables.SSTAT.getopt()
#: The steps a job has here: what ``N.STEP`` may name.
STEPS = ("batch",)


def kilo(n: int | None, exact: bool = True) -> str:
    """A memory figure as Slurm's ``convert_num_unit`` writes it from kibibytes: ``53984K``, ``2G``
    (exact units, sstat's default), or ``--noconvert``'s plain kibibytes."""
    if n is None:
        return ""
    value = n // 1024
    if value == 0:
        return "0"
    units = "KMGTP"
    i = 0
    while exact and value % 1024 == 0 and i < len(units) - 1:
        value //= 1024
        i += 1
    return f"{value}{units[i]}"


def _host(j: dict) -> str:
    hosts = fmt.nodes(j)
    return hosts[0] if hosts else ""


def _cpu_per_task(j: dict) -> str:
    cpu = usage.cpu_seconds(j)
    return "" if cpu is None else fmt.elapsed(cpu / max(1, int(j.get("tasks") or 1)))


#: Field -> (width: negative left-justifies, value of (job, step, convert)); Slurm 23.11's sstat names.
FIELDS = {
    "AveCPU": (10, lambda j, s, c: _cpu_per_task(j)),
    "AveCPUFreq": (10, lambda j, s, c: ""),
    "AveDiskRead": (12, lambda j, s, c: ""),
    "AveDiskWrite": (12, lambda j, s, c: ""),
    "AvePages": (10, lambda j, s, c: ""),
    "AveRSS": (10, lambda j, s, c: kilo(usage.ave_rss(j), c)),
    "AveVMSize": (10, lambda j, s, c: ""),
    "ConsumedEnergy": (14, lambda j, s, c: ""),
    "JobID": (-12, lambda j, s, c: f"{ids.shown(j)}.{s}"),
    "MaxDiskRead": (12, lambda j, s, c: ""),
    "MaxDiskWrite": (12, lambda j, s, c: ""),
    "MaxPages": (10, lambda j, s, c: ""),
    "MaxRSS": (10, lambda j, s, c: kilo(usage.max_rss(j), c)),
    "MaxRSSNode": (10, lambda j, s, c: _host(j)),
    "MaxRSSTask": (10, lambda j, s, c: "0"),
    "MaxVMSize": (10, lambda j, s, c: ""),
    "MaxVMSizeNode": (14, lambda j, s, c: ""),
    "MaxVMSizeTask": (14, lambda j, s, c: ""),
    "MinCPU": (10, lambda j, s, c: _cpu_per_task(j)),
    "MinCPUNode": (10, lambda j, s, c: _host(j)),
    "MinCPUTask": (10, lambda j, s, c: "0"),
    "Nodelist": (20, lambda j, s, c: ",".join(fmt.nodes(j))),
    "NTasks": (8, lambda j, s, c: str(j.get("tasks") or 1)),
    "Pids": (20, lambda j, s, c: ""),
    "TotalCPU": (10, lambda j, s, c: "" if usage.cpu_seconds(j) is None else usage.cpu_clock(usage.cpu_seconds(j))),
}
#: sstat's default fields (its STAT_FIELDS), those this program has.
DEFAULT = ("JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,"
           "AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AveCPUFreq,ConsumedEnergy,MaxDiskRead,AveDiskRead,"
           "MaxDiskWrite,AveDiskWrite")


def _row(values: list[tuple[int, str]], parsable: str | None) -> str:
    if parsable is None:
        return "".join(fmt.sacct_cell(v, w) + " " for w, v in values)
    text = "|".join(v for _, v in values)
    return text + "|" if parsable == "last" else text


def _targets(refs: list[str]) -> list[tuple[str, str | None]]:
    """``N``, ``A_i``, ``N.batch`` -> (job, step or None); ValueError names a bad one."""
    out = []
    for ref in refs:
        job, dot, step = ref.partition(".")
        if ids.check(PROG, [job]) is not None or (dot and not step):
            raise ValueError(ref)
        out.append((job, step if dot else None))
    return out


def main(argv: list[str]) -> int:
    from xce.compat.slurm import _api

    try:
        opts, operands = parse(argv, LONGS, SHORTS)
    except UsageError as exc:
        return refuse(PROG, str(exc))
    text, header, parsable, convert, refs = DEFAULT, True, None, True, []
    try:
        for name, value in opts:
            if name in ("format", "fields"):
                text = value or ""
                fmt.field_list(text, FIELDS)
            elif name == "jobs":
                refs += ids.split_list([value or ""])
            elif name == "noheader":
                header = False
            elif name == "parsable":
                parsable = "last"
            elif name == "parsable2":
                parsable = "nolast"
            elif name == "noconvert":
                convert = False
            elif name == "helpformat":
                names = sorted(FIELDS, key=str.lower)
                sys.stdout.write("".join("".join(f"{n:<20}" for n in names[i:i + 4]).rstrip() + "\n"
                                         for i in range(0, len(names), 4)))
                return 0
            elif name in ("help", "usage"):
                tables.show_help(PROG, {name})
                return 0
            elif name == "version":
                sys.stdout.write("slurm 23.11.0\n")
                return 0
        columns = fmt.field_list(text, FIELDS)
        refs += ids.split_list(operands)
        targets = _targets(refs)
    except UsageError as exc:
        return _api.fail(PROG, exc)
    except ValueError as exc:
        return _api.fail(PROG, f"Invalid job id: {exc}")
    if not targets:
        return _api.fail(PROG, "You didn't give me any jobs to stat.")
    out = []
    if header:
        if parsable is None:
            out.append("".join(fmt.cell(f, abs(w), w > 0) + " " for f, w in columns))
            out.append(" ".join("-" * abs(w) for _, w in columns) + " ")
        else:
            out.append(_row([(w, f) for f, w in columns], parsable))
    failed = False
    try:
        c = _api.client()
        for ref, step in targets:
            try:
                found = usage.details(c, ref)
            except (usage.NotFound, _api.Failed) as exc:
                failed = True
                sys.stderr.write(f"{PROG}: error: {exc}\n")
                continue
            running = [j for j in found if j["state"] in ("RUN", "USUSP", "SSUSP")]
            if not running:
                failed = True
                sys.stderr.write(f"{PROG}: error: couldn't get steps for job {ref}\n")
                continue
            if step is not None and step not in STEPS:
                failed = True
                sys.stderr.write(f"{PROG}: error: StepId={ref}.{step} not found running.\n")
                continue
            out += [_row([(w, FIELDS[f][1](job, "batch", convert)) for f, w in columns], parsable) for job in running]
    except _api.Failed as exc:
        return _api.fail(PROG, exc)
    sys.stdout.write("\n".join(out) + "\n" if out else "")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
