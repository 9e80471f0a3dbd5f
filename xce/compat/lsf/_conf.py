"""What LSF's configuration would say on this cluster, one value per setting for every program.

``LSF_UNIT_FOR_LIMITS`` (the unit of a bare ``bsub -M N`` and ``rusage[mem=N]``) is read by bsub
and reported by ``badmin showconf mbd``, ``bparams -a`` and the files ``xce compat`` writes: all
from :func:`unit_for_limits`, so they cannot disagree. It is ``$XCE_LSF_UNIT_FOR_LIMITS``, else
``$LSF_UNIT_FOR_LIMITS`` (what a site moving from LSF already sets), else KB (LSF's default).
"""

from __future__ import annotations

import os

from xce.compat.lsf._args import Failed

UNITS = ("KB", "MB", "GB", "TB", "PB", "EB")
DEFAULT_UNIT = "KB"


def unit_for_limits() -> str:
    text = (os.environ.get("XCE_LSF_UNIT_FOR_LIMITS") or os.environ.get("LSF_UNIT_FOR_LIMITS")
            or DEFAULT_UNIT).strip().upper()
    if text not in UNITS:
        raise Failed(f"LSF_UNIT_FOR_LIMITS={text}: not one of {', '.join(UNITS)} (set XCE_LSF_UNIT_FOR_LIMITS)")
    return text


def directories(cluster: str | None = None) -> dict[str, str]:
    """Where the LSF files clients open live: ``$LSF_ENVDIR`` (``lsf.conf``), ``$LSF_CONFDIR``
    (``lsbatch/CLUSTER/configdir/lsb.params``), ``$LSB_SHAREDIR``; by default one directory
    ``lsf`` beside the front-ends' personal state (``$XCE_STATE_DIR``, ``~/.xce``). The same for
    every cluster name (``cluster`` is accepted for the callers that know it)."""
    base = os.path.join(os.environ.get("XCE_STATE_DIR") or os.path.expanduser("~/.xce"), "lsf")
    envdir = os.environ.get("LSF_ENVDIR") or os.path.join(base, "conf")
    return {"LSF_ENVDIR": envdir, "LSF_CONFDIR": os.environ.get("LSF_CONFDIR") or envdir,
            "LSB_SHAREDIR": os.environ.get("LSB_SHAREDIR") or os.path.join(base, "work"),
            "LSB_CONFDIR": os.environ.get("LSB_CONFDIR")
            or os.path.join(os.environ.get("LSF_CONFDIR") or envdir, "lsbatch")}


def settings(default_queue: str) -> list[tuple[str, str]]:
    """The ``KEY = VALUE`` pairs of ``badmin showconf mbd`` and ``bparams -a``."""
    dirs = directories()
    return [("DEFAULT_QUEUE", default_queue), ("LSB_CONFDIR", dirs["LSB_CONFDIR"]),
            ("LSB_SHAREDIR", dirs["LSB_SHAREDIR"]), ("LSF_CONFDIR", dirs["LSF_CONFDIR"]),
            ("LSF_ENVDIR", dirs["LSF_ENVDIR"]), ("LSF_UNIT_FOR_LIMITS", unit_for_limits()),
            ("RESOURCE_RESERVE_PER_TASK", "Y")]
