"""The new backfilling pickers on real traces start every job exactly when their rule says,
checked against a deliberately naive implementation of each rule written here (as
``test_picker_reference.py`` does for ``strict_fcfs`` and ``easy_backfill``).

Common semantics (single queue, hosts of one slot, all priorities equal): requested estimate
e = requested time when > 0, else the run time; a job runs min(run, e). At each distinct event
time: completions, then submissions, then one pass over the queue in the picker's order. Jobs
start in that order while they fit; the first that does not fit is the head H. Running jobs are
walked by estimated end, then job id, adding their slots to the free count until H fits: that end
is the shadow time S, and the extra X is what is free then beyond H's size. Each job J offered
after H that fits now starts if now + e_J <= S or J's size <= X, and X shrinks by J's size when
J runs past S. What each picker changes:

- ``easy_backfill_shadow``: X counts every running job estimated to end by S (ties at S too).
- ``easy_sjbf``: the jobs after H are offered by e, then submit time, then job id.
- ``easy_pp``: every estimate above is a prediction: the mean of the actual run times of the
  user's last two finished jobs (at least 1 s, at most e; e for a user with fewer than two),
  fixed for a job when it starts; a running job past its prediction is estimated to end at its
  requested end. The jobs after H are offered by prediction, then submit time, then job id.
- ``easy_aged_sjf``: the queue order is ``aged_order`` below, for the head and the jobs after it.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Callable

import pytest

from xce.sim import read_swf, simulate, uniform_cluster

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "examples" / "traces"
HOSTS = {"NASA-iPSC-1993-3.1-cln.swf": 128, "lublin_256.swf": 256, "LANL-CM5-1994-4.1-cln.first155.swf": 1024}

#: (jobid, submit, run, procs, requested, user)
Row = tuple[int, int, int, int, int, int]


def naive(jobs: list[Row], slots: int, picker: str) -> dict[int, int]:
    """Start time of every job of ``jobs`` under ``picker``'s rule, one slot per host."""
    jobs = sorted((j for j in jobs if j[3] <= slots), key=lambda j: (j[1], j[0]))
    req = {j[0]: (j[4] if j[4] > 0 else j[2]) for j in jobs}
    runs = {j[0]: min(j[2], req[j[0]]) for j in jobs}
    size = {j[0]: j[3] for j in jobs}
    submit = {j[0]: j[1] for j in jobs}
    user = {j[0]: j[5] for j in jobs}
    history: dict[int, list[int]] = {}
    fixed: dict[int, float] = {}
    waits: list[int] = []  # of every job started, in the order they started
    predicting = picker == "easy_pp"

    def predicted(j: int) -> float:
        last = history.get(user[j], [])[-2:]
        if not predicting or len(last) < 2:
            return req[j]
        return min(req[j], max(1, (last[0] + last[1]) / 2))

    started: dict[int, int] = {}
    queue: list[int] = []
    running: list[tuple[int, int]] = []  # (jobid, start)
    free = slots
    nxt = 0
    while nxt < len(jobs) or queue or running:
        times = [s + runs[j] for j, s in running]
        if nxt < len(jobs):
            times.append(jobs[nxt][1])
        now = min(times)
        for j, s in list(running):
            if s + runs[j] == now:
                running.remove((j, s))
                free += size[j]
                history.setdefault(user[j], []).append(runs[j])
        while nxt < len(jobs) and jobs[nxt][1] == now:
            queue.append(jobs[nxt][0])
            nxt += 1

        def est(j: int) -> float:
            if j not in fixed:
                return predicted(j)
            start = started[j]
            return fixed[j] if start + fixed[j] > now else req[j]

        def start(j: int) -> None:
            nonlocal free
            started[j] = now
            waits.append(now - submit[j])
            fixed[j] = predicted(j) if predicting else req[j]
            running.append((j, now))
            free -= size[j]
            queue.remove(j)

        order = ORDERS.get(picker, fcfs_order)(list(queue), now, est, submit, list(waits), size, slots)
        pos = 0
        while pos < len(order) and size[order[pos]] <= free:
            start(order[pos])
            pos += 1
        if pos == len(order):
            continue
        head, rest = order[pos], order[pos + 1:]
        count = free
        shadow = extra = None
        by_end = sorted(running, key=lambda r: (r[1] + est(r[0]), r[0]))
        for _k, (j, s) in enumerate(by_end):
            count += size[j]
            if count >= size[head]:
                shadow = s + est(j)
                if picker == "easy_backfill_shadow":
                    count = free + sum(size[i] for i, t in running if t + est(i) <= shadow)
                extra = count - size[head]
                break
        if picker in ("easy_sjbf", "easy_pp"):
            rest.sort(key=lambda j: (est(j), submit[j], j))
        for j in rest:
            if size[j] > free:
                continue
            if now + est(j) <= shadow:
                start(j)
            elif size[j] <= extra:
                start(j)
                extra -= size[j]
    return started


def fcfs_order(queue: list[int], now: int, est: Callable[[int], float], submit: dict[int, int],
               waits: list[int], size: dict[int, int], slots: int) -> list[int]:
    return sorted(queue, key=lambda j: (submit[j], j))


def aged_order(queue: list[int], now: int, est: Callable[[int], float], submit: dict[int, int],
               waits: list[int], size: dict[int, int], slots: int) -> list[int]:
    """``easy_aged_sjf``: a job of size n is aged once it has waited min(AGE_CAP_S, AGE_FACTOR x the
    mean wait of the last WINDOW jobs started) x (1 - n / slots) (no job started yet: the cap's
    part only). The aged jobs go first, by submit time, then job id; then the others by estimate,
    submit time, job id."""
    from xce.core.pickers.aged_sjf import AGE_CAP_S, AGE_FACTOR, WINDOW

    recent = waits[-WINDOW:]
    bound = min(Fraction(AGE_CAP_S), AGE_FACTOR * Fraction(sum(recent), len(recent))) if recent else AGE_CAP_S

    num, den = Fraction(bound).numerator, Fraction(bound).denominator

    def aged(j: int) -> bool:  # now - submit >= bound * (1 - size / slots), in integers
        return (now - submit[j]) * slots * den >= num * (slots - size[j])

    old = sorted((j for j in queue if aged(j)), key=lambda j: (submit[j], j))
    young = sorted((j for j in queue if not aged(j)), key=lambda j: (est(j), submit[j], j))
    return old + young


ORDERS = {"easy_aged_sjf": aged_order}


def _jobs(trace) -> list[Row]:
    return [(trace.jobid[i], trace.submit[i], trace.run[i], trace.procs[i], trace.req_time[i], trace.user[i])
            for i in range(len(trace))]


def test_the_reference_itself_on_a_hand_schedule():
    # 5 slots. Jobs 1 (2 slots), 5 and 6 (1 slot each) all end at t=100 by their estimates; job 2
    # (4 slots) blocks: S = 100. Walked by end then id, job 5 makes job 2 fit: the default X is
    # 1 + 2 + 1 - 4 = 0; the textbook X also counts job 6, ending at S too: 1. Job 3 (1 slot, runs
    # past S) starts at once only with the textbook count.
    jobs = [(1, 0, 100, 2, 100, 1), (5, 0, 100, 1, 100, 1), (6, 0, 100, 1, 100, 1),
            (2, 1, 50, 4, 50, 1), (3, 2, 500, 1, 500, 2)]
    assert naive(jobs, 5, "easy_backfill")[3] == 100
    assert naive(jobs, 5, "easy_backfill_shadow")[3] == 2
    # SJBF: one free slot until S = 100 and two candidates arriving together: EASY starts the
    # first come (60 s), SJBF the shortest (40 s); the other one would then run past S.
    jobs = [(1, 0, 100, 3, 100, 1), (2, 1, 50, 4, 50, 1), (3, 2, 60, 1, 60, 2), (4, 2, 40, 1, 40, 2)]
    assert naive(jobs, 4, "easy_backfill") == {1: 0, 3: 2, 2: 100, 4: 150}
    assert naive(jobs, 4, "easy_sjbf") == {1: 0, 4: 2, 2: 100, 3: 150}


def test_easy_pp_reference_predicts_from_the_users_last_two_jobs():
    # User 7 runs two 10 s jobs that asked for 1000 s; its third job is predicted 10 s and fits the
    # hole before the wide job's reservation, which under plain estimates it would not.
    jobs = [(1, 0, 10, 1, 1000, 7), (2, 0, 10, 1, 1000, 7), (3, 20, 100, 3, 100, 1),
            (4, 21, 500, 4, 500, 1), (5, 22, 10, 1, 1000, 7)]
    pp = naive(jobs, 4, "easy_pp")
    assert pp[5] == 22  # predicted 10 s: ends by S = 120
    assert naive(jobs, 4, "easy_sjbf")[5] == 620  # estimated 1000 s: would delay job 4


@pytest.mark.slow
@pytest.mark.parametrize("picker", ["easy_backfill_shadow", "easy_sjbf", "easy_pp", "easy_aged_sjf"])
@pytest.mark.parametrize("name", sorted(HOSTS))
def test_every_start_time_matches_the_reference(name, picker):
    trace = read_swf(TRACES / name)
    hosts = HOSTS[name]
    cluster = uniform_cluster(hosts, 1, None).with_picker(picker)
    result = simulate(trace, cluster)
    expected = naive(_jobs(trace), hosts, picker)
    got = {trace.jobid[i]: result.start[i] for i in range(len(trace)) if result.start[i] >= 0}
    assert len(expected) == len(got) == len(trace) - len(result.too_large)
    wrong = [(j, got.get(j), t) for j, t in expected.items() if got.get(j) != t]
    assert wrong == [], f"{len(wrong)} start time(s) differ, first (job, xce, reference): {wrong[:5]}"


@pytest.mark.parametrize("picker", ["easy_sjbf", "easy_pp", "easy_aged_sjf"])
def test_the_rules_hold_on_a_generated_trace_none_of_them_was_written_against(picker):
    # Wide jobs up to the whole machine, requested times rounded up to the hour (so estimates are
    # loose), a load that builds a queue: the cases the shipped traces may not exercise.
    from xce.sim.synthetic import generate_wide

    trace = generate_wide(jobs=400, nodes=64, procs_per_node=1, load=0.95, seed=40, min_run=30, max_run=20_000)
    result = simulate(trace, uniform_cluster(64, 1, None).with_picker(picker))
    expected = naive(_jobs(trace), 64, picker)
    got = {trace.jobid[i]: result.start[i] for i in range(len(trace)) if result.start[i] >= 0}
    assert len(got) == len(trace)
    wrong = [(j, got.get(j), t) for j, t in expected.items() if got.get(j) != t]
    assert wrong == [], f"{len(wrong)} start time(s) differ, first (job, xce, reference): {wrong[:5]}"
    waits = [result.start[i] - trace.submit[i] for i in range(len(trace))]
    assert max(waits) > 0  # a queue formed, so the order mattered
