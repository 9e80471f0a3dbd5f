"""PSI/J (psij-python): a job that writes a file, a failing job, a cancelled job, through its
``slurm`` or ``lsf`` batch executor (sbatch/squeue -O/scancel, bsub/bjobs -o -json/bkill)."""

import sys
from datetime import timedelta
from pathlib import Path

import psij
from _steps import main
from psij.executors.batch.lsf import LsfExecutorConfig
from psij.executors.batch.slurm import SlurmExecutorConfig

SCHED = sys.argv[1]


def spec(cmd: str, name: str, seconds: int = 120) -> psij.JobSpec:
    out = Path.cwd() / name
    return psij.JobSpec(executable="/bin/sh", arguments=["-c", cmd], directory=Path.cwd(),
                        stdout_path=out.with_suffix(".out"), stderr_path=out.with_suffix(".err"),
                        attributes=psij.JobAttributes(duration=timedelta(seconds=seconds)))


def body(s):
    # The executor's documented configuration: poll every 5 s instead of 30 (a shorter run, the same commands).
    config = {"slurm": SlurmExecutorConfig, "lsf": LsfExecutorConfig}[SCHED](queue_polling_interval=5)
    ex = psij.JobExecutor.get_instance(SCHED, config=config)
    ok = psij.Job(spec("echo psij-ok > result.txt", "ok"))
    ex.submit(ok)
    s.check("submit", bool(ok.native_id), f"no native id: {ok.status}")
    st = ok.wait(timeout=timedelta(seconds=120))
    s.check("complete", st is not None and st.state == psij.JobState.COMPLETED, f"ended as {st}")
    s.check("result", Path("result.txt").read_text().strip() == "psij-ok", "result.txt missing or wrong")

    bad = psij.Job(spec("exit 3", "bad"))
    ex.submit(bad)
    st = bad.wait(timeout=timedelta(seconds=120))
    s.check("failed job seen failed", st is not None and st.state == psij.JobState.FAILED, f"ended as {st}")
    s.check("exit code", st.exit_code == 3, f"exit code {st.exit_code}")

    long = psij.Job(spec("sleep 300", "long"))
    ex.submit(long)
    long.wait(timeout=timedelta(seconds=60), target_states=[psij.JobState.ACTIVE])
    long.cancel()
    st = long.wait(timeout=timedelta(seconds=120))
    s.check("cancel", st is not None and st.state == psij.JobState.CANCELED, f"ended as {st}")


main(body)
