"""pysqa (pyiron's queue adapter): a queue configuration directory as its documentation describes it
(queue.yaml and a Jinja submission template), a job submitted, followed through ``get_status_of_job``
(squeue --format '%A|%u|%t|%.15j|%Z' / bjobs) until it is gone, its output read; a second job deleted."""

import sys
from pathlib import Path

from _steps import main, wait_until
from pysqa import QueueAdapter

SCHED = sys.argv[1]

TEMPLATES = {
    "slurm": """#!/bin/bash
#SBATCH --output=time.out
#SBATCH --job-name={{job_name}}
#SBATCH --chdir={{working_directory}}
#SBATCH --get-user-env=L
#SBATCH --cpus-per-task={{cores}}
{%- if run_time_max %}
#SBATCH --time={{ [1, run_time_max // 60]|max }}
{%- endif %}

{{command}}
""",
    "lsf": """#!/bin/bash
#BSUB -J {{job_name}}
#BSUB -o time.out
#BSUB -n {{cores}}
#BSUB -cwd {{working_directory}}
#BSUB -e error.out
{%- if run_time_max %}
#BSUB -W {{run_time_max}}
{%- endif %}

{{command}}
""",
}


def body(s):
    conf = Path("pysqa-config")
    conf.mkdir()
    (conf / "queue.yaml").write_text(f"queue_type: {SCHED.upper()}\nqueue_primary: xce\nqueues:\n"
                                     f"  xce: {{cores_max: 4, cores_min: 1, run_time_max: 600, script: job.sh}}\n")
    (conf / "job.sh").write_text(TEMPLATES[SCHED])
    qa = QueueAdapter(directory=str(conf))
    wd = Path("job1").absolute()
    wd.mkdir()
    jid = qa.submit_job(queue="xce", job_name="pysqa1", working_directory=str(wd), cores=1,
                        command="echo pysqa-ok > result.txt")
    s.check("submit", isinstance(jid, int) and jid > 0, f"job id {jid!r}")
    gone = wait_until(lambda: qa.get_status_of_job(process_id=jid) is None, 90)
    s.check("ended per status", gone, f"status {qa.get_status_of_job(process_id=jid)}")
    s.check("result", (wd / "result.txt").exists() and (wd / "result.txt").read_text().strip() == "pysqa-ok",
            "result.txt missing or wrong")

    wd2 = Path("job2").absolute()
    wd2.mkdir()
    jid2 = qa.submit_job(queue="xce", job_name="pysqa2", working_directory=str(wd2), cores=1, command="sleep 300")
    running = wait_until(lambda: qa.get_status_of_job(process_id=jid2) == "running", 60)
    s.check("running per status", running, f"status {qa.get_status_of_job(process_id=jid2)}")
    qa.delete_job(process_id=jid2)
    gone = wait_until(lambda: qa.get_status_of_job(process_id=jid2) is None, 60)
    s.check("deleted", gone, f"status {qa.get_status_of_job(process_id=jid2)}")


main(body)
