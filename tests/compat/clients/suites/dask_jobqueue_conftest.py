"""Our stand-in for the root conftest.py of dask-jobqueue's repository, which its wheel does not ship
and without which the wheel's own tests (dask_jobqueue/tests) cannot run: the ``-E``/``--env NAME``
choice of a live scheduler, the ``env``/``xfail_env`` markers, distributed's ``loop`` fixture, and the
``Cluster``/``EnvSpecificCluster`` fixtures. Copied next to the extracted tests at run time.

With ``-E slurm`` (or ``lsf``) only the tests marked for that scheduler run, as in dask-jobqueue's CI,
and they submit their workers through whatever ``sbatch``/``bsub`` is first on PATH: here XCE's."""

from __future__ import annotations

import asyncio
import copy
import inspect

import dask
import dask_jobqueue
import dask_jobqueue.config
import distributed.utils_test
import pytest
from dask_jobqueue.local import LocalCluster
from distributed.utils_test import loop, loop_in_thread  # noqa: F401  (fixtures the tests name)

#: The scheduler a test is marked for, and the class that talks to it; ``None`` is no scheduler at all.
CLUSTERS = {
    None: LocalCluster,
    "pbs": dask_jobqueue.PBSCluster,
    "moab": dask_jobqueue.MoabCluster,
    "slurm": dask_jobqueue.SLURMCluster,
    "sge": dask_jobqueue.SGECluster,
    "lsf": dask_jobqueue.LSFCluster,
    "oar": dask_jobqueue.OARCluster,
    "htcondor": dask_jobqueue.HTCondorCluster,
}


def pytest_addoption(parser):
    parser.addoption("-E", "--env", dest="jobqueue_env", metavar="NAME", default=None,
                     help="run the tests marked for the live scheduler NAME (slurm, lsf, ...)")


def pytest_configure(config):
    config.addinivalue_line("markers", "env(NAME): needs the live scheduler NAME (a name or a list)")
    config.addinivalue_line("markers", "xfail_env(MAPPING): a known failure on the named schedulers")
    config.addinivalue_line("markers", "asyncio: a coroutine test, run to completion in a fresh event loop")


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """The few ``@pytest.mark.asyncio`` tests, without making pytest-asyncio a dependency of ours."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj) or pyfuncitem.get_closest_marker("asyncio") is None:
        return None
    names = pyfuncitem._fixtureinfo.argnames
    asyncio.run(pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names}))
    return True


def _marked_envs(item) -> list:
    names: list = []
    for mark in item.iter_markers(name="env"):
        arg = mark.args[0]
        names.extend(arg if isinstance(arg, list) else [arg])
    return names


def pytest_runtest_setup(item):
    chosen = item.config.getoption("jobqueue_env")
    marked = _marked_envs(item)
    if chosen is None:
        runs = not marked or None in marked
    else:
        runs = chosen in marked
    if not runs:
        pytest.skip(f"test requires env in {marked!r}")
    known: dict = {}
    for mark in item.iter_markers(name="xfail_env"):
        known.update(mark.args[0])
    if chosen in known:
        item.add_marker(pytest.mark.xfail(reason=known[chosen]))


@pytest.fixture
def cleanup():
    """distributed's own ``cleanup`` resets dask's config to its import-time copy, which would drop
    the ``jobqueue`` section the clusters read their defaults from: reload that section instead."""
    dask_jobqueue.config.reconfigure()
    yield


def _reset_config_keeping_jobqueue():
    dask.config.config.clear()
    dask.config.config.update(copy.deepcopy(distributed.utils_test.original_config))
    dask_jobqueue.config.reconfigure()


# distributed's gen_cluster/loop helpers call this module-level function; the same reason as above.
distributed.utils_test.reset_config = _reset_config_keeping_jobqueue


def _with_htcondor_disk(cls):
    if cls is dask_jobqueue.HTCondorCluster:
        dask.config.set({"jobqueue.htcondor.disk": "1GB"})  # HTCondor refuses a job without it
    return cls


@pytest.fixture(params=[pytest.param(cls, marks=[pytest.mark.env(name)]) for name, cls in CLUSTERS.items()])
def EnvSpecificCluster(request):
    """The class of the scheduler chosen with -E (LocalCluster without one)."""
    return _with_htcondor_disk(request.param)


@pytest.fixture(params=list(CLUSTERS.values()))
def Cluster(request):
    """Every class in turn, for tests that only build job scripts and need no scheduler."""
    return _with_htcondor_disk(request.param)
