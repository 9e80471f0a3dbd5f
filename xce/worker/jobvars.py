"""The variables a job finds set, as LSF and Slurm set them, so that scripts written for those run here.

Every value comes from the job's real placement (``[[host, slots], ...]``, head host first) and its
submission, never from the submitter's environment: a stale ``SLURM_JOB_ID`` copied from the shell
of an enclosing job would otherwise name the wrong job. So every name this module may set is first
removed from the job's environment (:data:`MANAGED`), then the ones that apply are set.

A task started by ``xce launch`` is a Slurm task (``srun``): it gets ``SLURM_PROCID`` (its rank),
``SLURM_LOCALID`` (its rank on its host) and ``SLURM_NODEID`` (its host's place in the job's host
list); the job's main process is task 0 on node 0, as Slurm's batch step is.
"""

from __future__ import annotations

from typing import Any

from xce.jobfiles import job_name

#: Every variable the worker sets in some job (removed from the submitted environment first: a value
#: copied from the shell of an enclosing job, or naming another host's devices, would be wrong here).
MANAGED = frozenset({
    "XCE_JOBID", "XCE_HOSTS", "XCE_QUEUE", "XCE_TASKS", "XCE_EXEC_HOST", "XCE_LAUNCH_KEY", "XCE_TASK_SERVERS",
    "XCE_ARRAY_INDEX", "XCE_TASK_ID", "XCE_HOST", "XCE_NTASKS", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
    "XCE_ARRAY_JOBID", "XCE_SUBMIT_DIR", "XCE_SUBMIT_HOST",
    "LSB_JOBID", "LSB_JOBINDEX", "LSB_HOSTS", "LSB_MCPU_HOSTS", "LSB_DJOB_NUMPROC", "LSB_QUEUE", "LSB_JOBNAME",
    "LS_SUBCWD", "LSB_SUB_HOST", "LSB_JOBINDEX_END", "LSB_JOBINDEX_STEP",
    "SLURM_JOB_ID", "SLURM_JOBID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT", "SLURM_JOB_NAME", "SLURM_NTASKS", "SLURM_NPROCS",
    "SLURM_CPUS_ON_NODE", "SLURM_CPUS_PER_TASK", "SLURM_JOB_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NODELIST",
    "SLURM_NODELIST", "SLURM_SUBMIT_DIR", "SLURM_SUBMIT_HOST", "SLURM_JOB_PARTITION", "SLURMD_NODENAME",
    "SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE",
    "SLURM_JOB_USER", "SLURM_JOB_UID", "SLURM_JOB_ACCOUNT", "SLURM_STEP_ID", "SLURM_TASK_PID", "SLURM_OPEN_MODE",
    "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "GPU_DEVICE_ORDINAL",
})


def gpu_vars(gpus: list[str], *, families: list[str], step: bool = False) -> dict[str, str]:
    """The variables naming the devices a job holds on this host (its own, never another job's).

    ``CUDA_VISIBLE_DEVICES`` is what CUDA reads and what LSF sets (LSF has no other name for them); the
    indexes are NVML's, which follow PCI order, so ``CUDA_DEVICE_ORDER`` says so. Slurm also sets
    ``GPU_DEVICE_ORDINAL`` (OpenCL and ROCm read it), ``SLURM_JOB_GPUS`` in the batch script, and
    ``SLURM_STEP_GPUS`` in the tasks of a step (``step``: a task started by ``srun``/``xce launch``).
    """
    devices = ",".join(gpus)
    out = {"CUDA_VISIBLE_DEVICES": devices, "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    if "slurm" in families:
        out.update({"GPU_DEVICE_ORDINAL": devices, "SLURM_JOB_GPUS": devices})
        if step:
            out["SLURM_STEP_GPUS"] = devices
    return out


def per_node(counts: list[int]) -> str:
    """Slurm's compressed count list: ``[2, 2, 1]`` is ``2(x2),1``."""
    out: list[str] = []
    i = 0
    while i < len(counts):
        j = i
        while j < len(counts) and counts[j] == counts[i]:
            j += 1
        out.append(f"{counts[i]}(x{j - i})" if j - i > 1 else str(counts[i]))
        i = j
    return ",".join(out)


def _hosts(job: dict[str, Any], host: str) -> list[tuple[str, int]]:
    """The job's hosts and the slots of each, merged and in placement order."""
    merged: dict[str, int] = {}
    for h, n in job.get("placement") or [[host, job.get("tasks", 1)]]:
        merged[str(h)] = merged.get(str(h), 0) + int(n)
    return list(merged.items())


def job_vars(job: dict[str, Any], *, host: str, uid: int, families: list[str], host_slots: int | None = None,
             task: tuple[int, int] = (0, 0)) -> dict[str, str]:
    """The variables of ``job`` on ``host`` for its process of rank ``task`` = (global, local)."""
    hosts = _hosts(job, host)
    names = [h for h, _ in hosts]
    slots = {h: n for h, n in hosts}
    options = job.get("options") or {}
    cpt = int(options.get("cpus_per_task") or 1)
    total = int(job.get("tasks", 1))
    jobid = int(job["jobid"])
    array_id, index = job.get("array_id"), job.get("array_index")
    cwd = str(job.get("cwd") or "")
    submit_dir = str(options.get("submit_dir") or cwd)
    submit_host = str(options.get("submit_host") or "")
    name = job_name(job.get("name"), job.get("command"))
    here = slots.get(host, total)
    out = {"XCE_SUBMIT_DIR": submit_dir, "XCE_SUBMIT_HOST": submit_host}
    if array_id is not None:
        out["XCE_ARRAY_JOBID"] = str(array_id)
    if "lsf" in families:
        out.update({
            "LSB_JOBID": str(array_id if array_id is not None else jobid),
            "LSB_JOBINDEX": str(index if index is not None else 0),
            "LSB_HOSTS": " ".join(h for h, n in hosts for _ in range(n)),
            "LSB_MCPU_HOSTS": " ".join(f"{h} {n}" for h, n in hosts),
            "LSB_DJOB_NUMPROC": str(total), "LSB_QUEUE": str(job.get("queue") or ""),
            "LSB_JOBNAME": str(job.get("name") or " ".join(job.get("command") or [])), "LS_SUBCWD": submit_dir,
            "LSB_SUB_HOST": submit_host,
        })
    if "slurm" in families:
        on_node = host_slots if job.get("exclusive") and host_slots else here
        out.update({
            "SLURM_JOB_ID": str(jobid), "SLURM_JOBID": str(jobid), "SLURM_JOB_NAME": str(name),
            "SLURM_NTASKS": str(total // cpt), "SLURM_NPROCS": str(total // cpt),
            "SLURM_CPUS_ON_NODE": str(on_node), "SLURM_CPUS_PER_TASK": str(cpt),
            "SLURM_JOB_NUM_NODES": str(len(names)), "SLURM_NNODES": str(len(names)),
            "SLURM_JOB_NODELIST": ",".join(names), "SLURM_NODELIST": ",".join(names),
            "SLURM_TASKS_PER_NODE": per_node([slots[h] // cpt for h in names]),
            "SLURM_JOB_CPUS_PER_NODE": per_node([slots[h] for h in names]),
            "SLURM_SUBMIT_DIR": submit_dir, "SLURM_SUBMIT_HOST": submit_host,
            "SLURM_JOB_PARTITION": str(job.get("queue") or ""), "SLURM_JOB_ACCOUNT": str(job.get("project") or ""),
            "SLURM_JOB_USER": str(job.get("user") or ""), "SLURM_JOB_UID": str(uid),
            "SLURMD_NODENAME": host, "SLURM_NODEID": str(names.index(host) if host in names else 0),
            "SLURM_PROCID": str(task[0]), "SLURM_LOCALID": str(task[1]),
            # srun's files open as the job's own do: a requeued job that appends keeps its steps' logs too
            "SLURM_OPEN_MODE": str((job.get("options") or {}).get("open_mode") or "append"),
        })
        span = job.get("array")
        if array_id is not None and index is not None:
            out.update({"SLURM_ARRAY_JOB_ID": str(array_id), "SLURM_ARRAY_TASK_ID": str(index)})
            if span:
                out.update({"SLURM_ARRAY_TASK_MIN": str(span[0]), "SLURM_ARRAY_TASK_MAX": str(span[1]),
                            "SLURM_ARRAY_TASK_COUNT": str(span[2])})
    return out
