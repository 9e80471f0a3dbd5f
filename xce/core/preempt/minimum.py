"""The smallest victim set among ranked candidates (Req 6 AC 3: "the minimum subset").

Taking victims in rank order until the job fits, then dropping those not needed, gives a set no
victim can leave, but not always the smallest: two priority-1 jobs may be taken where one
priority-2 job frees the host. The smallest set is found by trying every smaller subset, which is
exponential, so it is tried only while there are at most ``EXACT_MAX`` candidates (at most
``2**EXACT_MAX`` fit checks, each one allocation attempt); beyond that the greedy irreducible set
stands. Among subsets of one size the first in colexicographic order of the ranked candidates wins:
the one whose most valuable victim ranks lowest, then the next one, and so on.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any, Sequence

#: Candidates up to which the smallest set is searched exhaustively (documented in the plugin guide).
EXACT_MAX = 8


def minimum_set(ctx: Any, job: Any, ranked: Sequence[Any]) -> list[Any] | None:
    """The smallest set of ``ranked`` (least valuable first) whose slots make ``job`` fit, or None."""
    chosen: list[Any] = []
    for victim in ranked:
        chosen.append(victim)
        if ctx.fits_without(job, chosen):
            break
    else:
        return None
    kept = _irreducible(ctx, job, chosen)
    if len(ranked) > EXACT_MAX or len(kept) == 1:
        return kept
    for size in range(1, len(kept)):
        for idx in sorted(combinations(range(len(ranked)), size), key=lambda c: c[::-1]):
            trial = [ranked[i] for i in idx]
            if ctx.fits_without(job, trial):
                return trial
    return kept


def _irreducible(ctx: Any, job: Any, chosen: Sequence[Any]) -> list[Any]:
    """Drop victims not needed, trying the most valuable (last taken) first."""
    kept = list(chosen)
    for victim in reversed(chosen):
        trial = [v for v in kept if v is not victim]
        if trial and ctx.fits_without(job, trial):
            kept = trial
    return kept
