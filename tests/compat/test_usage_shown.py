"""What a job asked for and used, where users and tools read it, on a live cluster: ``sacct``,
``squeue``, ``scontrol show job``, ``bjobs``, ``bjobs -l``, ``bhist -l``, ``bacct -l``, ``xce acct``
and ``xce jobs``, each in its program's documented format.

A job that burns 0.95 s of CPU (as its own ``os.times`` counts it) is shown as 950 +- 50 ms
wherever CPU time is printed, not as 0 (whole seconds, truncated, were); a job that holds 300 MiB
shows it as its peak; ``-n 2 -c 2`` is two tasks of two CPUs; a compound requirement's job counts
every task it runs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from xce.cluster import LocalCluster
from xce.testing.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MiB = 1 << 20
#: A front-end as ``xce compat install`` runs it: the module's ``main(argv)``.
LAUNCH = "import sys; from importlib import import_module; sys.exit(import_module(sys.argv[1]).main(sys.argv[2:]))"
#: Busy until the process has used 0.95 s of CPU by its own count, which it writes down; then it
#: waits for ``go`` so the test decides when it ends (after a usage report has seen it).
BURN = """import os, sys, time
while sum(os.times()[:2]) < 0.95:
    pass
t = os.times()
open(sys.argv[1] + ".tmp", "w").write(f"{t[0] + t[1]:.3f}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
"""
#: Holds 300 MiB, every page touched, until ``go``.
HOLD = """import os, sys, time
block = bytearray(300 * 1024 * 1024)
block[::4096] = b"x" * len(block[::4096])
open(sys.argv[1], "w").write("held")
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
"""


class Site:
    """One cluster; the front-ends and ``xce`` run as separate processes, as a user runs them."""

    def __init__(self, cluster: LocalCluster, work: Path) -> None:
        self.cluster, self.work = cluster, work
        self.env = {k: v for k, v in cluster.env().items() if not k.startswith(("SLURM_", "LSB_", "LSF_"))}

    def run(self, module: str, *args: str) -> str:
        p = subprocess.run([sys.executable, "-c", LAUNCH, module, *args], capture_output=True, text=True,
                           env=self.env, cwd=self.work, timeout=60)
        assert p.returncode == 0, (module, args, p.stdout, p.stderr)
        return p.stdout

    def slurm(self, prog: str, *args: str) -> str:
        return self.run(f"xce.compat.slurm.{prog}", *args)

    def lsf(self, prog: str, *args: str) -> str:
        return self.run(f"xce.compat.lsf.{prog}", *args)

    def xce(self, *args: str) -> str:
        p = subprocess.run([sys.executable, "-m", "xce.cli.main", *args], capture_output=True, text=True,
                           env=self.env, cwd=self.work, timeout=60)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
        return p.stdout

    def detail(self, jobid: int) -> dict:
        return json.loads(self.xce("jobs", "-l", "--json", str(jobid)))["jobs"][0]

    def wait(self, jobid: int, *states: str) -> dict:
        return wait_for(lambda: (j := self.detail(jobid))["state"] in states and j, 60,
                        lambda: f"job {jobid} to reach {states} (now {self.detail(jobid)['state']})")

    def sbatch(self, *args: str) -> int:
        return int(self.slurm("sbatch", "--parsable", *args).strip())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("usage")
    work = base / "work"
    work.mkdir()
    cluster = LocalCluster(base / "state", 1, 4, round_interval=0.05, report_interval=0.3)
    try:
        cluster.start()
        yield Site(cluster, work)
    finally:
        cluster.stop()


def _held_until_measured(site: Site, jobid: int, seen: Path, go: Path, measured, while_running=None) -> None:
    """Wait for the job's own word, then for a usage report that has ``measured`` it (and look at it
    ``while_running``), then let it end."""
    wait_for(lambda: seen.exists(), 60, f"job {jobid} to reach its figure")
    wait_for(lambda: measured(site.detail(jobid).get("used") or {}), 30,
             lambda: f"a usage report of job {jobid} to see it (now {site.detail(jobid).get('used')})")
    if while_running is not None:
        while_running()
    go.write_text("")
    site.wait(jobid, "DONE")


@pytest.fixture(scope="module")
def burner(site, tmp_path_factory):
    """A finished job that used 0.95 s of CPU; its id and the CPU time its own count gives."""
    d = tmp_path_factory.mktemp("burn")
    own, go = d / "own", d / "go"
    script = d / "burn.py"
    script.write_text(BURN)
    jobid = int(json.loads(site.xce("submit", "--json", "--type", "burn", "--", sys.executable, str(script),
                                    str(own), str(go)))["jobid"])
    _held_until_measured(site, jobid, own, go, lambda used: (used.get("cpu_ms") or 0) >= 900)
    return jobid, float(own.read_text()) * 1000


def test_cpu_time_is_shown_to_the_millisecond_everywhere(site, burner):
    jobid, own_ms = burner
    assert abs(own_ms - 950) <= 50, own_ms

    def close(ms: float, slack: float = 0) -> bool:
        return abs(ms - 950) <= 50 + slack and abs(ms - own_ms) <= 50 + slack

    # xce: the job's figure in milliseconds, and accounting in seconds to the millisecond.
    used = site.detail(jobid)["used"]
    assert close(used["cpu_ms"]), (used, own_ms)
    # The split is the kernel's tick-sampled one (cgroup v1's cpuacct.stat): close to the total, not exact.
    assert used["cpu_user_ms"] + used["cpu_sys_ms"] == pytest.approx(used["cpu_ms"], rel=0.15), used
    acct = {j["jobid"]: j for j in json.loads(site.xce("acct", "--json"))["jobs"]}[jobid]
    assert acct["cpu_ms"] == used["cpu_ms"] and acct["cpu_s"] == used["cpu_ms"] / 1000, acct
    assert re.search(rf"^{jobid} .* {used['cpu_ms'] / 1000:.2f}s ", site.xce("acct"), re.M)
    assert re.search(r"CPU time: \d\.\d{3} s \(user \d\.\d{3} s, system \d\.\d{3} s\)", site.xce("jobs", "-l", str(jobid)))

    # sacct: TotalCPU as MM:SS.mmm on the job and its batch step, UserCPU + SystemCPU the same.
    rows = [r.split("|") for r in site.slurm("sacct", "-j", str(jobid), "-P", "-n", "-o",
                                             "JobID,TotalCPU,UserCPU,SystemCPU").splitlines()]
    assert [r[0] for r in rows] == [str(jobid), f"{jobid}.batch", f"{jobid}.extern"], rows
    for _, total, user, system in rows[:2]:
        m = re.fullmatch(r"00:(\d\d)\.(\d{3})", total)
        assert m, total
        assert close(int(m[1]) * 1000 + int(m[2])), (total, own_ms)
        parts = [re.fullmatch(r"00:(\d\d)\.(\d{3})", t) for t in (user, system)]
        assert all(parts) and sum(int(p[1]) * 1000 + int(p[2]) for p in parts) == \
            used["cpu_user_ms"] + used["cpu_sys_ms"], (user, system)
    assert rows[2][1] == "00:00.000"

    # LSF: "The CPU time used is N seconds." with one decimal, bacct's CPU_T with two.
    long = site.lsf("bjobs", "-l", str(jobid))
    m = re.search(r"Done successfully\. The CPU time used is (\d+\.\d) seconds\.", long)
    assert m and close(float(m[1]) * 1000, slack=50), long
    hist = site.lsf("bhist", "-l", str(jobid))
    assert f"The CPU time used is {m[1]} seconds;" in hist, hist
    bacct = site.lsf("bacct", "-l", str(jobid))
    figures = bacct.splitlines()[bacct.splitlines().index(
        "     CPU_T     WAIT     TURNAROUND   STATUS     HOG_FACTOR    MEM    SWAP") + 1].split()
    assert close(float(figures[0]) * 1000, slack=5), bacct


def test_drift_counts_a_short_jobs_cpu(site, burner):
    """0.95 s of CPU is most of a CPU over a run of a second or two, not 0 (100 % wasted): the
    drift report measures it against the run time up to the report that saw it."""
    jobid, _ = burner
    job = site.detail(jobid)
    rep = json.loads(site.xce("drift", "--json", "--min-samples", "1"))
    cpu = {(r["job_type"], r["resource"]): r for r in rep["rows"]}[("burn", "xce.io/cpu-milli")]
    seconds = (min(job["usage"]["ts"], job["end_time"]) - job["start_time"]) / 1e9
    assert cpu["measured_median"] == round(job["used"]["cpu_ms"] / seconds) > 300, (cpu, job["used"], seconds)
    assert cpu["verdict"] == "never-declared", cpu


def test_a_jobs_memory_peak_and_average(site, tmp_path):
    held, go = tmp_path / "held", tmp_path / "go"
    script = tmp_path / "hold.py"
    script.write_text(HOLD)
    jobid = site.sbatch("-J", "hold", "--mem=1G", "--wrap", f"{sys.executable} {script} {held} {go}")
    def running() -> None:  # LSF's resource usage of a running job: its CPU seconds and its memory now
        long = site.lsf("bjobs", "-l", str(jobid))
        m = re.search(r": Resource usage collected\.\n +The CPU time used is \d+ seconds\.\n +MEM: (\d+) Mbytes;", long)
        assert m and 290 <= int(m[1]) < 420, long

    _held_until_measured(site, jobid, held, go, lambda used: (used.get("mem_now") or 0) >= 290 * MiB, running)
    used = site.detail(jobid)["used"]
    assert 300 * MiB <= used["mem_peak"] < 420 * MiB, used
    assert 0 < used["mem_avg"] <= used["mem_peak"], used

    # sacct: kilobytes on the batch step (the allocation's own line is empty, as Slurm's is).
    rows = [r.split("|") for r in site.slurm("sacct", "-j", str(jobid), "-P", "-n", "-o",
                                             "JobID,MaxRSS,AveRSS,ReqMem").splitlines()]
    job, batch, extern = rows
    assert (job[1], job[2], job[3]) == ("", "", "1G") and extern[1] == "0", rows
    assert re.fullmatch(r"\d+K", batch[1]) and int(batch[1][:-1]) == used["mem_peak"] // 1024, batch
    assert re.fullmatch(r"\d+K", batch[2]) and int(batch[2][:-1]) <= int(batch[1][:-1]), batch
    in_m = site.slurm("sacct", "-j", str(jobid), "-P", "-n", "--units=M", "-o", "MaxRSS").splitlines()[1]
    assert re.fullmatch(r"\d+\.\d\dM", in_m) and abs(float(in_m[:-1]) - used["mem_peak"] / MiB) < 0.01, in_m

    # bjobs -l: MAX MEM and AVG MEM in Mbytes; bjobs -o the same figures.
    long = site.lsf("bjobs", "-l", str(jobid))
    m = re.search(r" MAX MEM: (\d+) Mbytes;  AVG MEM: (\d+) Mbytes", long)
    assert m and int(m[1]) == used["mem_peak"] // MiB and int(m[2]) == used["mem_avg"] // MiB, long
    cols = site.lsf("bjobs", "-o", "max_mem avg_mem cpu_used delimiter='|'", "-noheader", str(jobid)).strip()
    assert cols.split("|")[0] == f"{used['mem_peak'] // MiB} Mbytes", cols
    assert re.fullmatch(r"\d+ Mbytes\|\d+ Mbytes\|\d+\.\d{3} second\(s\)", cols), cols


def test_tasks_cpus_memory_and_files_of_a_slurm_job(site):
    (site.work / "shape.sh").write_text("#!/bin/sh\nsleep 300\n")
    jobid = site.sbatch("-J", "shape", "-n", "2", "-c", "2", "--mem-per-cpu=100M", "-t", "10", "shape.sh")
    try:
        site.wait(jobid, "RUN")
        text = site.slurm("scontrol", "show", "job", str(jobid))
        pairs = dict(p.split("=", 1) for p in text.split() if "=" in p)
        assert (pairs["NumNodes"], pairs["NumCPUs"], pairs["NumTasks"], pairs["CPUs/Task"]) == ("1", "4", "2", "2")
        assert pairs["ReqTRES"] == pairs["AllocTRES"] == "cpu=4,mem=400M,node=1,billing=4", text
        assert (pairs["MinCPUsNode"], pairs["MinMemoryCPU"]) == ("2", "100M"), text
        out = str(site.work / f"slurm-{jobid}.out")
        assert (pairs["StdOut"], pairs["StdErr"], pairs["StdIn"], pairs["WorkDir"]) == \
            (out, out, "/dev/null", str(site.work)), text
        assert pairs["Command"] == str(site.work / "shape.sh"), text

        assert site.slurm("squeue", "-h", "-j", str(jobid), "-o", "%m %C %c").split() == ["100M", "4", "2"]
        row = site.slurm("sacct", "-j", str(jobid), "-X", "-P", "-n", "-o",
                         "ReqMem,ReqCPUS,AllocCPUS,NTasks,ReqTRES,AllocTRES").strip().split("|")
        assert row == ["400M", "4", "4", "2", "billing=4,cpu=4,mem=400M,node=1", "billing=4,cpu=4,mem=400M,node=1"]
    finally:
        site.slurm("scancel", str(jobid))
    one = site.sbatch("--mem=600M", "-H", "--wrap", "true")
    try:
        assert site.slurm("squeue", "-h", "-j", str(one), "-o", "%m").strip() == "600M"
        text = site.slurm("scontrol", "show", "job", str(one))
        assert "MinMemoryNode=600M" in text and "AllocTRES=(null)" in text, text
        assert site.slurm("sacct", "-j", str(one), "-X", "-P", "-n", "-o", "ReqMem,AllocTRES").strip() == "600M|"
    finally:
        site.slurm("scancel", str(one))


def test_a_compound_job_counts_every_task_and_its_submission_host(site):
    jobid = int(re.search(r"Job <(\d+)>", site.lsf("bsub", "-R", "{span[hosts=1]} + 2*{span[hosts=1]}",
                                                   "sleep 300")).group(1))
    try:
        job = site.wait(jobid, "RUN")
        assert job["tasks"] == sum(p["tasks"] for p in job["placement"]) == 3, job
        assert site.lsf("bjobs", "-o", "slots nalloc_slot", "-noheader", str(jobid)).split() == ["3", "3"]
        assert ", 3 Task(s);" in site.lsf("bjobs", "-l", str(jobid))
        assert "Tasks <3>" in site.xce("jobs", "-l", str(jobid))
        assert site.slurm("squeue", "-h", "-j", str(jobid), "-o", "%C").strip() == "3"
        assert site.slurm("sacct", "-j", str(jobid), "-X", "-P", "-n", "-o", "NTasks,AllocCPUS").strip() == "3|3"
        # FROM_HOST: where it was submitted from (bsub sends this host's name).
        header, line = site.lsf("bjobs", str(jobid)).splitlines()
        host = os.uname().nodename
        assert line.split()[4] == (host if len(host) <= 11 else "*" + host[-10:]), (header, line)
        assert f"Submitted from host <{os.uname().nodename}>" in site.lsf("bjobs", "-l", str(jobid))
    finally:
        site.lsf("bkill", str(jobid))
    pending = int(re.search(r"Job <(\d+)>", site.lsf("bsub", "-H", "-R", "{span[hosts=1]} + 2*{span[hosts=1]}",
                                                     "true")).group(1))
    try:  # before it is placed: what its requirement asks for
        assert site.detail(pending)["tasks"] == 3
    finally:
        site.lsf("bkill", str(pending))
