"""LSF's and Slurm's job variables, from the job's placement and submission."""

from __future__ import annotations

from xce.worker.jobvars import MANAGED, job_vars, per_node

JOB = {"jobid": 12, "user": "ann", "queue": "normal", "project": "cfd", "tasks": 4, "name": "solve",
       "placement": [["h1", 2], ["h2", 2]], "cwd": "/home/ann/run", "command": ["/bin/sh", "-c", "x"],
       "options": {"submit_host": "login1", "submit_dir": "/home/ann"}, "array_id": None, "array_index": None}


def test_a_two_host_four_task_job_on_its_second_host():
    v = job_vars(JOB, host="h2", uid=1000, families=["lsf", "slurm"])
    assert v["LSB_JOBID"] == "12" and v["LSB_JOBINDEX"] == "0"
    assert v["LSB_HOSTS"] == "h1 h1 h2 h2" and v["LSB_MCPU_HOSTS"] == "h1 2 h2 2"
    assert v["LSB_DJOB_NUMPROC"] == "4" and v["LSB_QUEUE"] == "normal" and v["LSB_JOBNAME"] == "solve"
    assert v["LS_SUBCWD"] == "/home/ann" and v["XCE_SUBMIT_DIR"] == "/home/ann" and v["XCE_SUBMIT_HOST"] == "login1"
    assert v["SLURM_JOB_ID"] == v["SLURM_JOBID"] == "12" and v["SLURM_NTASKS"] == "4"
    assert v["SLURM_JOB_NUM_NODES"] == "2" and v["SLURM_JOB_NODELIST"] == "h1,h2"
    assert v["SLURM_TASKS_PER_NODE"] == "2(x2)" and v["SLURM_CPUS_ON_NODE"] == "2"
    assert v["SLURMD_NODENAME"] == "h2" and v["SLURM_NODEID"] == "1"
    assert v["SLURM_JOB_PARTITION"] == "normal" and v["SLURM_SUBMIT_DIR"] == "/home/ann"
    assert v["SLURM_JOB_UID"] == "1000" and v["SLURM_JOB_USER"] == "ann"
    assert "SLURM_ARRAY_TASK_ID" not in v and "XCE_ARRAY_JOBID" not in v


def test_cpus_per_task_divide_the_slots_into_tasks():
    job = dict(JOB, tasks=8, placement=[["h1", 4], ["h2", 4]], options={"cpus_per_task": 2})
    v = job_vars(job, host="h1", uid=1, families=["slurm"])
    assert (v["SLURM_NTASKS"], v["SLURM_CPUS_PER_TASK"], v["SLURM_CPUS_ON_NODE"]) == ("4", "2", "4")
    assert v["SLURM_TASKS_PER_NODE"] == "2(x2)" and v["SLURM_JOB_CPUS_PER_NODE"] == "4(x2)"


def test_an_array_element():
    job = dict(JOB, jobid=23, array_id=21, array_index=5, array=[1, 5, 3], placement=[["h1", 1]], tasks=1)
    v = job_vars(job, host="h1", uid=1, families=["lsf", "slurm"])
    assert (v["LSB_JOBID"], v["LSB_JOBINDEX"]) == ("21", "5")
    assert (v["SLURM_JOB_ID"], v["SLURM_ARRAY_JOB_ID"], v["SLURM_ARRAY_TASK_ID"]) == ("23", "21", "5")
    assert (v["SLURM_ARRAY_TASK_MIN"], v["SLURM_ARRAY_TASK_MAX"], v["SLURM_ARRAY_TASK_COUNT"]) == ("1", "5", "3")
    assert v["XCE_ARRAY_JOBID"] == "21"


def test_a_task_of_xce_launch_is_a_slurm_task():
    v = job_vars(JOB, host="h2", uid=1, families=["slurm"], task=(3, 1))
    assert (v["SLURM_PROCID"], v["SLURM_LOCALID"], v["SLURM_NODEID"]) == ("3", "1", "1")


def test_the_site_chooses_the_families_and_every_name_is_managed():
    assert not any(k.startswith(("LSB_", "SLURM")) for k in job_vars(JOB, host="h1", uid=1, families=[]))
    assert not any(k.startswith("SLURM") for k in job_vars(JOB, host="h1", uid=1, families=["lsf"]))
    everything = job_vars(dict(JOB, array_id=12, array_index=1, array=[1, 1, 1]), host="h1", uid=1,
                          families=["lsf", "slurm"])
    assert set(everything) <= MANAGED


def test_counts_per_node_are_compressed_as_slurm_writes_them():
    assert per_node([2, 2, 1]) == "2(x2),1"
    assert per_node([1, 3, 3, 3]) == "1,3(x3)"
    assert per_node([4]) == "4"


def test_a_gpu_jobs_devices_are_named_as_lsf_and_slurm_name_them():
    from xce.worker.jobvars import gpu_vars

    batch = gpu_vars(["1", "3"], families=["lsf", "slurm"])
    assert batch == {"CUDA_VISIBLE_DEVICES": "1,3", "CUDA_DEVICE_ORDER": "PCI_BUS_ID", "GPU_DEVICE_ORDINAL": "1,3",
                     "SLURM_JOB_GPUS": "1,3"}
    assert gpu_vars(["1", "3"], families=["slurm"], step=True)["SLURM_STEP_GPUS"] == "1,3"
    assert gpu_vars(["0"], families=["lsf"]) == {"CUDA_VISIBLE_DEVICES": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    # Never copied from the submitting shell: each is set from the job's own devices, or not at all.
    assert set(batch) <= MANAGED and "SLURM_STEP_GPUS" in MANAGED
