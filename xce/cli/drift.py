"""``xce drift``: per job type and resource, what jobs declare against what they use.

It only reports; nothing is corrected automatically (job-resources.md): the number a person would
fix must stay the one the scheduler uses, so the report exists to get that number edited.
"""

from __future__ import annotations

from typing import Any

from xce.cli.client import call, connect, print_json
from xce.cli.output import printable, table
from xce.cli.spec import JSON, Command, Opt, common_options
from xce.formats import size

MEMORY = frozenset({"mem", "maxmem", "swp"})


def _amount(resource: str, value: int) -> str:
    return size(value) if resource in MEMORY else str(value)


def _verdict_text(row: dict[str, Any]) -> str:
    """The shared text, with a memory figure people can read instead of a byte count."""
    text = row["text"]
    if row["resource"] in MEMORY and row.get("wasted_per_placement"):
        w, d = row["wasted_per_placement"], row["declared"]
        text = text.replace(f"{w} of {d}", f"{size(w)} of {size(d)}")
    return text


def drift(job_type: str | None, min_samples: int, low: float, high: float, as_json: bool, url: str | None,
          token: str | None, state_dir: str | None) -> None:
    res = call(connect(url, token, state_dir).get, "/v1/drift", jobType=job_type, minSamples=min_samples,
               low=low, high=high)
    if as_json:
        print_json(res)
        return
    rows, short, blind = res["rows"], res["insufficient"], res.get("unmeasured", [])
    if not rows and not short and not blind:
        print(printable("No finished, measured job" + (f" of type {job_type!r}" if job_type else "") + " yet."))
        return
    if rows:
        table(["TYPE", "RESOURCE", "RUNS", "DECLARED", "MEDIAN", "P95", "MAX", "RATIO", "VERDICT"],
              [[r["job_type"] or "-", r["resource"], r["runs"], _amount(r["resource"], r["declared"]),
                _amount(r["resource"], r["measured_median"]), _amount(r["resource"], r["measured_p95"]),
                _amount(r["resource"], r["measured_max"]), "-" if r["ratio"] is None else f"{r['ratio']:.2f}",
                _verdict_text(r)] for r in rows])
    for i in short:
        print(printable(f"{i['job_type'] or '-'} {i['resource']}: {i['runs']} run(s), {i['needed']} needed before "
                        f"drift is reported"))
    for u in blind:
        print(printable(u["text"]))


DRIFT = Command(
    "drift", "Declared against measured, per job type and resource (worst first). Nothing is changed.",
    [
        Opt("job_type", ("--type",), help="Only this job type."),
        Opt("min_samples", ("--min-samples",), int, 20, min=1, help="Fewest runs of a type before a verdict."),
        Opt("low", ("--low",), float, 0.5, help="measured/declared below this is 'far below'."),
        Opt("high", ("--high",), float, 1.5, help="measured/declared above this is 'far above'."),
        JSON,
        *common_options(),
    ],
    drift,
    quick_exit=True,
    examples=("xce drift", "xce drift --type etl --min-samples 50", "xce drift --low 0.25 --high 2 --json"),
)

COMMAND_SPECS = [DRIFT]
