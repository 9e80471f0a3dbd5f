"""The finished jobs of a time window, read for ``GET /v1/workload`` a few thousand rows at a time.

The export streams: it reads on a connection of its own (never the controller's writing one), one
query fetched a page at a time, so a window of 100,000 jobs neither holds the event loop nor builds
the whole answer in memory. Each job's memory
comes from its accounting record (declared and peak, written when it ended), not from parsing its
usage history again.
"""

from __future__ import annotations

from typing import Any, Iterator

import sqlalchemy as sa

from xce.controller.store.schema import job_accounting, jobs

PAGE = 5000
FINISHED = ("DONE", "EXIT")

_mem = job_accounting.alias("mem")
_cpu = job_accounting.alias("cpu")
_COLUMNS = (jobs.c.id, jobs.c.user, jobs.c.queue, jobs.c.project, jobs.c.job_type, jobs.c.priority, jobs.c.state,
            jobs.c.tasks, jobs.c.request, jobs.c.sched_request, jobs.c.command, jobs.c.requests, jobs.c.limits,
            jobs.c.array_id, jobs.c.array_index, jobs.c.submit_time, jobs.c.start_time, jobs.c.end_time,
            jobs.c.exit_code, jobs.c.exit_signal, jobs.c.reason, jobs.c.cwd, jobs.c.placement, jobs.c.run_limit,
            jobs.c.name, jobs.c.depend, jobs.c.begin_time, jobs.c.end_code,
            _mem.c.declared.label("mem_declared"), _mem.c.peak.label("mem_peak"), _mem.c.mean.label("mem_mean"),
            _mem.c.samples.label("mem_samples"), _cpu.c.peak.label("cpu_ms"))


def finished_jobs(engine: sa.engine.Engine, *, since_ns: int, until_ns: int, queue: str | None = None,
                  user: str | None = None, project: str | None = None, by: str = "submit_time",
                  page: int = PAGE) -> Iterator[list[dict[str, Any]]]:
    """Pages of finished (DONE, EXIT) jobs submitted (``by="end_time"``: ended) in ``[since_ns, until_ns)``,
    in job id order. ``xce workload export`` and ``xce acct`` both read through here.

    One query read a page at a time (``yield_per``): a keyset loop (``id > last``) would make
    SQLite walk the state index and sort the whole window again for every page."""
    joined = jobs.outerjoin(_mem, sa.and_(_mem.c.jobid == jobs.c.id, _mem.c.resource == "mem")).outerjoin(
        _cpu, sa.and_(_cpu.c.jobid == jobs.c.id, _cpu.c.resource == "cpu_ms"))
    window = jobs.c[by]
    conds = [jobs.c.state.in_(FINISHED), window >= since_ns, window < until_ns]
    if queue is not None:
        conds.append(jobs.c.queue == queue)
    if user is not None:
        conds.append(jobs.c.user == user)
    if project is not None:
        conds.append(jobs.c.project == project)
    q = sa.select(*_COLUMNS).select_from(joined).where(*conds).order_by(jobs.c.id)
    with engine.connect() as conn:
        result = conn.execution_options(stream_results=True, yield_per=page).execute(q)
        keys = tuple(result.keys())
        for part in result.partitions():
            yield [dict(zip(keys, r, strict=True)) for r in part]
