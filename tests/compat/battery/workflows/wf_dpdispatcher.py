"""DPDispatcher (DeepModeling): a submission of two tasks through its ``Slurm`` or ``LSF`` machine with a
LocalContext (sbatch/squeue/scancel, bsub/bjobs/bkill), outputs copied back; a second submission
killed while it runs."""

import sys
from pathlib import Path

from _steps import main, wait_until
from dpdispatcher import Machine, Resources, Submission, Task
from dpdispatcher.utils.job_status import JobStatus

SCHED = sys.argv[1]


def submission(tasks, remote):
    machine = Machine.load_from_dict({"batch_type": {"slurm": "Slurm", "lsf": "LSF"}[SCHED],
                                      "context_type": "LocalContext", "local_root": str(Path.cwd()),
                                      "remote_root": str(Path.cwd() / remote)})
    resources = Resources.load_from_dict({"number_node": 1, "cpu_per_node": 1, "gpu_per_node": 0,
                                          "queue_name": "", "group_size": 1})
    return Submission(work_base="work", machine=machine, resources=resources, task_list=tasks)


def body(s):
    for i in (1, 2):
        Path(f"work/t{i}").mkdir(parents=True)
        Path(f"work/t{i}/in.txt").write_text(f"{i}\n")
    tasks = [Task(command="echo $(( $(cat in.txt) * 10 )) > out.txt", task_work_path=f"t{i}/",
                  forward_files=["in.txt"], backward_files=["out.txt"]) for i in (1, 2)]
    sub = submission(tasks, "remote")
    sub.run_submission(check_interval=2)
    s.check("outputs back", [Path(f"work/t{i}/out.txt").read_text().strip() for i in (1, 2)] == ["10", "20"],
            "out.txt missing or wrong")

    Path("work/t3").mkdir()
    long = submission([Task(command="sleep 300", task_work_path="t3/", forward_files=[], backward_files=[])],
                      "remote2")
    long.run_submission(exit_on_submit=True)
    (job,) = long.belonging_jobs
    running = wait_until(lambda: long.machine.check_status(job) == JobStatus.running, 60)
    s.check("running", running, f"status {long.machine.check_status(job)}")
    long.machine.kill(job)
    st = wait_until(lambda: (x := long.machine.check_status(job)) in (JobStatus.terminated, JobStatus.finished)
                    and x, 60)
    s.check("killed", st == JobStatus.terminated, f"status {long.machine.check_status(job)}")


main(body)
