"""A pytest plugin (``-p xce_site_plugin``) that puts a whole third-party test session inside one
live XCE site (../clients_site.py). The clients' own suites call ``sbatch``/``bsub``/``sinfo`` from the
test process with its environment, some already while collecting (dask-jobqueue's ``skipif`` on
``sinfo -o %C``), so the site is up and its environment is the process's before collection starts."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

from clients_site import Site

_state: dict = {}


def _interrupt(signum, frame):
    raise KeyboardInterrupt  # pytest still runs sessionfinish, so a run stopped by its caller stops its site


def pytest_sessionstart(session):
    base = Path(tempfile.mkdtemp(prefix="xce-site-"))
    site = Site(base, workers=2, slots=4)
    _state.update(site=site, base=base, environ=dict(os.environ), cwd=os.getcwd())
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        site.start()
    except BaseException:  # pytest calls sessionfinish only after a sessionstart that returned
        site.stop()
        raise
    os.environ.clear()
    os.environ.update(site.env)


def pytest_sessionfinish(session):
    if "environ" in _state:
        os.environ.clear()
        os.environ.update(_state["environ"])
        os.chdir(_state["cwd"])
    if "site" in _state:
        _state["site"].stop()
        shutil.rmtree(_state["base"], ignore_errors=True)
