"""Parallel jobs on every host of their placement, and ``xce launch``, across a real bridge.

Three hosts of two slots each, each in its own network namespace (xce.testing.netbed).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xce.procs import pid_alive
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
    jobid = bed.submit("--env", PATH, "-n", "6", "-R", "span[ptile=2]", "-o", str(out), "-e", str(tmp_path / "err"),
                       "--", "xce", "launch", "sh", "-c",
                       'echo $XCE_HOST $XCE_TASK_ID $XCE_NTASKS $XCE_JOBID; date +%s.%N >&2', cwd=tmp_path)
    job = bed.wait_state(jobid, ("DONE", "EXIT"))
    assert job["state"] == "DONE", (job, out.read_text() if out.exists() else "")
    lines = sorted(line.split() for line in out.read_text().splitlines() if line.startswith("h"))
    assert lines == [["h1", "0", "6", str(jobid)], ["h1", "1", "6", str(jobid)], ["h2", "2", "6", str(jobid)],
                     ["h2", "3", "6", str(jobid)], ["h3", "4", "6", str(jobid)], ["h3", "5", "6", str(jobid)]]
    err = tmp_path / "err"
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
    rss = re.search(r"Memory: ([0-9.]+)([MG]) now", shown)
    assert rss and float(rss.group(1)) * (1024 if rss.group(2) == "G" else 1) >= 6 * 40, shown
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
    # No -e: errors go with the output, as LSF and Slurm do.
    assert f"lost the connection to the worker of {secondary}" in (tmp_path / "out").read_text()
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


def test_signals_reach_every_task_and_a_task_that_cannot_start_fails_the_launch(netbed, tmp_path):
    bed = netbed(hosts=2, slots=2)
    out = tmp_path / "out"
    task = "trap 'echo got \\$XCE_TASK_ID; exit 3' USR1; echo ready; while :; do sleep 0.1; done"
    script = (f"xce launch -l -- sh -c \"{task}\" & pid=$!; "
              "while [ $(grep -c ready out) -lt 4 ]; do sleep 0.1; done; kill -USR1 $pid; wait $pid; echo rc=$?; "
              "xce launch -- /nonexistent/command; echo rc=$?")
    jobid = bed.submit("--env", PATH, "-n", "4", "-R", "span[ptile=2]", "-o", str(out), "-e", str(tmp_path / "err"),
                       "--", "sh", "-c", script, cwd=tmp_path)
    bed.wait_state(jobid, ("DONE", "EXIT"), timeout=90)
    lines = out.read_text().splitlines()
    assert sorted(line for line in lines if "got" in line) == ["0: got 0", "1: got 1", "2: got 2", "3: got 3"], lines
    assert lines[-2:] == ["rc=3", "rc=1"], lines
    err = (tmp_path / "err").read_text()
    assert "could not start: command not found: /nonexistent/command" in err and "on h1:" in err, err


def test_tasks_run_as_the_job_owner_inside_its_control_group_on_each_host(netbed, tmp_path):
    import pwd
    import shutil
    import subprocess
    import tempfile

    name = f"xmh{os.getpid() % 100000}"
    base = Path(tempfile.mkdtemp(prefix="xmh"))
    try:
        base.chmod(0o777)
        subprocess.run(["useradd", "-M", "-U", "-d", str(base), "-s", "/bin/sh", name], check=True, capture_output=True)
        bed = netbed(hosts=2, slots=1, run_as_self=False)
        token = bed.request("POST", "/v1/admin/tokens", {"name": name, "role": "user"})["token"]
        jobid = bed.submit("--token", token, "-n", "2", "-o", str(base / "out"), "--", "sleep", "120", cwd=base)
        job = bed.wait_state(jobid, "RUN")
        head = job["placement"][0]["host"]
        # The job's own environment holds what `xce launch` uses; read it as the job would.
        leader = wait_for(lambda: next((p for p in bed.pids(head) if _cmd(p)[:1] == [b"sleep"]), None), 30, "the job")
        with open(f"/proc/{leader}/environ", "rb") as f:
            env = dict(e.split("=", 1) for e in f.read().decode().split("\0") if "=" in e)
        assert env["XCE_HOSTS"] == " ".join(f"{p['host']}:{p['tasks']}" for p in job["placement"])
        r = bed.cli("launch", "-l", "--", "sh", "-c", "echo $(id -un) $XCE_HOST; grep job_ /proc/self/cgroup | head -1",
                    env={k: env[k] for k in ("XCE_JOBID", "XCE_LAUNCH_KEY", "XCE_HOSTS", "XCE_TASK_SERVERS")},
                    cwd=base)
        lines = r.stdout.splitlines()
        owners = sorted(line for line in lines if line.split()[1] == name)
        assert owners == [f"0: {name} {job['placement'][0]['host']}", f"1: {name} {job['placement'][1]['host']}"], lines
        assert sum(f"job_{jobid}" in line for line in lines) == 2, lines
        assert pwd.getpwnam(name).pw_uid != 0
    finally:
        subprocess.run(["userdel", "-f", name], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _cmd(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def test_the_first_host_lost_leaves_the_job_unknown_until_the_host_is_declared_down(netbed, tmp_path):
    bed = netbed(hosts=3, slots=2, worker_timeout=3.0)
    marker = f"xce-mh-{os.getpid()}-head"
    jobid = bed.submit("--env", PATH, "-n", "6", "-R", "span[ptile=2]", "-o", str(tmp_path / "out"), "--",
                       "xce", "launch", "python3", "-c", "import time; time.sleep(300)", marker, cwd=tmp_path)
    bed.wait_state(jobid, "RUN")
    wait_for(lambda: all(len(_job_pids(bed, h, marker)) == 2 for h in HOSTS), 60, "two tasks on every host")
    head = bed.job(jobid)["placement"][0]["host"]
    bed.kill(head, signal.SIGKILL)
    # Its command may still run on the silent host: the job is UNKWN, holding its slots, not lost.
    bed.wait_state(jobid, "UNKWN", timeout=60)
    # An administrator declares the host down: the job ends, and its other hosts are stopped.
    r = subprocess.run([sys.executable, "-m", "xce.cli.admin", "host", "down", head], env=bed.env(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    job = bed.wait_state(jobid, "EXIT", timeout=60)
    assert "host lost" in job["reason"], job["reason"]
    others = [h for h in HOSTS if h != head]
    wait_for(lambda: not any(_job_pids(bed, h, marker) for h in others), 30,
             lambda: f"the tasks on {others} stopped ({ {h: _job_pids(bed, h, marker) for h in others} })")
    bed.start_worker(head)
    wait_for(lambda: not _job_pids(bed, head, marker), 30, lambda: f"the tasks on {head} killed")
