"""Memory as Slurm and LSF enforce it, on a live cluster with root workers on this host's cgroup v1
memory controller: what a job's ``--mem`` options reserve is its limit on every host it runs on
(``memory.constrain_ram_space``, Slurm's ``ConstrainRAMSpace``), ``bsub -M`` is one, a job over it
ends ``OUT_OF_MEMORY`` / ``TERM_MEMLIMIT`` / ``MEMLIMIT`` in each program's own report, and the
switches leave a reservation a reservation when they are off.

Every job here touches each page it allocates (``b[::4096] = ...``), so the memory is really used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FAST, wait_for

from xce.cluster import LocalCluster
from xce.compat.programs import PROGRAMS

pytestmark = [pytest.mark.integration,
              pytest.mark.skipif(os.geteuid() != 0, reason="memory limits need a root worker's control groups")]

#: Runs one front-end program as ``xce compat install`` would: its module's ``main(argv)``.
LAUNCH = "import sys; from importlib import import_module; sys.exit(import_module(sys.argv[1]).main(sys.argv[2:]))"
MiB = 1 << 20


def grab(mb: int) -> str:
    """A Python command that allocates ``mb`` MiB and touches every page of it."""
    return f"b = bytearray({mb} << 20); b[::4096] = b'x' * ({mb} << 8); print('held {mb}M')"


class Site:
    """The LSF and Slurm programs and ``xce`` against one cluster, run as a user runs them."""

    def __init__(self, cluster: LocalCluster, work: Path) -> None:
        self.cluster, self.work = cluster, work
        drop = ("XCE_LSF_UNIT_FOR_LIMITS", "LSF_ENVDIR", "LSF_CONFDIR", "LSB_SHAREDIR")
        self.env = {k: v for k, v in cluster.env().items() if not k.startswith("SLURM_") and k not in drop}
        self.env["LSF_UNIT_FOR_LIMITS"] = "MB"  # -M 200 is 200 MB, as the site's lsf.conf says

    def __call__(self, prog: str, *args: str) -> str:
        argv = ([sys.executable, "-m", "xce.cli.main", *args] if prog == "xce"
                else [sys.executable, "-c", LAUNCH, PROGRAMS[prog], *args])
        r = subprocess.run(argv, env=self.env, cwd=self.work, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, f"{prog} {' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
        return r.stdout

    def sbatch(self, *args: str) -> int:
        return int(self("sbatch", "--parsable", "-o", "/dev/null", *args).strip())

    def bsub(self, *args: str) -> int:
        out = self("bsub", "-o", "/dev/null", *args)
        return int(out.split("<", 1)[1].split(">", 1)[0])

    def job(self, jobid: int) -> dict:
        return self.cluster.request("GET", f"/v1/jobs/{jobid}")

    def ended(self, jobid: int, timeout: float = 90) -> dict:
        return wait_for(lambda: (j := self.job(jobid))["state"] in ("DONE", "EXIT") and j, timeout,
                        lambda: f"job {jobid} to end (now {self.job(jobid)['state']})")

    def slurm_state(self, jobid: int) -> tuple[str, str]:
        """What ``sacct`` and ``squeue -t all`` say of the job."""
        sacct = self("sacct", "-j", str(jobid), "-X", "-n", "-P", "-o", "State").strip()
        squeue = self("squeue", "-t", "all", "-j", str(jobid), "-h", "-o", "%T %t").strip()
        return sacct, squeue


class ProcessGroupWorkers(LocalCluster):
    """Workers without control groups, as a worker that is not root has: the process-group fallback."""

    def _spawn(self, key: str, args: list[str]):
        if args[1:2] == ["worker"]:
            args = [*args, "--containment", "process-group"]
        return super()._spawn(key, args)


def start(tmp_path_factory, config: str, kind: type[LocalCluster] = LocalCluster, slots: int = 2) -> Site:
    base = tmp_path_factory.mktemp("mem")
    (base / "work").mkdir()
    (base / "xce.toml").write_text(config)
    cluster = kind(base / "state", 2, slots, config=base / "xce.toml", **FAST)
    cluster.start()
    return Site(cluster, base / "work")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The defaults: Slurm's reservations confined, LSF's rusage a reservation only."""
    s = start(tmp_path_factory, "")
    try:
        yield s
    finally:
        s.cluster.stop()


@pytest.fixture(scope="module")
def switched(tmp_path_factory):
    """Both switches the other way: Slurm's --mem a reservation only, LSF's rusage[mem] a limit."""
    s = start(tmp_path_factory, "[memory]\nconstrain_ram_space = false\nenforce_rusage = true\n")
    try:
        yield s
    finally:
        s.cluster.stop()


def job_limits(site: Site, jobid: int) -> list[int]:
    """The memory limit of the job's control group on each host it runs on (cgroup v1)."""
    found = sorted(Path("/sys/fs/cgroup/memory").rglob(
        f"{site.cluster.cgroup_parent}/*/job_{jobid}/memory.limit_in_bytes"))
    return sorted(int(p.read_text()) for p in found)


def test_sbatch_mem_over_its_request_ends_out_of_memory(site):
    jobid = site.sbatch("--mem=200M", "--wrap", f'{sys.executable} -c "{grab(800)}"')
    job = site.ended(jobid)
    assert (job["state"], job["end"]["code"]) == ("EXIT", "MEMLIMIT"), job
    assert "memory limit 200M reached" in job["reason"], job["reason"]
    assert site.slurm_state(jobid) == ("OUT_OF_MEMORY", "OUT_OF_MEMORY OOM")
    assert site("xce", "jobs", "-a", "-o", "jobid stat end", str(jobid)).split()[-3:] == [str(jobid), "EXIT",
                                                                                         "MEMLIMIT"]
    assert "\nEnd: MEMLIMIT\n" in site("xce", "jobs", "-l", str(jobid))


def test_a_job_within_its_memory_is_unaffected(site):
    jobid = site.sbatch("--mem=200M", "--wrap", f'{sys.executable} -c "{grab(60)}"')
    job = site.ended(jobid)
    assert (job["state"], job["end"]["code"]) == ("DONE", "DONE"), job
    assert site.slurm_state(jobid) == ("COMPLETED", "COMPLETED CD")


def test_each_host_holds_the_job_to_what_it_reserved_there(site):
    """-n 3 over two hosts of two slots: two slots on one (200M), one on the other (100M)."""
    jobid = site.sbatch("-n", "3", "--mem-per-cpu=100M", "--wrap", "sleep 300")
    try:
        limits = wait_for(lambda: len(got := job_limits(site, jobid)) == 2 and got, 60,
                          "the job's control groups on both hosts")
        assert limits == [100 * MiB, 200 * MiB]
    finally:
        site("scancel", str(jobid))


def test_bsub_M_ends_term_memlimit(site):
    jobid = site.bsub("-M", "200", sys.executable, "-c", f'"{grab(800)}"')
    job = site.ended(jobid)
    assert job["end"]["code"] == "MEMLIMIT", job
    assert "TERM_MEMLIMIT: job killed after reaching LSF memory usage limit" in site("bjobs", "-l", str(jobid))
    assert "TERM_MEMLIMIT" in site("bhist", "-l", str(jobid))


def test_the_smaller_of_a_limit_and_a_reservation_applies(site):
    def submit(*args: str) -> int:
        return int(json.loads(site("xce", "submit", "--json", *args, "--", "sleep", "300"))["jobid"])

    capped = submit("--mem=300M", "--limit", "mem=150M")
    reserved = submit("--mem=100M", "--limit", "mem=1G")
    lsf = site.bsub("-M", "150", "-R", "rusage[mem=100]", "sleep", "300")
    try:
        for jobid, limit in ((capped, 150), (reserved, 100), (lsf, 150)):
            # LSF's rusage[mem] is a reservation only by default: -M alone is the last one's limit.
            assert wait_for(lambda j=jobid: job_limits(site, j), 60, "the job's control group") == [limit * MiB]
    finally:
        site("scancel", str(capped), str(reserved), str(lsf))


def test_drift_shows_the_type_that_hit_its_memory_limit(site):
    jobid = site.sbatch("--mem=100M", "--wrap", f'{sys.executable} -c "{grab(400)}"')
    site.ended(jobid)
    out = site("xce", "drift", "--min-samples", "50")
    assert "killed at its memory limit (MEMLIMIT)" in out, out


def test_switches_off_leave_reservations_reservations(switched):
    over = switched.sbatch("--mem=200M", "--wrap", f'{sys.executable} -c "{grab(400)}"')
    job = switched.ended(over)
    assert (job["state"], job["end"]["code"]) == ("DONE", "DONE"), job
    assert switched.slurm_state(over) == ("COMPLETED", "COMPLETED CD")


def test_enforced_rusage_ends_term_memlimit(switched):
    jobid = switched.bsub("-R", "rusage[mem=200]", sys.executable, "-c", f'"{grab(800)}"')
    job = switched.ended(jobid)
    assert job["end"]["code"] == "MEMLIMIT", job
    assert "TERM_MEMLIMIT" in switched("bjobs", "-l", str(jobid))


def test_without_control_groups_the_worker_polls_and_ends_the_job_out_of_memory(tmp_path_factory):
    """The process-group fallback: no kernel limit, the worker polls the job's memory and kills it."""
    site = start(tmp_path_factory, "", ProcessGroupWorkers)
    try:
        assert {h["containment"] for h in site.cluster.request("GET", "/v1/hosts")["hosts"]} == {"process-group"}
        hold = grab(800) + "; import time; time.sleep(60)"
        jobid = site.sbatch("--mem=200M", "--wrap", f'{sys.executable} -c "{hold}"')
        job = site.ended(jobid)
        assert job["end"]["code"] == "MEMLIMIT" and "exceeded its limit 200M" in job["reason"], job
        assert site.slurm_state(jobid) == ("OUT_OF_MEMORY", "OUT_OF_MEMORY OOM")
    finally:
        site.cluster.stop()


def test_a_task_killed_for_memory_on_another_host_ends_the_job_out_of_memory(tmp_path_factory):
    """Two hosts of one slot: the task on the second host goes over its 100M and is killed there;
    the job ends MEMLIMIT (stopped on its first host, where its command still runs)."""
    site = start(tmp_path_factory, "", slots=1)
    try:
        task = f'if [ "$SLURM_NODEID" != 0 ]; then {sys.executable} -c "{grab(400)}"; fi; sleep 60'
        out = site("xce", "submit", "--json", "-n", "2", "--mem-per-cpu=100M", "--", sys.executable, "-m",
                   "xce.cli.main", "launch", "sh", "-c", task)
        jobid = int(json.loads(out)["jobid"])
        job = site.ended(jobid)
        second = job["placement"][1]["host"]
        assert job["end"]["code"] == "MEMLIMIT", job
        assert f"memory limit 100M reached (peak 100M) on {second}" in job["reason"], job["reason"]
        assert site.slurm_state(jobid) == ("OUT_OF_MEMORY", "OUT_OF_MEMORY OOM")
    finally:
        site.cluster.stop()
