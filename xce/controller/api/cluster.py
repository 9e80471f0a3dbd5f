"""Read-only views of the cluster for people: hosts, load, queues, projects, and who you are."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request

from xce.controller.api.fastlane import hot
from xce.controller.api.responses import COMMON, ctl_of, documented, json_response
from xce.controller.auth.security import any_role, people
from xce.controller.auth.tokens import Principal
from xce.controller.errors import NotFound
from xce.controller.web import views

router = APIRouter(prefix="/v1", tags=["cluster"], responses=COMMON)
Caller = Annotated[Principal, Depends(people)]


@router.get("/whoami", summary="The role and name a token speaks for")
async def whoami(request: Request, p: Annotated[Principal, Depends(any_role)]):
    ctl = ctl_of(request)
    return json_response({"role": p.role, "name": p.name, "cluster": ctl.config.cluster_name})


@router.get("/hosts", summary="Hosts: status, static resources, slots in use")
async def hosts(request: Request, p: Caller):
    ctl = ctl_of(request)
    used = views.slot_use(ctl)
    return json_response({"hosts": [views.host_view(ctl, ctl.hosts[n], used) for n in sorted(ctl.hosts)]})


@router.get("/hosts/{name}", summary="One host", responses=documented(404))
async def host(name: str, request: Request, p: Caller):
    ctl = ctl_of(request)
    if name not in ctl.hosts:
        raise NotFound(f"host {name} is not registered")
    return json_response(views.host_view(ctl, ctl.hosts[name], views.slot_use(ctl)))


@router.get("/load", summary="Load indices each host last reported")
async def load(request: Request, p: Caller):
    ctl = ctl_of(request)
    return json_response({"hosts": [{"name": n, "status": ctl.hosts[n].status, "last_seen": ctl.hosts[n].last_seen_ns,
                                     "load": dict(sorted(ctl.hosts[n].load.items()))} for n in sorted(ctl.hosts)]})


@hot  # what `xce queues`, dashboards and scripts waiting for a queue to drain poll
@router.get("/queues", summary="Queues with their policy and job counts")
async def queues(request: Request, p: Caller):
    ctl = ctl_of(request)
    order = sorted(ctl.config.queues, key=lambda q: (-ctl.config.queues[q].priority, q))
    return json_response({"queues": [views.queue_view(ctl, q) for q in order]})


@router.get("/projects", summary="Projects")
async def projects(request: Request, p: Caller):
    ctl = ctl_of(request)
    return json_response({"projects": [{"name": n, "priority": pr.priority, "description": pr.description}
                                       for n, pr in sorted(ctl.config.projects.items())]})
