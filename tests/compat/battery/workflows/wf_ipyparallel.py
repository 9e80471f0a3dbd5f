"""IPython Parallel: a cluster whose controller runs here and whose two engines are one batch job
(its Slurm launcher: sbatch of ``srun ipengine`` with ``--ntasks=2``; its LSF launcher: ``bsub <`` of a
two-element job array), a computation mapped over them, then the engines stopped (scancel, bkill)."""

import os
import subprocess
import sys

import ipyparallel as ipp
from _steps import main, wait_until

SCHED = sys.argv[1]


def job_of_engine():
    import os

    return os.environ.get("SLURM_JOB_ID") or os.environ.get("LSB_JOBID") or ""


def listed() -> str:
    cmd = ["squeue", "-h", "-o", "%i %t"] if SCHED == "slurm" else ["bjobs", "-noheader"]
    return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()


def body(s):
    cluster = ipp.Cluster(engines=SCHED, n=2, log_level=10)
    try:
        cluster.start_cluster_sync()
        rc = cluster.connect_client_sync()
        rc.wait_for_engines(2, timeout=120)
        s.check("engines up", len(rc.ids) == 2, f"engines {rc.ids}")
        squares = rc[:].map_sync(lambda x: x * x, range(8))
        s.check("results", list(squares) == [x * x for x in range(8)], f"map gave {squares}")
        jobs = set(rc[:].apply_sync(job_of_engine))
        s.check("engines ran in batch jobs", all(j.isdigit() for j in jobs), f"job ids {jobs}")
        s.check("listed while running", bool(listed()), "the scheduler lists no job")
        rc.close()
        cluster.stop_engines_sync()
        gone = wait_until(lambda: not listed(), 60)
        s.check("engines' job ended", gone, listed())
    finally:
        cluster.stop_cluster_sync()
        print(os.listdir(cluster.profile_dir) if cluster.profile_dir else "")


main(body)
