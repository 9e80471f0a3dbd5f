"""Jobs: submit, list, inspect, kill, suspend, resume, modify (users and admins)."""

from __future__ import annotations

import gc
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query, Request

from xce.controller.api.fastlane import hot
from xce.controller.api.responses import COMMON, MAX_ID, JobId, ctl_of, documented, json_response
from xce.controller.auth.security import job_owner, people
from xce.controller.auth.tokens import Principal
from xce.controller.errors import Conflict, FieldErrors, NotFound
from xce.controller.jobs import control, refs, submission
from xce.controller.web import views
from xce.controller.web.models import ActRequest, ModifyRequest, SubmitRequest
from xce.core.specs import JOB_STATES

router = APIRouter(prefix="/v1/jobs", tags=["jobs"], responses=COMMON)
Caller = Annotated[Principal, Depends(people)]


@hot
@router.post("", status_code=201, summary="Submit a job, or an array of N jobs with `array: N`",
             responses=documented(413))
# Answered after the commit; submissions that arrive together share one (xce.controller.jobs.groupcommit).
async def submit(body: SubmitRequest, request: Request, p: Caller,
                 idempotency_key: str | None = Header(None, description="Retrying with the same key (after a "
                                                      "failover) returns the jobs the first attempt created")):
    owner = job_owner(ctl_of(request), p)
    res = await request.app.state.submissions.submit(owner, body, submission.check_key(idempotency_key))
    row = res.pop("row")
    res["job"] = views.job_detail(row, [{"ts": row["submit_time"], "from_state": None, "to_state": "PEND",
                                         "reason": "submitted", "actor": p.name}])
    return json_response(res, 201)


@router.get("", summary="List jobs (unfinished by default); others' commands are null unless [privacy] show_all_jobs")
async def list_jobs(
    request: Request,
    p: Caller,
    user: list[str] | None = Query(None, description="A user name, or 'all'; repeatable or comma-separated for "
                                   "several users (`squeue -u a,b`); default: the caller's own jobs"),
    queue: str | None = None,
    state: list[str] | None = Query(None, description="Repeatable, or comma-separated: PEND,RUN,..."),
    include_finished: bool = Query(False, alias="all", description="Include finished jobs (DONE, EXIT)"),
    id: list[int] | None = Query(None, description="Only these job ids (repeatable)"),
    job: list[str] | None = Query(None, description="Only these jobs as people write them: 12, 12[3], 12[1-5], "
                                  "NAME (repeatable); one that names nothing is reported in `errors`, the "
                                  "others listed"),
    name: list[str] | None = Query(None, description="Only jobs of this name; `*` matches any run of characters "
                                   "(`sweep*`); repeatable: jobs of any of these names (`squeue --name a,b`)"),
    ended_within: int | None = Query(None, ge=1, le=MAX_ID // 10**9, description="Only jobs that ended within "
                                     "this many seconds (`xce jobs -d`: LSF's recently finished jobs)"),
    since: int | None = Query(None, ge=0, le=MAX_ID // 10**9, description="Only jobs active at or after this time "
                              "(seconds since the epoch): unfinished, or ended since then; finished jobs included "
                              "(`sacct -S`, `squeue -t all`)"),
    until: int | None = Query(None, ge=0, le=MAX_ID // 10**9, description="Only jobs submitted at or before this "
                              "time (seconds since the epoch; `sacct -E`)"),
    limit: int = Query(10_000, ge=1, le=100_000, description="At most this many jobs (`truncated` says when more "
                       "matched); a listing by `id`/`job` is never cut below the number of jobs it names"),
    after: int | None = Query(None, ge=0, le=MAX_ID, description="Only jobs with a larger id: the next page "
                              "after a `truncated` answer, from its last job's id (jobs are listed by id)"),
    collapse: bool = Query(False, description="The pending elements of an array as one job, its first, with "
                           "`array_indexes` (all of them): what `squeue` prints without `-r`"),
    usage: bool = Query(False, description="Each job with what it used (`used`: CPU milliseconds, memory peak, "
                        "average and latest in bytes), as `sacct` lists it"),
    columns: list[str] | None = Query(None, description="Only these columns, comma-separated or repeatable: the "
                                      "answer is `{\"columns\": [...], \"rows\": [[...], ...], \"truncated\"}`, one "
                                      "array of values per job in the order of `columns` (what a status command "
                                      "prints, without the rest of each job). Any key of a job of `jobs`, `used`, "
                                      "and `array_indexes` (with `collapse`: a waiting array's indexes on its first "
                                      "element, else null)"),
):
    if id and any(not 1 <= i <= MAX_ID for i in id):
        raise FieldErrors.one(["query", "id"], f"job ids are whole numbers from 1 to {MAX_ID}", "value_error.id")
    asked = [c.strip() for part in (columns or []) for c in part.split(",") if c.strip()]
    unknown = views.columns_of(asked)
    if unknown:
        raise FieldErrors.one(["query", "columns"], f"unknown column {unknown[0]!r} (expected any of: "
                              f"{', '.join(views.COLUMNS)})", "value_error.column")
    problems: list[str] = []
    if job:
        found: set[int] = set(id or ())
        job = _by_ids(ctl_of(request), job, found)
        for text in job:
            try:
                found.update(r["id"] for r in refs.resolve(ctl_of(request), p, text))
            except (NotFound, Conflict) as exc:
                problems.append(str(exc))
        if not found:
            return json_response({**({"columns": list(dict.fromkeys(asked)), "rows": []} if asked else {"jobs": []}),
                                  "truncated": False, "errors": problems})
        id = sorted(found)
    states = [s.strip().upper() for part in (state or []) for s in part.split(",") if s.strip()]
    bad = [s for s in states if s not in JOB_STATES]
    if bad:
        raise FieldErrors.one(["query", "state"], f"unknown state {bad[0]!r} (expected one of: {', '.join(JOB_STATES)})",
                              "value_error.state")
    users = [u.strip() for part in (user or []) for u in part.split(",") if u.strip()]
    who = None if "all" in users or (not users and id) else (users or [p.name])
    if since is not None and until is not None and until < since:
        raise FieldErrors.one(["query", "until"], "the window ends before it starts (until < since)",
                              "value_error.window")
    names = list(dict.fromkeys(asked)) if asked else \
        [*views.SUMMARY, *(c for c in views.LISTED if c not in ("used", "array_indexes")),
         *(["used"] if usage else []), *(["array_indexes"] if collapse else [])]
    ctl = ctl_of(request)
    # Without the cyclic collector while the answer is made: 100,000 rows are millions of lists and
    # values, none in a cycle, and each pass of the collector would walk the controller's whole heap.
    collecting = gc.isenabled()
    gc.disable()
    try:
        names, rows, truncated = views.list_jobs(
            ctl, p, columns=names, user=who, queue=queue, states=states or None, include_finished=include_finished,
            jobids=id, limit=max(limit, len(id or ())), name=name or None,
            ended_after=None if ended_within is None else time.time_ns() - ended_within * 10**9,
            active_after=None if since is None else since * 10**9,
            submitted_before=None if until is None else until * 10**9, after_id=after, collapse=collapse)
        if asked:
            result: dict = {"columns": names, "rows": rows, "truncated": truncated}
        else:
            result = {"jobs": [dict(zip(names, r, strict=True)) for r in rows], "truncated": truncated}
        if job:
            result["errors"] = problems
        return json_response(result)
    finally:
        if collecting:
            gc.enable()


def _by_ids(ctl, refs: list[str], found: set[int]) -> list[str]:
    """Adds to ``found`` the jobs of the references that are ids or array elements (one query for
    all); the others (names, and ids that name nothing) are left for :func:`refs.resolve`."""
    from xce.jobref import RefError, parse_ref

    numeric: list[tuple[int, tuple[int, ...] | None]] = []
    texts: list[str] = []
    rest: list[str] = []
    for text in refs:
        try:
            ref = parse_ref(text)
        except RefError:
            rest.append(text)
            continue
        if ref.id is None or not 1 <= ref.id <= MAX_ID:
            rest.append(text)
        else:
            numeric.append((ref.id, ref.indexes))
            texts.append(text)
    for text, ids in zip(texts, views.ids_of(ctl, numeric) if numeric else [], strict=True):
        if ids is None:
            rest.append(text)
        else:
            found.update(ids)
    return rest


@router.get("/{jobid}", summary="One job: placement, pend reasons, state history, usage", responses=documented(404))
async def job_detail(jobid: JobId, request: Request, p: Caller):
    ctl = ctl_of(request)
    row = ctl.job(jobid)
    show_all = ctl.config.privacy.show_all_jobs
    if not views.sees_everything(p, row, show_all):
        control.check_owner(p, row, "see the details of")
    return json_response(views.redact(views.job_detail(row, views.history_of(ctl, jobid)), p, show_all))


@router.post("/act", summary="Kill (or signal), suspend, resume, hold or release many jobs: ids, ID[INDEX], "
             "ID[1-5], names, all of the caller's, a queue's; one result per job", responses=documented(422))
async def act(body: ActRequest, request: Request, p: Caller):
    return json_response(control.act(ctl_of(request), p, body))


@router.post("/{jobid}/kill", summary="Kill a job (PEND, RUN or suspended -> EXIT)", responses=documented(404, 409))
async def kill(jobid: JobId, request: Request, p: Caller):
    return json_response(views.job_summary(control.kill(ctl_of(request), p, jobid), killer=p.name))


@router.post("/{jobid}/suspend", summary="Suspend a running job (RUN -> USUSP)", responses=documented(404, 409))
async def suspend(jobid: JobId, request: Request, p: Caller):
    return json_response(views.job_summary(control.suspend(ctl_of(request), p, jobid)))


@router.post("/{jobid}/resume", summary="Resume a suspended job (USUSP -> RUN; SSUSP for admins)",
             responses=documented(404, 409))
async def resume(jobid: JobId, request: Request, p: Caller):
    return json_response(views.job_summary(control.resume(ctl_of(request), p, jobid)))


@router.patch("/{jobid}", summary="Change priority, queue or project (publishes JOB_UPDATE)",
              responses=documented(404, 409, 413))
async def modify(jobid: JobId, body: ModifyRequest, request: Request, p: Caller):
    return json_response(views.job_summary(control.modify(ctl_of(request), p, jobid, body)))
