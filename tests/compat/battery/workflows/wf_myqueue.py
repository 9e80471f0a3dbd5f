"""myqueue (``mq``): its configuration made by ``mq config --in-place slurm`` from ``sinfo -O CPUs,Memory,Partition``
(for LSF, whose ``mq config`` runs a site-specific ``nodestat``, written by hand from ``lshosts``' host
model as its documentation says), a tree made by ``mq init``; a Python task and a failing one submitted with ``mq submit``, followed
with ``mq ls`` (sbatch/squeue, bsub/bjobs) until done and FAILED; a running task cancelled by ``mq rm``."""

import subprocess
import sys
import time
from pathlib import Path

from _steps import main, wait_until

SCHED = sys.argv[1]


def mq(*args: str) -> subprocess.CompletedProcess:
    r = subprocess.run(["mq", *args], capture_output=True, text=True, timeout=120)
    print("$ mq", *args, "\n", r.stdout, r.stderr, flush=True)
    return r


def state(folder: str) -> str:
    """The state of the task in ``folder`` per ``mq ls`` (which also syncs with the scheduler)."""
    for line in mq("ls").stdout.splitlines():
        words = line.split()
        if len(words) > 2 and words[1] == f"./{folder}/":
            return next((w for w in words if w in ("queued", "running", "done", "FAILED", "CANCELED",
                                                   "TIMEOUT", "MEMORY", "hold")), "")
    return ""


def body(s):
    home = Path.home() / ".myqueue"
    if SCHED == "slurm":
        r = mq("config", "--in-place", "slurm")
        s.check("mq config slurm", r.returncode == 0 and (home / "config.py").is_file(), r.stderr.strip())
        text = (home / "config.py").read_text()
        s.check("config names the partition", "'normal'" in text, text)
    else:
        r = subprocess.run(["lshosts"], capture_output=True, text=True)
        model = r.stdout.splitlines()[1].split()[2]
        home.mkdir(exist_ok=True)
        (home / "config.py").write_text(
            f"config = {{'scheduler': 'lsf', 'nodes': [('{model}', {{'cores': 4, 'memory': '4G'}})]}}\n")
    r = mq("init")  # the tree: a .myqueue folder here with ~/.myqueue/config.py copied into it
    s.check("mq init", r.returncode == 0, r.stderr.strip())
    # Tasks that take a moment, as real ones do: ``mq submit`` records a task only after it has read the
    # state files its jobs leave, so a job that has already ended by then is dropped ("No such task").
    for name, body_ in (("ok", "import time; time.sleep(2); open('result.txt', 'w').write('myqueue-ok')"),
                        ("bad", "import time; time.sleep(2); raise SystemExit('bad task')")):
        Path(name).mkdir()
        Path(name, "task.py").write_text(body_ + "\n")
        r = mq("submit", "task.py", "-R", "1:5m", name)
        s.check(f"submit {name}", r.returncode == 0, r.stderr.strip() or r.stdout.strip())
    done = wait_until(lambda: state("ok") == "done" and state("bad") == "FAILED", 120, 3)
    s.check("done and FAILED per mq ls", done, mq("ls").stdout)
    s.check("result", Path("ok/result.txt").read_text().strip() == "myqueue-ok", "result.txt missing or wrong")

    Path("long").mkdir()
    mq("submit", "shell:sleep 300", "-R", "1:5m", "long")
    running = wait_until(lambda: state("long") == "running", 90, 3)
    s.check("running", running, mq("ls").stdout)
    r = mq("rm", "-s", "r", "long")
    s.check("mq rm", r.returncode == 0, r.stderr.strip())
    time.sleep(2)
    q = subprocess.run(["squeue", "-h", "-o", "%i"] if SCHED == "slurm" else ["bjobs", "-noheader"],
                       capture_output=True, text=True)
    s.check("cancelled in the scheduler", q.stdout.strip() == "", q.stdout)


main(body)
