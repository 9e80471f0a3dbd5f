"""Toil: a three-job workflow (a root job whose two children run as jobs of their own, their results
added by a follow-on) with ``--batchSystem slurm`` (sbatch, squeue, sacct, scontrol) or ``lsf`` (bsub,
bjobs -json, bkill), the job store on disk, the result returned to the leader."""

import sys
from pathlib import Path

from _steps import main
from toil.common import Toil
from toil.job import Job

SCHED = sys.argv[1]


def square(job, x):
    return x * x


def add(job, a, b):
    return a + b


def root(job):
    a = job.addChildJobFn(square, 3, cores=1, memory="100M", disk="10M")
    b = job.addChildJobFn(square, 4, cores=1, memory="100M", disk="10M")
    return job.addFollowOnJobFn(add, a.rv(), b.rv(), cores=1, memory="100M", disk="10M").rv()


def body(s):
    options = Job.Runner.getDefaultOptions(str(Path("jobstore").absolute()))
    options.batchSystem = SCHED
    options.logLevel = "INFO"
    options.clean = "always"
    options.workDir = str(Path("toilwork").absolute())
    Path(options.workDir).mkdir()
    options.statePollingWait = 2
    with Toil(options) as toil:
        result = toil.start(Job.wrapJobFn(root, cores=1, memory="100M", disk="10M"))
    s.check("result", result == 25, f"workflow returned {result!r}")


if __name__ == "__main__":  # Toil's workers import this module to find the job functions
    main(body)
