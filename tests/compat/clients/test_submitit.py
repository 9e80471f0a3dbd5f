"""submitit, unchanged, on XCE through sbatch, sacct, scancel, srun and scontrol: a job's return value
comes back, map_array runs an array, a failing job raises its error, a cancelled job ends cancelled,
and a checkpointable job requeues itself when the warning signal of ``--signal=USR2@S`` comes."""

from __future__ import annotations

import sys
import time

import cloudpickle
import pytest
import submitit

from xce.testing.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# The job unpickles these functions in a fresh interpreter that cannot import this test module.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

WAIT_S = 90


def add(a: int, b: int) -> int:
    return a + b


def square(x: int) -> int:
    return x * x


def fail(message: str) -> None:
    raise ValueError(message)


def sleep(seconds: float) -> str:
    time.sleep(seconds)
    return "slept"


class Resumable(submitit.helpers.Checkpointable):
    """Waits for the warning signal on its first run; resumed from its checkpoint, it returns at once."""

    def __call__(self, resumed: bool = False) -> str:
        if resumed:
            return "resumed after requeue"
        time.sleep(120)
        return "never warned"

    def checkpoint(self, resumed: bool = False) -> submitit.helpers.DelayedSubmission:
        return submitit.helpers.DelayedSubmission(self, resumed=True)


@pytest.fixture
def executor(site, tmp_path):
    ex = submitit.AutoExecutor(folder=str(tmp_path / "submitit-%j"))
    assert ex.cluster == "slurm"  # AutoExecutor found srun on PATH: the front-ends
    ex.update_parameters(timeout_min=5, slurm_mem="200M", cpus_per_task=1, name="submitit-test")
    return ex


def _result(job, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while not job.done(force_check=True):
        assert time.monotonic() < deadline, f"job {job.job_id} not done: state {job.state}"
        time.sleep(0.5)
    return job.result()


def _final_state(job, state: str) -> None:
    """The result file comes before the job's end (as on Slurm); sacct then says how it ended."""
    wait_for(lambda: job.watcher.get_state(job.job_id, mode="force") == state, 30,
             lambda: f"job {job.job_id} to be {state} in sacct (now {job.state})")


def test_a_job_returns_its_value(site, executor):
    job = executor.submit(add, 2, 3)
    assert job.job_id.isdigit()
    assert _result(job) == 5
    _final_state(job, "COMPLETED")


def test_map_array_runs_one_element_per_argument(site, executor):
    jobs = executor.map_array(square, [1, 2, 3])
    assert len({j.job_id.split("_")[0] for j in jobs}) == 1  # one array
    assert [j.job_id.split("_")[1] for j in jobs] == ["0", "1", "2"]
    assert [_result(j) for j in jobs] == [1, 4, 9]


def test_a_failing_job_raises_its_error(site, executor):
    job = executor.submit(fail, "wrong input 42")
    with pytest.raises(submitit.core.utils.FailedJobError) as err:
        _result(job)
    assert "ValueError: wrong input 42" in str(err.value)
    _final_state(job, "FAILED")


def test_a_cancelled_job_ends_cancelled(site, executor):
    job = executor.submit(sleep, 300)
    wait_for(lambda: job.watcher.get_state(job.job_id, mode="force") == "RUNNING", WAIT_S,
             lambda: f"job {job.job_id} to run (now {job.state})")
    job.cancel(check=True)
    wait_for(lambda: job.watcher.get_state(job.job_id, mode="force").startswith("CANCELLED"), WAIT_S,
             lambda: f"job {job.job_id} to be cancelled (now {job.state})")
    xce = next(j for j in site.jobs() if str(j["jobid"]) == job.job_id)
    assert xce["state"] == "EXIT"


def test_a_checkpointable_job_requeues_itself_on_the_warning_signal(site, executor):
    # a 1-minute limit, warned 50 s before: USR2 about 10 s after the start
    executor.update_parameters(timeout_min=1, slurm_signal_delay_s=50)
    job = executor.submit(Resumable())
    assert _result(job, timeout=100) == "resumed after requeue"
    log = job.paths.stderr.read_text() if job.paths.stderr.exists() else ""
    assert "Caught signal SIGUSR2" in log or "USR2" in log, log
