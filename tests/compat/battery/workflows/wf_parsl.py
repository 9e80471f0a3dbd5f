"""Parsl: a HighThroughputExecutor whose one block is a batch job (SlurmProvider: sbatch, squeue or
sacct, scancel; LSFProvider: bsub, bjobs, bkill), a few python and bash apps run in it, results back,
then the block cancelled at cleanup."""

import sys

import parsl
from _steps import main, wait_until
from parsl.app.app import bash_app, python_app
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.launchers import SingleNodeLauncher
from parsl.providers import LSFProvider, SlurmProvider

SCHED = sys.argv[1]


@python_app
def square(x):
    return x * x


@bash_app
def hostname(stdout="host.txt"):
    return "echo ran-in-job $SLURM_JOB_ID$LSB_JOBID"


def provider():
    common = dict(nodes_per_block=1, init_blocks=1, min_blocks=0, max_blocks=1, walltime="00:10:00",
                  launcher=SingleNodeLauncher())
    if SCHED == "slurm":
        return SlurmProvider(exclusive=False, **common)
    return LSFProvider(request_by_nodes=False, cores_per_block=1, cores_per_node=1, **common)


def body(s):
    cfg = Config(executors=[HighThroughputExecutor(label="htex", address="127.0.0.1", max_workers_per_node=1,
                                                   cores_per_worker=1, provider=provider())],
                 strategy="none")
    dfk = parsl.load(cfg)
    try:
        futs = [square(i) for i in range(4)]
        s.check("results", [f.result(timeout=180) for f in futs] == [0, 1, 4, 9], "wrong results")
        h = hostname()
        h.result(timeout=60)
        text = open("host.txt").read()
        s.check("ran in a batch job", text.startswith("ran-in-job ") and text.split()[1].isdigit(), repr(text))
        prov = dfk.executors["htex"].provider
        job_ids = list(prov.resources)
        s.check("block submitted", len(job_ids) == 1, f"blocks {job_ids}")
        st = prov.status(job_ids)
        s.check("block running per status", st[0].state.name == "RUNNING", f"status {st}")
    finally:
        dfk.cleanup()
    st = wait_until(lambda: (x := prov.status(job_ids)) and x[0].terminal and x, 60, 2)
    s.check("block ended at cleanup", bool(st), f"status {prov.status(job_ids)}")


main(body)
