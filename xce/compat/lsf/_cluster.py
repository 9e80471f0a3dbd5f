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
    """``badmin showconf``'s and ``bparams -a``'s text. The directories it names are where clients
    then open ``lsf.conf`` and ``lsb.params``: the files are written there first when they are
    missing or say something else (:func:`ensure_files`), so no client is pointed at nothing."""
    import time

    from xce.compat.lsf._conf import settings
    from xce.formats import lsf_banner

    client = client or connect()
    queue = default_queue(client)
    ensure_files(request(client, "GET", "/v1/whoami").get("cluster") or "xce", queue)
    pairs = settings(queue)
    return "\n".join([f"{title} at {lsf_banner(time.time())}",
                      *(f"    {k} = {v}" for k, v in pairs)]) + "\n"


def ensure_files(cluster: str, queue: str) -> None:
    """The LSF files where the front-ends point (:func:`xce.compat.lsfconf.layout`), written when
    missing or stale; a directory that cannot be written is said on stderr with the fix."""
    import os
    import sys

    from xce.compat import lsfconf
    from xce.compat.lsf._conf import unit_for_limits

    unit = unit_for_limits()
    where = lsfconf.layout(None, cluster)
    wanted = lsfconf.render(cluster, queue, unit, where)

    def current(path: str) -> str | None:
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return None

    if all(current(p) == text or (p == where["lsb.events"] and os.path.exists(p)) for p, text in wanted.items()):
        return
    try:
        lsfconf.write(None, cluster, queue, unit)
    except OSError as exc:
        print(f"warning: cannot write the LSF files clients read under {where['LSF_ENVDIR']}: "
              f"{exc.strerror or exc}; an administrator writes them with `xce compat lsf-conf DIR`",
              file=sys.stderr)
