"""The dashboard's pages and the few forms that change something (log-in, kill/suspend/resume).

Handlers only gather data through the functions the REST API uses (:mod:`xce.controller.web.views`,
:mod:`xce.controller.jobs.control`, :mod:`xce.controller.records.accounting`) and hand it to a template, so a
page shows exactly what the API would tell the same person, privacy and permissions included.
Bad query parameters get a one-line message on the page (status 400), never a traceback.
"""

from __future__ import annotations

import math
import time
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from xce.accounting.drift import Thresholds
from xce.controller.errors import Conflict, Forbidden, NotFound
from xce.controller.jobs import control
from xce.controller.jobs.states import TransitionError
from xce.controller.records import accounting
from xce.controller.sched import feed
from xce.controller.ui import charts, session
from xce.controller.ui.render import HEADERS, is_fragment, page
from xce.controller.web import views
from xce.core.specs import JOB_STATES

router = APIRouter(prefix="/ui", include_in_schema=False)

PAGE_SIZES = (25, 50, 100, 200)
DRIFT_MIN_SAMPLES = 20  # the API's and the CLI's default
ACTIONS = {"kill": control.kill, "suspend": control.suspend, "resume": control.resume}
#: Which action buttons a job's state offers (the state machine still decides; these only avoid
#: showing buttons that would certainly be refused).
OFFERED = {"PEND": ("kill",), "RUN": ("suspend", "kill"), "USUSP": ("resume", "kill"), "SSUSP": ("resume", "kill")}


class BadRequest(Exception):
    """A query parameter the page cannot use; the sentence says which and why."""


def _ctl(request: Request):
    return request.app.state.ctl


def not_logged_in(request: Request) -> Response:
    if is_fragment(request):
        return Response("log in again", status_code=401, headers=HEADERS)
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/ui/login?{urlencode({'next': target})}", status_code=303, headers=HEADERS)


def _safe_next(value: str | None) -> str:
    """Only a dashboard path may follow the log-in (no open redirect to another site)."""
    if value and value.startswith("/ui/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/ui/"


def _foreign_form(request: Request, p) -> Response:
    return page(request, "error.html", status=403, viewer=p,
                message="this form has expired or did not come from this dashboard; reload the page and try again")


async def _form(request: Request) -> dict[str, str]:
    body = (await request.body()).decode("utf-8", errors="replace")
    return {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}


# -- log-in ---------------------------------------------------------------------------------------

@router.get("/login")
async def login_page(request: Request, next: str | None = None):
    return page(request, "login.html", next=_safe_next(next))


@router.post("/login")
async def login(request: Request):
    form = await _form(request)
    nxt = _safe_next(form.get("next"))
    p = session.check(request, form.get("token", ""))
    if isinstance(p, str):
        return page(request, "login.html", status=401, next=nxt, message=p)
    response = RedirectResponse(nxt, status_code=303, headers=HEADERS)
    session.log_in(response, request, form["token"])
    return response


@router.post("/logout")
async def logout(request: Request):
    p = session.viewer(request)
    if not session.csrf_ok(request, (await _form(request)).get("csrf")):
        return _foreign_form(request, p)
    response = RedirectResponse("/ui/login", status_code=303, headers=HEADERS)
    session.log_out(response)
    return response


# -- pages ----------------------------------------------------------------------------------------

def scheduler_status(ctl) -> dict[str, Any]:
    """The scheduler as people see it: alive, how far behind the feed, its last round."""
    behind, behind_s = feed.lag(ctl)
    r = ctl.sched_watch.last_round
    return {"alive": feed.scheduler_alive(ctl), "last_request_age_s": feed.scheduler_age(ctl),
            "lag_events": behind, "lag_seconds": behind_s, "rounds": ctl.sched_watch.rounds,
            "last_round": None if r is None else {"ts": r.ts, "duration_s": r.duration_s, "decisions": r.decisions}}


@router.get("/")
async def overview(request: Request):
    p = session.viewer(request)
    ctl = _ctl(request)
    used = views.slot_use(ctl)
    hosts = [views.host_view(ctl, ctl.hosts[n], used) for n in sorted(ctl.hosts)]
    order = sorted(ctl.config.queues, key=lambda q: (-ctl.config.queues[q].priority, q))
    totals: dict[str, int] = {}
    for (_, state), n in ctl.counts.items():
        totals[state] = totals.get(state, 0) + n
    slots = sum(_num(h["resources"].get("slots")) for h in hosts if h["status"] == "ok")
    return page(request, "overview.html", viewer=p, hosts=hosts, queues=[views.queue_view(ctl, q) for q in order],
                totals=totals, sched=scheduler_status(ctl), pending=views.pending_by_category(ctl),
                report_age=_report_ages(ctl),
                slots_total=slots, slots_used=sum(h["slots_used"] for h in hosts))


def _num(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def _jobs_query(request: Request, ctl) -> tuple[views.JobPage, dict[str, str]]:
    q = request.query_params
    raw = {k: q.get(k, "") for k in ("user", "queue", "state", "category", "sort", "dir", "page", "size")}
    states = tuple(s for s in raw["state"].upper().split(",") if s)
    for s in states:
        if s not in JOB_STATES:
            raise BadRequest(f"state: unknown state {s!r} (expected one of: {', '.join(JOB_STATES)})")
    if raw["queue"] and raw["queue"] not in ctl.config.queues:
        raise BadRequest(f"queue: unknown queue {raw['queue']!r} (expected one of: {', '.join(sorted(ctl.config.queues))})")
    sort = raw["sort"] or "id"
    if sort not in views.SORTS:
        raise BadRequest(f"sort: cannot sort on {sort!r} (expected one of: {', '.join(views.SORTS)})")
    if raw["dir"] not in ("", "asc", "desc"):
        raise BadRequest(f"dir: expected asc or desc, not {raw['dir']!r}")
    try:
        number = int(raw["page"] or 1)
        size = int(raw["size"] or 50)
    except ValueError:
        raise BadRequest("page and size must be whole numbers") from None
    if number < 1 or number > 1_000_000:
        raise BadRequest(f"page: expected a page number from 1, not {number}")
    if size not in PAGE_SIZES:
        raise BadRequest(f"size: expected one of {', '.join(map(str, PAGE_SIZES))}, not {size}")
    if len(raw["user"]) > 128 or len(raw["category"]) > 32:
        raise BadRequest("user or category: too long")
    descending = raw["dir"] != "asc" if raw["dir"] else sort in ("id", "priority", "start", "end")
    return views.JobPage(user=raw["user"] or None, queue=raw["queue"] or None, states=states,
                         category=raw["category"] or None, sort=sort, descending=descending,
                         offset=(number - 1) * size, limit=size), raw


@router.get("/jobs")
async def jobs_page(request: Request):
    p = session.viewer(request)
    ctl = _ctl(request)
    try:
        query, raw = _jobs_query(request, ctl)
    except BadRequest as exc:
        return page(request, "jobs.html", status=400, viewer=p, message=str(exc), jobs=[], total=0,
                    query=views.JobPage(), raw={}, pages=1, number=1, link=lambda **kw: "/ui/jobs",
                    queues=sorted(ctl.config.queues), states=JOB_STATES)
    rows, total = views.page_jobs(ctl, p, query)
    pages = max(1, math.ceil(total / query.limit))
    number = query.offset // query.limit + 1
    kept = {k: v for k, v in raw.items() if v}

    def link(**changes: Any) -> str:
        params = {**kept, **{k: str(v) for k, v in changes.items() if v not in (None, "")}}
        for k, v in changes.items():
            if v in (None, ""):
                params.pop(k, None)
        return "/ui/jobs" + (f"?{urlencode(params)}" if params else "")

    return page(request, "jobs.html", viewer=p, jobs=rows, total=total, query=query, raw=raw, pages=pages,
                number=number, link=link, queues=sorted(ctl.config.queues), states=JOB_STATES)


def _job_context(request: Request, p, jobid: int) -> dict[str, Any]:
    """What ``p`` may see of a job: as ``GET /v1/jobs/N`` answers them, or only its listing."""
    ctl = _ctl(request)
    row = ctl.job(jobid)
    show_all = ctl.config.privacy.show_all_jobs
    if not views.sees_everything(p, row, show_all):
        return {"job": views.redact(views.job_summary(row), p, show_all), "full": False, "actions": ()}
    job = views.redact(views.job_detail(row, views.history_of(ctl, jobid)), p, show_all)
    mine = p.is_admin or row["user"] == p.name
    return {"job": job, "full": True, "actions": OFFERED.get(job["state"], ()) if mine else (),
            "usage": charts.usage_lines(job["usage"].get("series"))}


@router.get("/jobs/{jobid}")
async def job_page(request: Request, jobid: str):
    p = session.viewer(request)
    if not jobid.isdigit() or len(jobid) > 18:
        return page(request, "error.html", status=404, viewer=p, message=f"{jobid!r} is not a job id")
    try:
        ctx = _job_context(request, p, int(jobid))
    except NotFound as exc:
        return page(request, "error.html", status=404, viewer=p, message=str(exc))
    return page(request, "job.html", viewer=p, **ctx)


@router.post("/jobs/{jobid}/{action}")
async def job_action(request: Request, jobid: str, action: str):
    p = session.viewer(request)
    form = await _form(request)
    if not session.csrf_ok(request, form.get("csrf")):
        return _foreign_form(request, p)
    if action not in ACTIONS or not jobid.isdigit() or len(jobid) > 18:
        return page(request, "error.html", status=404, viewer=p, message=f"no action {action!r} on job {jobid!r}")
    status, message = 303, None
    try:
        ACTIONS[action](_ctl(request), p, int(jobid))
    except NotFound as exc:
        return page(request, "error.html", status=404, viewer=p, message=str(exc))
    except Forbidden as exc:
        status, message = 403, str(exc)
    except (TransitionError, Conflict) as exc:
        status, message = 409, str(exc)
    if status == 303:
        return RedirectResponse(f"/ui/jobs/{int(jobid)}", status_code=303, headers=HEADERS)
    return page(request, "job.html", status=status, viewer=p, message=message,
                **_job_context(request, p, int(jobid)))


@router.get("/hosts/{name}")
async def host_page(request: Request, name: str):
    p = session.viewer(request)
    ctl = _ctl(request)
    if name not in ctl.hosts:
        return page(request, "error.html", status=404, viewer=p, message=f"host {name} is not registered")
    host = views.host_view(ctl, ctl.hosts[name], views.slot_use(ctl))
    return page(request, "host.html", viewer=p, host=host, report_age=_report_ages(ctl)[name],
                **views.jobs_on_host(ctl, p, name))


def _report_ages(ctl) -> dict[str, float]:
    now = time.monotonic()
    return {n: max(0.0, now - h.seen_mono) for n, h in ctl.hosts.items()}


@router.get("/drift")
async def drift_page(request: Request, jobType: str | None = None):
    p = session.viewer(request)
    ctl = _ctl(request)
    if jobType and len(jobType) > 128:
        return page(request, "error.html", status=400, viewer=p, message="jobType: expected a job type name")
    with ctl.tx() as conn:
        rep = accounting.report(conn, jobType or None, DRIFT_MIN_SAMPLES, Thresholds()).to_json()
    return page(request, "drift.html", viewer=p, report=rep, job_type=jobType or "", min_samples=DRIFT_MIN_SAMPLES)
