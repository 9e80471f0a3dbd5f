"""A job as LSF's programs show it: ids (an array element is ``ARRAY[INDEX]``), names, hosts, times;
and the one filtered request that finds the jobs a command line names."""

from __future__ import annotations

import os
import time

from xce.compat.lsf._args import Failed, Usage
from xce.compat.lsf._client import request

#: LSF's CLEAN_PERIOD: finished jobs ``bjobs -a``/``-d`` still list without being named.
CLEAN_PERIOD_S = 3600
#: The most jobs one answer of ``GET /v1/jobs`` holds (the API's bound); more are read page by page.
PAGE = 100_000


def job_id(job: dict) -> str:
    """JOBID: an array element is listed under its array's id (``bjobs`` shows ``name[i]`` as its name)."""
    return str(job["array_id"] if job.get("array_index") is not None else job["jobid"])


def long_id(job: dict) -> str:
    """``12`` or ``12[3]`` (``Job <12[3]>`` in the long forms and in bkill's answers)."""
    return job_id(job) if job.get("array_index") is None else f"{job['array_id']}[{job['array_index']}]"


def command_text(job: dict) -> str:
    """The command line as submitted: bsub's ``/bin/sh -c LINE`` is shown as LINE, as LSF shows it."""
    argv = job.get("command")
    if argv is None:
        return ""
    if len(argv) == 3 and argv[:2] == ["/bin/sh", "-c"]:
        return argv[2]
    return " ".join(argv)


def job_name(job: dict) -> str:
    """LSF names a job after its command line when no name was given; elements as ``name[i]``."""
    name = job.get("name") or command_text(job)
    return name if job.get("array_index") is None else f"{name}[{job['array_index']}]"


def hosts(job: dict) -> list[str]:
    """EXEC_HOST parts: ``host`` for one slot, ``N*host`` for N."""
    return [p["host"] if p["tasks"] == 1 else f"{p['tasks']}*{p['host']}" for p in job.get("placement") or []]


def run_seconds(job: dict, now_ns: int | None = None) -> int:
    start = job.get("start_time")
    if not start:
        return 0
    end = job.get("end_time") or now_ns or time.time_ns()
    return max(0, (end - start) // 10**9)


def matches(text: str, job: dict) -> bool:
    """Whether ``job`` is one that ``text`` (``12``, ``12[3]``, ``12[1-5]``, ``NAME``) names."""
    from xce.jobref import RefError, parse_ref

    try:
        ref = parse_ref(text)
    except RefError:
        return False
    if ref.id is not None:
        head = job["jobid"] == ref.id or job.get("array_id") == ref.id
    else:
        head = job.get("name") == ref.name
    return head and (ref.indexes is None or job.get("array_index") in ref.indexes)


def check_ids(words: list[str]) -> list[str]:
    """Job references as LSF takes them (``12``, ``12[3]``, ``"12[1-5]"``, Slurm's ``12_3``); a
    word that is none of them is LSF's ``Bad job ID``."""
    from xce.jobref import RefError, parse_ref

    out = []
    for word in words:
        try:
            ref = parse_ref(word)
        except RefError:
            raise Failed(f"{word}: Illegal job ID.") from None
        if ref.id is None:
            raise Failed(f"{word}: Illegal job ID.")
        out.append(word)
    return out


#: What every listing reads: a job's id and name (the jobs a command line names), where it runs and
#: its project (``-m``, ``-P``), its state.
ALWAYS = ("jobid", "array_id", "array_index", "name", "placement", "project", "state")


def listing(client, *, ids: list[str] | None = None, user: str | None = None, queue: str | None = None,
            name: str | None = None, states: str | None = None, finished: str = "no",
            columns: set[str] | None = None) -> list[dict]:
    """The jobs a command line names, from ``GET /v1/jobs`` with the filters on the server.

    ``finished``: ``no`` (unfinished only), ``recent`` (also those that ended within the clean
    period: ``since``, unfinished or ended since then), ``only`` (ended within the clean period),
    ``all``. Named jobs are found whatever their state. ``columns``: only these of each job (and
    :data:`ALWAYS`), the compact answer; None: whole jobs. One request, and one more per further
    :data:`PAGE` jobs (``after`` the last id of the page before), so that a listing is never cut
    short; a controller that cannot page says so instead."""
    from xce.cli.client import uncollected

    return uncollected(_listing, client, ids, user, queue, name, states, finished, columns)


def _listing(client, ids, user, queue, name, states, finished, columns) -> list[dict]:
    from xce.cli.client import jobs_of

    params: dict = {"user": user, "queue": queue, "name": name, "state": states, "limit": PAGE,
                    "columns": None if columns is None else ",".join(sorted({*ALWAYS, *columns}))}
    if ids:
        params["job"] = ids
    elif finished == "only":
        params.update(state=states or "DONE,EXIT", ended_within=CLEAN_PERIOD_S)
    elif finished == "all":
        params["all"] = "true"
    elif finished == "recent":
        params["since"] = int(time.time()) - CLEAN_PERIOD_S
    answer = request(client, "GET", "/v1/jobs", params=params)
    found = page = jobs_of(answer)
    while answer.get("truncated") and page:
        last = page[-1]["jobid"]
        answer = request(client, "GET", "/v1/jobs", params={**params, "after": last})
        page = jobs_of(answer)
        if page and page[0]["jobid"] <= last:
            raise Failed(f"more than {len(found)} jobs match and this controller cannot list them page by page: "
                         f"narrow the listing (-u, -q, -J, a state)")
        found = found + page
    return found


def me() -> str:
    """The name LSF would show for the caller (the account's; XCE checks the token)."""
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return os.environ.get("USER", "")


def not_found(ids: list[str], jobs: list[dict]) -> list[str]:
    """The references of ``ids`` that name none of ``jobs``, as the user wrote them."""
    return [text for text in ids if not any(matches(text, j) for j in jobs)]


def one_user(opts: dict) -> str | None:
    from xce.compat.lsf._args import last

    user = last(opts, "u")
    if user is not None and not user.strip():
        raise Usage("option requires an argument -- u")
    return user
