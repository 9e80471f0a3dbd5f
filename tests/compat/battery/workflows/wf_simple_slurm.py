"""simple_slurm: a job built with its ``Slurm`` class (``#SBATCH --key  value`` lines, a here-document
to ``sbatch``), followed with its squeue wrapper (a quoted CSV ``-o`` format) until it leaves the queue,
its output read, its accounting read with its sacct wrapper; a second job cancelled with its scancel
wrapper."""

import datetime
from pathlib import Path

from _steps import main, wait_until
from simple_slurm import Slurm
from simple_slurm.scancel import SlurmScancelWrapper
from simple_slurm.squeue import SlurmSqueueWrapper


def queued(sq, jid):
    sq.update_squeue()
    return sq.jobs.get(jid)


def body(s):
    sq = SlurmSqueueWrapper()
    job = Slurm(job_name="simple", output=f"simple-{Slurm.JOB_ID}.out", cpus_per_task=1,
                time=datetime.timedelta(minutes=5))
    jid = job.sbatch("echo simple-ok > result.txt; sleep 3")
    s.check("submit", isinstance(jid, int) and jid > 0, f"job id {jid!r}")
    seen = wait_until(lambda: queued(sq, jid), 30, 0.5)
    s.check("listed by squeue", bool(seen) and seen.get("ST") in ("PD", "R"), f"squeue rows {sq.jobs}")
    gone = wait_until(lambda: queued(sq, jid) is None, 90)
    s.check("left the queue", gone, f"squeue rows {sq.jobs}")
    s.check("result", Path("result.txt").read_text().strip() == "simple-ok", "result.txt missing or wrong")
    try:
        from simple_slurm.sacct import SlurmSacctWrapper
    except ImportError:
        SlurmSacctWrapper = None
    if SlurmSacctWrapper is not None:
        acct = SlurmSacctWrapper()(str(jid))
        s.check("sacct", acct["State"] == ["COMPLETED"], f"sacct rows {acct.sacct}")

    long = Slurm(job_name="long", time=datetime.timedelta(minutes=5)).sbatch("sleep 300")
    running = wait_until(lambda: (q := queued(sq, long)) and q.get("ST") == "R", 60)
    s.check("running", bool(running), f"squeue rows {sq.jobs}")
    SlurmScancelWrapper().cancel_job(str(long))
    gone = wait_until(lambda: queued(sq, long) is None, 60)
    s.check("cancelled", gone, f"squeue rows {sq.jobs}")


main(body)
