"""Maestro (LLNL maestrowf): a two-step study (the second depends on the first and reads its output)
run by ``maestro run`` through its slurm or lsf script adapter (sbatch/squeue/scancel,
bsub/bjobs/bkill), its conductor polling every 2 s; then a study cancelled with ``maestro cancel``
while its step runs."""

import csv
import subprocess
import sys
from pathlib import Path

from _steps import main, wait_until

SCHED = sys.argv[1]

SPEC = """description:
    name: {name}
    description: the XCE tool battery
batch:
    type: {sched}
    host: xce
    bank: default
    queue: normal
study:
{steps}
"""
TWO_STEPS = """    - name: hello
      description: writes a file
      run:
          cmd: echo maestro-ok > hello.txt
          nodes: 1
          procs: 1
          walltime: "00:05:00"
    - name: after
      description: reads it
      run:
          cmd: cat $(hello.workspace)/hello.txt > result.txt
          depends: [hello]
          nodes: 1
          procs: 1
          walltime: "00:05:00"
"""
LONG = """    - name: long
      description: sleeps
      run:
          cmd: sleep 300
          nodes: 1
          procs: 1
          walltime: "00:05:00"
"""


def statuses(out: Path) -> dict[str, str]:
    """Step name -> its state, from the study's status.csv (what ``maestro status`` prints)."""
    path = out / "status.csv"
    if not path.exists():
        return {}
    with path.open() as f:
        return {row["Step Name"]: row["State"] for row in csv.DictReader(f)}


def maestro(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(["maestro", *args], capture_output=True, text=True, timeout=timeout)


def body(s):
    Path("study.yaml").write_text(SPEC.format(name="battery", sched=SCHED, steps=TWO_STEPS))
    out = Path("out").absolute()
    r = maestro("run", "-y", "-fg", "-s", "2", "-o", str(out), "study.yaml")
    print(r.stdout[-3000:], r.stderr[-3000:])
    s.check("maestro run", r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-500:]}")
    st = statuses(out)
    s.check("steps finished", st == {"hello": "FINISHED", "after": "FINISHED"}, f"status.csv {st}")
    result = next(out.glob("after*/result.txt"), None)
    s.check("result", result is not None and result.read_text().strip() == "maestro-ok", "result.txt missing")

    Path("long.yaml").write_text(SPEC.format(name="long", sched=SCHED, steps=LONG))
    out2 = Path("out2").absolute()
    r = maestro("run", "-y", "-s", "2", "-o", str(out2), "long.yaml")
    s.check("maestro run (background)", r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-500:]}")
    running = wait_until(lambda: statuses(out2).get("long") == "RUNNING", 90)
    s.check("running", running, f"status.csv {statuses(out2)}")
    r = maestro("cancel", "-y", str(out2))
    s.check("maestro cancel", r.returncode == 0, f"exit {r.returncode}: {r.stderr.strip()[-500:]}")
    ended = wait_until(lambda: statuses(out2).get("long") == "CANCELLED", 90)
    s.check("cancelled", ended, f"status.csv {statuses(out2)}")


main(body)
