"""Parallel jobs on every host of their placement, and ``xce launch``, across a real bridge.

Three hosts of two slots each, each in its own network namespace (xce.testing.netbed).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from xce.cluster.local import pid_alive
from xce.testing.netbed import netbed, wait_for  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slow]

HOSTS = ("h1", "h2", "h3")
#: The job finds `xce` on its PATH, as on a cluster where XCE is installed.
PATH = f"PATH={Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _job_pids(bed, host: str, marker: str) -> list[int]:
    """Processes on ``host`` whose command line carries ``marker`` (the tasks of one test)."""
    found = []
    for pid in bed.pids(host):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args and b"launch" not in args:  # a task, not `xce launch` itself
            found.append(pid)
    return found


def test_six_tasks_two_per_host_print_their_host_and_id(netbed, tmp_path):
    bed = netbed(hosts=3, slots=2)
    out = tmp_path / "out"
    t0 = time.monotonic()
    jobid = bed.submit("--env", PATH, "-n", "6", "-R", "span[ptile=2]", "-o", str(out), "--", "xce", "launch",
                       "sh", "-c", 'echo $XCE_HOST $XCE_TASK_ID $XCE_NTASKS $XCE_JOBID; date +%s.%N >&2',
                       cwd=tmp_path)
    job = bed.wait_state(jobid, ("DONE", "EXIT"))
    assert job["state"] == "DONE", (job, out.read_text() if out.exists() else "")
    lines = sorted(line.split() for line in out.read_text().splitlines() if line.startswith("h"))
    assert lines == [["h1", "0", "6", str(jobid)], ["h1", "1", "6", str(jobid)], ["h2", "2", "6", str(jobid)],
                     ["h2", "3", "6", str(jobid)], ["h3", "4", "6", str(jobid)], ["h3", "5", "6", str(jobid)]]
    err = tmp_path / f"xce-{jobid}.err"
    starts = [float(x) for x in err.read_text().split()]
    assert len(starts) == 6 and max(starts) - min(starts) < 1.0, starts
    assert time.monotonic() - t0 < 60


def test_kill_suspend_and_usage_reach_every_host(netbed, tmp_path):
    bed = netbed(hosts=3, slots=2)
    marker = f"xce-mh-{os.getpid()}-busy"
    # Each task holds 40 MiB and spins a little; the job's usage is the sum over the three hosts.
    script = ("import sys, time\nb = bytearray(40 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\n"
              "while True:\n    sum(range(20000)); time.sleep(0.01)\n")
    jobid = bed.submit("--env", PATH, "-n", "6", "-R", "span[ptile=2]", "-o", str(tmp_path / "out"), "--",
                       "xce", "launch", "python3", "-c", script, marker, cwd=tmp_path)
    bed.wait_state(jobid, "RUN")
    pids = wait_for(lambda: (p := {h: _job_pids(bed, h, marker) for h in HOSTS})
                    and all(len(v) == 2 for v in p.values()) and p, 60, "two tasks on every host")
    # Usage: every host's share, summed (6 x 40 MiB > what any one host has).
    job = wait_for(lambda: (j := bed.job(jobid))["usage"].get("last", {}).get("memory_rss", 0) >= 6 * (40 << 20)
                   and j, 60, lambda: f"usage summed over the hosts (now {bed.job(jobid)['usage']})")
    assert sorted(job["usage"]["hosts"]) == list(HOSTS)
    shown = bed.cli("jobs", "-l", str(jobid)).stdout
    assert "MiB" in shown or "GiB" in shown or "M" in shown, shown
    # Suspend: every task on every host stops.
    bed.cli("suspend", str(jobid))
    wait_for(lambda: all(_state(p) == "T" for ps in pids.values() for p in ps if pid_alive(p)), 30,
             lambda: f"every task stopped ({ {h: [_state(p) for p in ps] for h, ps in pids.items()} })")
    bed.cli("resume", str(jobid))
    wait_for(lambda: all(_state(p) != "T" for ps in pids.values() for p in ps), 30, "every task running again")
    # Kill: nothing of the job is left in any namespace.
    bed.cli("kill", str(jobid))
    bed.wait_state(jobid, "EXIT")
    wait_for(lambda: not any(_job_pids(bed, h, marker) for h in HOSTS), 30,
             lambda: f"no task left ({ {h: _job_pids(bed, h, marker) for h in HOSTS} })")


def test_a_secondary_worker_killed_stops_the_tasks_on_the_other_hosts(netbed, tmp_path):
    bed = netbed(hosts=3, slots=2, worker_timeout=3.0)
    marker = f"xce-mh-{os.getpid()}-lost"
    jobid = bed.submit("--env", PATH, "-n", "6", "-R", "span[ptile=2]", "-o", str(tmp_path / "out"), "--",
                       "xce", "launch", "python3", "-c", "import time; time.sleep(300)", marker, cwd=tmp_path)
    bed.wait_state(jobid, "RUN")
    wait_for(lambda: all(len(_job_pids(bed, h, marker)) == 2 for h in HOSTS), 60, "two tasks on every host")
    head = bed.job(jobid)
    secondary = [h for h in HOSTS if h != head["placement"][0]["host"]][-1]
    bed.kill(secondary, signal.SIGKILL)
    # xce launch loses its connection to that host: it stops the tasks everywhere else and fails,
    # naming the host, so the job ends EXIT.
    job = bed.wait_state(jobid, "EXIT", timeout=60)
    assert job["exit_code"] != 0, job
    assert f"lost the connection to the worker of {secondary}" in (tmp_path / f"xce-{jobid}.err").read_text()
    others = [h for h in HOSTS if h != secondary]
    wait_for(lambda: not any(_job_pids(bed, h, marker) for h in others), 30,
             lambda: f"the tasks on {others} stopped ({ {h: _job_pids(bed, h, marker) for h in others} })")
    # The silent host's own tasks run on until its worker returns; then nothing of the job is left there.
    wait_for(lambda: next(h for h in bed.hosts() if h["name"] == secondary)["status"] != "ok", 30, "the host given up")
    bed.start_worker(secondary)
    wait_for(lambda: not _job_pids(bed, secondary, marker), 30,
             lambda: f"the tasks on {secondary} killed ({_job_pids(bed, secondary, marker)})")


def test_launch_refuses_outside_a_job_and_beyond_what_the_job_holds(netbed, tmp_path):
    bed = netbed(hosts=2, slots=2)
    r = bed.cli("launch", "--", "true", check=False, env={"XCE_JOBID": "", "XCE_LAUNCH_KEY": ""})
    assert r.returncode == 1 and r.stderr.strip().count("\n") == 0 and "not inside a job" in r.stderr, r.stderr
    out = tmp_path / "out"
    script = ("xce launch -n 5 -- true; echo rc=$?; xce launch --hosts h1,nowhere -- true; echo rc=$?; "
              "xce launch -- sh -c 'exit $XCE_TASK_ID'; echo rc=$?")
    jobid = bed.submit("--env", PATH, "-n", "4", "-R", "span[ptile=2]", "-o", str(out), "-e", str(tmp_path / "err"), "--",
                       "sh", "-c", script, cwd=tmp_path)
    bed.wait_state(jobid, ("DONE", "EXIT"))
    assert out.read_text().split() == ["rc=1", "rc=1", "rc=3"], out.read_text()
    err = (tmp_path / "err").read_text()
    assert "5 tasks asked for, but job" in err and "holds 4 slot(s)" in err, err
    assert "holds no slots on nowhere" in err, err
