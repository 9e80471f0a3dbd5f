"""dask-jobqueue's own live-scheduler tests (``-E slurm``, ``-E lsf``), unchanged, against a live XCE
site with the front-ends first on PATH: what its maintainers check on a real Slurm cluster holds on
XCE. The tests come from the installed wheel at run time (suites/run_suites.py, which also lists the
few that need their CI machines and why). snakemake-executor-plugin-slurm's tests/tests.py takes
about 14 minutes (its status polls back off by 10 s a time): ``make client-suites`` runs it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "suites"))

from run_suites import run  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]

#: The env-marked tests of dask-jobqueue 0.9.0 that run here (all but the deselected): for slurm
#: test_basic, test_adaptive, test_worker_name_uses_cluster_name and test_job.py's four live-job tests;
#: for lsf the same four (its own three call an attribute dask-jobqueue removed).
EXPECTED_PASSED = {"dask-jobqueue-slurm": 7, "dask-jobqueue-lsf": 4}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("suite", sorted(EXPECTED_PASSED))
def test_dask_jobqueue_own_live_tests_pass_on_xce(suite):
    res = run(suite, timeout=540)
    assert res["failed"] == 0 and res["rc"] == 0, res["output_tail"]
    assert res["passed"] == EXPECTED_PASSED[suite], res["output_tail"]
