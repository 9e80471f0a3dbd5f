"""XCE's fair share as Slurm's association tree: what ``sshare`` lists and ``sprio``'s FAIRSHARE.

XCE keeps fair share per queue (a queue whose ``job_pick_plugin`` is ``fairshare``), among its users
or its projects (``fairshare_by``): ``GET /v1/queues/{name}/shares``. Each such queue is an account
under ``root``; its owners are its users (rows with a User) or, by project, sub-accounts. The
factor is XCE's ``2 ** (-U/S)``, Slurm's classic fair-share formula with U the owner's part of the
queue's decayed usage (EffectvUsage) and S its part of the shares (NormShares)."""

from __future__ import annotations


def fair_queues(c) -> list[dict]:
    from xce.compat.slurm import _api

    return [q for q in _api.request(c, "GET", "/v1/queues")["queues"] if q.get("picker") == "fairshare"]


def standing(c, queue: str) -> dict:
    """The queue's ``shares`` view: ``by``, ``usage`` and its ``owners`` (name, shares, share,
    usage, usage_share, factor)."""
    from xce.compat.slurm import _api

    return _api.request(c, "GET", f"/v1/queues/{queue}/shares")
