"""Small independent reference simulators, one rule each, to time ``xce sim run`` against.

Nothing of XCE is imported: the SWF reading, the event loop and each picker's rule are written out
again from their documented semantics (the same as ``tests/sim/test_picker_reference.py``): one
queue, one slot per processor, all priorities equal, queue order = submit time then job id, a job
runs min(run, requested) when it requested a time, estimate = requested time, else its run time.
At each event time: completions, then submissions, then one pass of the rule.

* ``strict_fcfs``: start jobs from the head while the head fits.
* ``builtin_fcfs``: start, in queue order, every job that fits now (no reservation).
* ``easy_backfill``: start from the head while it fits; for the blocked head H, walk running jobs
  by estimated end (then job id) adding their processors to the free count until H fits: that end
  is the shadow time S, the surplus the extra X. A later job J that fits now starts if
  now + e_J <= S or size_J <= X (then X shrinks by size_J).

    python bench/sim_reference.py TRACE --slots N --picker easy_backfill [--out starts.txt]

Prints one JSON line: jobs, started, wall seconds, and the digest of the (job id, start) pairs
that ``bench/sim_speed.py`` also computes from ``xce sim run``'s jobs.csv.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import json
import time

RULES = ("strict_fcfs", "builtin_fcfs", "easy_backfill")


def read_jobs(path: str) -> list[tuple[int, int, int, int, int]]:
    """(jobid, submit, run, procs, requested) of every usable job line, in submit order."""
    jobs, seen = [], set()
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            f = line.split()
            if not f or f[0].startswith(";") or len(f) < 18:
                continue
            jid, submit, run, alloc, req_procs, req = (int(f[0]), int(f[1]), int(f[3]), int(f[4]), int(f[7]),
                                                       int(f[8]))
            procs = alloc if alloc > 0 else req_procs
            if run < 0 or procs <= 0 or submit < 0 or jid in seen:
                continue
            seen.add(jid)
            jobs.append((jid, submit, run, procs, req))
    jobs.sort(key=lambda j: j[1])  # stable: equal submit times keep file order
    return jobs


def simulate(jobs, slots: int, rule: str) -> dict[int, int]:
    jobs = [j for j in jobs if j[3] <= slots]
    est = {j[0]: (j[4] if j[4] > 0 else j[2]) for j in jobs}
    runs = {j[0]: min(j[2], est[j[0]]) for j in jobs}
    size = {j[0]: j[3] for j in jobs}
    started: dict[int, int] = {}
    queue: list[int] = []
    ends: list[tuple[int, int]] = []  # heap of (end, jobid)
    running: dict[int, int] = {}  # jobid -> start
    free, nxt = slots, 0
    while nxt < len(jobs) or queue or ends:
        now = min(ends[0][0] if ends else 1 << 62, jobs[nxt][1] if nxt < len(jobs) else 1 << 62)
        while ends and ends[0][0] == now:
            _, j = heapq.heappop(ends)
            free += size[j]
            del running[j]
        while nxt < len(jobs) and jobs[nxt][1] == now:
            queue.append(jobs[nxt][0])
            nxt += 1
        left = []
        blocked = False
        shadow = extra = 0
        for k, j in enumerate(queue):
            fits = size[j] <= free
            if not blocked and fits:
                pass
            elif rule == "strict_fcfs":
                left += queue[k:]
                break
            elif rule == "builtin_fcfs":
                if not fits:
                    left.append(j)
                    continue
            elif not blocked:  # easy_backfill: j is the head that does not fit; reserve for it
                blocked = True
                count = free
                for s, r in sorted((running[r] + est[r], r) for r in running):
                    count += size[r]
                    if count >= size[j]:
                        shadow, extra = s, count - size[j]
                        break
                left.append(j)
                continue
            elif not fits:
                left.append(j)
                continue
            elif now + est[j] > shadow:
                if size[j] > extra:
                    left.append(j)
                    continue
                extra -= size[j]
            started[j] = now
            running[j] = now
            free -= size[j]
            heapq.heappush(ends, (now + runs[j], j))
        queue = left
    return started


def digest(starts: dict[int, int]) -> str:
    """sha256 of "jobid start" lines in job id order (first 16 hex digits)."""
    h = hashlib.sha256()
    for j in sorted(starts):
        h.update(f"{j} {starts[j]}\n".encode())
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--slots", type=int, required=True)
    ap.add_argument("--picker", choices=RULES, required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    t0 = time.perf_counter()
    jobs = read_jobs(a.trace)
    starts = simulate(jobs, a.slots, a.picker)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.writelines(f"{j},{s}\n" for j, s in sorted(starts.items()))
    print(json.dumps({"jobs": len(jobs), "started": len(starts), "wall_s": round(time.perf_counter() - t0, 3),
                      "digest": digest(starts)}))


if __name__ == "__main__":
    main()
