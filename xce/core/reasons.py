"""The one factory for pend reasons, so their wording and shape stay uniform (and a dedup pool
can be added here later without touching a caller)."""

from __future__ import annotations

from xce.core.decisions import PendReason
from xce.core.quantity import human_quantity


def format_quantity(resource: str, amount: int) -> str:
    """Memory for people, in the largest unit it reaches: ``4G``, ``1.5G``, ``877.3G``. The exact
    bytes stay in the reason's ``needed`` and ``short`` fields."""
    return human_quantity(resource, amount)


def make_pend_reason(step: str, resource: str = "", needed: int = 0, short: int = 0,
                     detail: str = "", proven_by: int | None = None) -> PendReason:
    """Build a reason; with a resource the text reads ``needs R N, short by R M``."""
    if resource:
        text = (f"needs {resource} {format_quantity(resource, needed)}, "
                f"short by {resource} {format_quantity(resource, short)}")
        if detail:
            text = f"{text} ({detail})"
    else:
        text = detail or step
    if proven_by is not None:
        text = f"{text}; same request as job {proven_by}, already refused this round"
    return PendReason(step=step, text=text, resource=resource, needed=needed, short=short,
                      proven_by=proven_by)


def with_proof(reason: PendReason, jobid: int) -> PendReason:
    """The reason a cache hit reports: the original's category, naming the job that proved it."""
    return make_pend_reason(reason.step, reason.resource, reason.needed, reason.short,
                            _detail_of(reason), proven_by=jobid)


def _detail_of(reason: PendReason) -> str:
    text = reason.text
    if reason.resource:
        start = text.find(" (")
        return text[start + 2:-1] if start >= 0 and text.endswith(")") else ""
    return text
