"""dask-jobqueue's LSFCluster and SLURMCluster, unchanged, on XCE through bsub/bkill and sbatch/scancel:
two workers start as batch jobs and join, a computation runs on them, scaling to zero ends the jobs."""

from __future__ import annotations

import operator
import sys

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

from distributed import Client

from xce.testing.wait import wait_for

WAIT_S = 60
#: Small workers: one process, one thread, no nanny, the test process's Python on the loopback.
SMALL = dict(cores=1, processes=1, memory="1GB", interface="lo", python=sys.executable, nanny=False,
             worker_extra_args=["--no-dashboard"], scheduler_options={"dashboard_address": None}, death_timeout=20)


def _scale_compute_and_end(site, cluster, name: str) -> None:
    with Client(cluster, timeout=WAIT_S) as client:
        cluster.scale(2)
        try:
            client.wait_for_workers(2, timeout=WAIT_S)
        except TimeoutError:
            raise AssertionError(f"2 workers did not join: jobs {cluster.pending_jobs}/{cluster.running_jobs}; "
                                 f"XCE: {[(j['jobid'], j['state']) for j in site.jobs()]}\n{site.logs()}") from None
        jobids = set(cluster.workers)  # dask's names -> job objects; their job_id is what bsub/sbatch printed
        ids = {str(cluster.workers[w].job_id) for w in jobids}
        assert len(ids) == 2 and all(i.isdigit() for i in ids)
        mine = {str(j["jobid"]): j for j in site.jobs() if str(j["jobid"]) in ids}
        assert set(mine) == ids and {j["state"] for j in mine.values()} == {"RUN"}
        assert all(j["name"].startswith(name) for j in mine.values())
        # a function the workers can import (this test module is not importable in a job)
        futures = client.map(operator.mul, range(20), range(20))
        assert sum(f.result(timeout=WAIT_S) for f in futures) == sum(i * i for i in range(20))
        hosts = {w["host"] for w in client.scheduler_info()["workers"].values()}
        assert hosts == {"127.0.0.1"}
        cluster.scale(0)
        wait_for(lambda: not client.scheduler_info()["workers"], WAIT_S, "the workers to leave")
    ended = wait_for(lambda: all(j["state"] in ("DONE", "EXIT") for j in site.jobs() if str(j["jobid"]) in ids)
                     and site.jobs(), WAIT_S, lambda: f"jobs {ids} to end: {site.jobs()}")
    assert {str(j["jobid"]) for j in ended} >= ids


def test_lsf_cluster_scales_to_two_workers_computes_and_ends_its_jobs(site):
    from dask_jobqueue import LSFCluster

    # dask sizes -M from LSF_UNIT_FOR_LIMITS in $LSF_ENVDIR/lsf.conf, which `xce compat lsf-conf` wrote
    with LSFCluster(job_name="dask-lsf", walltime="00:05", local_directory=str(site.work), **SMALL) as cluster:
        assert "#BSUB -M 1000000" in cluster.job_script()  # 1 GB in KB, the unit lsf.conf gives
        _scale_compute_and_end(site, cluster, "dask-lsf")


def test_slurm_cluster_scales_to_two_workers_computes_and_ends_its_jobs(site):
    from dask_jobqueue import SLURMCluster

    with SLURMCluster(job_name="dask-slurm", walltime="00:05:00", local_directory=str(site.work), **SMALL) as cluster:
        assert "#SBATCH --mem=954M" in cluster.job_script()
        _scale_compute_and_end(site, cluster, "dask-slurm")
