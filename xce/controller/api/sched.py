"""The scheduler's endpoints: full sync, the event feed, decisions (with the figures of the rounds
that made them, :mod:`xce.controller.sched.schedwatch`), control commands."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request

from xce.controller.api.fastlane import hot
from xce.controller.api.responses import (
    COMMON,
    MAX_ID,
    MAX_WAIT_S,
    Cursor,
    ctl_of,
    documented,
    json_response,
    long_poll,
    raw_json,
)
from xce.controller.auth.security import scheduler_role
from xce.controller.auth.tokens import Principal
from xce.controller.errors import Gone
from xce.controller.sched import decisions, feed
from xce.controller.sched.schedwatch import Round
from xce.controller.service import dumps
from xce.controller.web.models import DecisionsRequest

router = APIRouter(prefix="/v1/sched", tags=["scheduler"], responses=COMMON)
Sched = Annotated[Principal, Depends(scheduler_role)]


@router.get("/state", summary="Full consistent state as core events, and the seq to continue the feed from")
async def state(request: Request, p: Sched):
    ctl = ctl_of(request)
    out = feed.full_state(ctl)
    out["control_seq"] = ctl.next_control - 1
    return json_response(out)


@hot
@router.get("/events", summary="Events with seq > after, in order (long-poll up to `wait` seconds)",
            responses=documented(410))
async def events(request: Request, p: Sched, after: Cursor = 0,
                 wait: float = Query(0.0, ge=0, le=MAX_WAIT_S), limit: int = Query(1000, ge=1, le=10_000)):
    ctl = ctl_of(request)
    body, _ = await long_poll(ctl.events_signal, wait, lambda: feed.read_events(ctl, after, limit),
                              lambda r: r[1] == 0)
    return raw_json(body)


@hot
@router.post("/decisions", summary="Apply decisions (idempotent by id); with `after`, also the feed after it",
             responses=documented(413))
async def post_decisions(body: DecisionsRequest, request: Request, p: Sched,
                         after: Annotated[int | None, Query(ge=0, le=MAX_ID, description=(
                             "Answer with the feed page after this seq too (`feed`, as GET /v1/sched/events "
                             "answers with wait=0), or, when it was pruned, why (`feed_gone`)"))] = None,
                         limit: int = Query(1000, ge=1, le=10_000)):
    ctl = ctl_of(request)
    results = decisions.apply(ctl, body.decisions) if body.decisions else []
    if body.rounds:
        rounds = [Round(r.ts, r.duration_s, r.decisions) for r in body.rounds]
        ctl.sched_watch.add_rounds(rounds)
        if ctl.metrics is not None:
            ctl.metrics.rounds(rounds)
    answer = dumps({"results": results})
    if after is None:
        return raw_json(answer)
    # The decisions are committed whatever the feed says: a pruned cursor is told, not refused.
    try:
        page, _ = feed.read_events(ctl, after, limit)
    except Gone as exc:
        return raw_json(f'{answer[:-1]},"feed_gone":{dumps(str(exc))}}}')
    return raw_json(f'{answer[:-1]},"feed":{page}}}')


@router.get("/control", summary="Scheduler control commands (recording) with seq > after (long-poll)")
async def control(request: Request, p: Sched, after: Cursor = 0,
                  wait: float = Query(0.0, ge=0, le=MAX_WAIT_S), limit: int = Query(100, ge=1, le=1000)):
    ctl = ctl_of(request)
    out = await long_poll(ctl.control_signal, wait, lambda: feed.read_control(ctl, after, limit),
                          lambda r: not r["commands"])
    return json_response(out)
