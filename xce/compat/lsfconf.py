"""The LSF configuration files that LSF clients open themselves, written from XCE's real settings.

Why files at all: some clients do not ask a command, they read LSF's files. dask-jobqueue reads
``LSF_UNIT_FOR_LIMITS`` from ``$LSF_ENVDIR/lsf.conf`` to size ``-M``; the snakemake LSF plugin reads
``DEFAULT_QUEUE`` from ``$LSF_CONFDIR/lsbatch/CLUSTER/configdir/lsb.params`` and scans
``$LSB_SHAREDIR/CLUSTER/logdir/lsb.events`` for finished jobs (XCE keeps finished jobs listable by
``bjobs -a``, so that file stays empty). The cluster's name and default queue come from the
controller, so the files say what the cluster really does; the memory unit is the one the LSF
front-ends use (``XCE_LSF_UNIT_FOR_LIMITS``, default KB, as LSF's own default). Without a directory
they go where the LSF front-ends look by default, so ``badmin showconf mbd`` names them.
"""

from __future__ import annotations

import os


def unit_for_limits() -> str:
    """The unit the LSF front-ends apply (:func:`xce.compat.lsf._conf.unit_for_limits`: the files
    cannot disagree with ``bsub`` and ``badmin``); ValueError naming the bad setting."""
    from xce.compat.lsf._args import Failed
    from xce.compat.lsf._conf import unit_for_limits as lsf_unit

    try:
        return lsf_unit()
    except Failed as exc:
        raise ValueError(str(exc)) from None


def layout(base: str | None, cluster: str) -> dict[str, str]:
    """Where each file and directory goes: under ``base`` in LSF's own split of ``conf`` and ``work``;
    without ``base``, where the LSF front-ends look when nothing says otherwise
    (:func:`xce.compat.lsf._conf.directories`: ``$LSF_ENVDIR``..., else ``<state dir>/lsf``)."""
    if base is None:
        from xce.compat.lsf._conf import directories

        where = dict(directories(cluster))
    else:
        conf = os.path.join(base, "conf")
        where = {"LSF_ENVDIR": conf, "LSF_CONFDIR": conf, "LSB_CONFDIR": os.path.join(conf, "lsbatch"),
                 "LSB_SHAREDIR": os.path.join(base, "work")}
    where["lsf.conf"] = os.path.join(where["LSF_ENVDIR"], "lsf.conf")
    # where clients open it: $LSF_CONFDIR/lsbatch (the snakemake plugin), whatever LSB_CONFDIR says
    where["lsb.params"] = os.path.join(where["LSF_CONFDIR"], "lsbatch", cluster, "configdir", "lsb.params")
    where["lsb.events"] = os.path.join(where["LSB_SHAREDIR"], cluster, "logdir", "lsb.events")
    return where


def render(cluster: str, default_queue: str, unit: str, where: dict[str, str]) -> dict[str, str]:
    """Path -> content of each file."""
    head = f"# Written by `xce compat lsf-conf` for the XCE cluster {cluster}; written again, not edited.\n"
    lsf_conf = (head + f"LSF_UNIT_FOR_LIMITS={unit}\n"
                + "".join(f"{k}={where[k]}\n" for k in ("LSF_ENVDIR", "LSF_CONFDIR", "LSB_CONFDIR", "LSB_SHAREDIR")))
    params = head + f"Begin Parameters\nDEFAULT_QUEUE = {default_queue}\nEnd Parameters\n"
    return {where["lsf.conf"]: lsf_conf, where["lsb.params"]: params, where["lsb.events"]: ""}


def cluster_settings(client) -> tuple[str, str]:
    """The cluster's name and default queue, from the controller (``/v1/whoami``, ``/v1/queues``)."""
    name = client.get("/v1/whoami").get("cluster") or "xce"
    queues = client.get("/v1/queues").get("queues", [])
    default = next((q["name"] for q in queues if q.get("default")), queues[0]["name"] if queues else "normal")
    return name, default


def write(base: str | None, cluster: str, default_queue: str, unit: str) -> dict[str, str]:
    """Write the files (see :func:`layout`; an existing ``lsb.events`` is kept: it is an append-only
    log in LSF); returns where they went. OSError when a directory cannot be made."""
    where = layout(os.path.abspath(base) if base else None, cluster)
    for path, text in render(cluster, default_queue, unit, where).items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if path == where["lsb.events"] and os.path.exists(path):
            continue
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    return where
