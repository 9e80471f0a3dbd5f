"""The drift report: per job type and resource, declared against measured (job-resources.md,
"Checking a declaration against reality").

Two opposite defects are worth acting on: measured far below declared (the job reserves what
it never uses, so every host it lands on has less to give than it thinks) and measured far above
declared (the host is oversubscribed without the scheduler knowing). Measured but never declared
is reported with a declaration of zero and ranked worse: the scheduler cannot see the consumer.
Nothing is corrected automatically; the report exists so a person edits the number. Nothing is
reported below ``min_samples`` runs: drift from two runs is not drift. Runs killed at their
memory limit are counted apart: their measured peak is the limit, not what they needed, so such a
type's memory is reported as hitting its limit whatever its ratio says, however few its runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import median
from typing import Iterable

FAR_BELOW = "far-below"
FAR_ABOVE = "far-above"
UNDECLARED = "never-declared"
HIT_LIMIT = "hit-limit"
OK = "ok"

VERDICT_TEXT = {
    FAR_BELOW: "measured far below declared: reserves what it never uses",
    FAR_ABOVE: "measured far above declared: oversubscribes hosts without the scheduler knowing",
    UNDECLARED: "measured but never declared: the scheduler cannot see this consumer (worst)",
    HIT_LIMIT: "killed at its memory limit (MEMLIMIT): it needs more than it declared",
    OK: "declaration matches measurement",
}
#: Worst first when rows are sorted for people.
SEVERITY = {UNDECLARED: 0, HIT_LIMIT: 1, FAR_ABOVE: 2, FAR_BELOW: 3, OK: 4}


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """One finished job's figures for one resource (declared for the whole job, measured peak)."""

    job_type: str
    resource: str
    declared: int
    measured: int
    #: The run was killed at its memory limit (end code MEMLIMIT): its peak is the limit, not its need.
    hit_limit: bool = False


@dataclass(frozen=True, slots=True)
class Thresholds:
    #: ratio = measured median / declared; below ``low`` is "far below", above ``high`` "far above".
    low: float = 0.5
    high: float = 1.5


@dataclass(frozen=True, slots=True)
class DriftRow:
    job_type: str
    resource: str
    runs: int
    declared: int
    measured_median: int
    measured_p95: int
    measured_max: int
    ratio: float | None
    verdict: str
    text: str
    wasted_per_placement: int = 0
    limit_hits: int = 0  # runs killed at their memory limit

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Insufficient:
    job_type: str
    resource: str
    runs: int
    needed: int

    @property
    def text(self) -> str:
        return f"{self.job_type} {self.resource}: {self.runs} run(s), {self.needed} needed before drift is reported"


#: Why a resource that workers can measure was not, where the general reason would be wrong.
WHY_UNMEASURED = {
    "xce.io/gpu": ("no worker it ran on could read its GPUs' utilisation through NVML: no NVIDIA driver or "
                   "nvidia-ml-py there, devices that report none (MIG instances), or GPUs declared in -R "
                   "only, which the worker does not hand out"),
}


@dataclass(frozen=True, slots=True)
class Unmeasured:
    """A resource jobs of a type declare that no run was ever measured on."""

    job_type: str
    resource: str
    runs: int

    @property
    def text(self) -> str:
        why = WHY_UNMEASURED.get(self.resource, "nothing on the workers measures it per job")
        return (f"{self.job_type or '-'} {self.resource}: declared by {self.runs} run(s), never measured "
                f"({why}), so drift cannot be checked")


@dataclass(slots=True)
class DriftReport:
    rows: list[DriftRow] = field(default_factory=list)
    insufficient: list[Insufficient] = field(default_factory=list)
    #: Declared but not measurable: listed so that a declaration nobody checks is not passed over.
    unmeasured: list[Unmeasured] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"rows": [r.to_json() for r in self.rows],
                "insufficient": [asdict(i) | {"text": i.text} for i in self.insufficient],
                "unmeasured": [asdict(u) | {"text": u.text} for u in self.unmeasured]}


def _p95(sorted_values: list[int]) -> int:
    """Nearest-rank 95th percentile: a value that was really measured."""
    k = max(0, -(-95 * len(sorted_values) // 100) - 1)
    return sorted_values[k]


def drift_report(records: Iterable[UsageRecord], *, job_type: str | None = None, min_samples: int = 20,
                 thresholds: Thresholds = Thresholds()) -> DriftReport:
    groups: dict[tuple[str, str], list[UsageRecord]] = {}
    for rec in records:
        if job_type is not None and rec.job_type != job_type:
            continue
        groups.setdefault((rec.job_type, rec.resource), []).append(rec)
    report = DriftReport()
    for (jtype, res), recs in sorted(groups.items()):
        hits = sum(r.hit_limit for r in recs)
        if len(recs) < min_samples and not hits:
            report.insufficient.append(Insufficient(jtype, res, len(recs), min_samples))
            continue
        measured = sorted(r.measured for r in recs)
        declared = int(median(r.declared for r in recs))
        if declared == 0 and measured[-1] == 0:
            continue  # nothing declared and nothing used: no finding, only a line to read past
        m50 = int(median(measured))
        ratio = None if declared == 0 else m50 / declared
        wasted = 0
        if hits:
            verdict = HIT_LIMIT
        elif declared == 0:
            verdict = UNDECLARED if m50 > 0 else OK
        elif ratio < thresholds.low:
            verdict, wasted = FAR_BELOW, declared - m50
        elif ratio > thresholds.high:
            verdict = FAR_ABOVE
        else:
            verdict = OK
        text = VERDICT_TEXT[verdict]
        if verdict == FAR_BELOW:
            text += f"; {wasted} of {declared} ({wasted * 100 // declared}%) wasted per placement"
        if verdict == HIT_LIMIT:
            text = f"{hits} of {len(recs)} run(s) {text}"
        report.rows.append(DriftRow(jtype, res, len(recs), declared, m50, _p95(measured), measured[-1],
                                    None if ratio is None else round(ratio, 3), verdict, text, wasted, hits))
    report.rows.sort(key=lambda r: (SEVERITY[r.verdict], r.job_type, r.resource))
    return report
