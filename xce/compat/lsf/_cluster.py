"""The cluster as LSF's probes name it: its name (``[cluster] cluster_name``), its master (the
leading controller's host) and its default queue."""

from __future__ import annotations

from xce.compat.lsf._client import connect, request


def identity(client=None) -> dict:
    """``{"cluster", "master", "hosts"}``."""
    client = client or connect()
    who = request(client, "GET", "/v1/whoami")
    status = request(client, "GET", "/v1/status")
    leader = status.get("leader") or status.get("controller") or {}
    return {"cluster": who.get("cluster") or "xce", "master": leader.get("host") or "-",
            "hosts": len(status.get("workers") or [])}


def default_queue(client=None) -> str:
    client = client or connect()
    queues = request(client, "GET", "/v1/queues")["queues"]
    return next((q["name"] for q in queues if q.get("default")), queues[0]["name"] if queues else "normal")


def settings_lines(title: str, client=None) -> str:
    import time

    from xce.compat.lsf._conf import settings
    from xce.formats import lsf_banner

    pairs = settings(default_queue(client))
    return "\n".join([f"{title} at {lsf_banner(time.time())}",
                      *(f"    {k} = {v}" for k, v in pairs)]) + "\n"
