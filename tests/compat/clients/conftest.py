"""One live site per test module (see clients_site.py): the clients run in it as they would at an LSF or
Slurm site. Clients that run inside the test process (dask-jobqueue, submitit) start ``bsub``/``sbatch``
with this process's environment and directory, so the site's are this process's for the module."""

from __future__ import annotations

import os

import pytest
from clients_site import Site


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    s = Site(tmp_path_factory.mktemp("site"))
    try:
        s.start()
    except BaseException:
        s.stop()
        raise
    saved, cwd = dict(os.environ), os.getcwd()
    os.environ.clear()
    os.environ.update(s.env)
    os.chdir(s.work)  # where a user submits from: the jobs' default output files land there
    try:
        yield s
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)
        s.stop()
