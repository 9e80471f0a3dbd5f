"""``sstat``, ``seff``, ``sprio``, ``sshare`` and ``sattach`` against a live cluster with a fair-share
queue: each checks the layout the real program prints and figures a user would check by hand (a
job that holds 60 MB shows about 60 MB; a busy loop shows CPU time)."""

from __future__ import annotations

import re

import pytest
from conftest import FAST, Slurm, write_launchers

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CONFIG = """
default_queue = "normal"

[queues.normal]
priority = 30

[queues.fair]
priority = 20
job_pick_plugin = "fairshare"
"""
#: Holds 60 MiB, burns CPU for 2 s, prints a line, then waits.
HOG = ("python3 -c 'import time; x = bytearray(60 * 2**20)\n"
       "while time.process_time() < 2.2: pass\nprint(\"burnt\", flush=True); time.sleep(300)'")


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    base = tmp_path_factory.mktemp("usage")
    write_launchers(base / "bin")
    (base / "work").mkdir()
    (base / "xce.toml").write_text(CONFIG)
    cluster = LocalCluster(base / "state", 1, 3, config=base / "xce.toml", **FAST)
    try:
        cluster.start()
        yield Slurm(cluster, base / "bin", base / "work")
    finally:
        cluster.stop()


def submit(slurm, *args: str) -> int:
    r = slurm("sbatch", "--parsable", *args)
    assert r.code == 0, r.err
    return int(r.out)


@pytest.fixture(scope="module")
def hog(slurm):
    """A running job whose usage has been measured past its 2 s of CPU."""
    from xce.testing.wait import wait_for

    jobid = submit(slurm, "-p", "fair", "--mem=200M", "--wrap", HOG)
    slurm.wait_state(str(jobid), ("RUN",))
    wait_for(lambda: (slurm.detail(jobid)["used"].get("cpu_ms") or 0) >= 2000, 60,
             lambda: f"the job's CPU time to be measured: {slurm.detail(jobid)}")
    return jobid


def kib(text: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([KMG])", text).groups()
    return int(number) * {"K": 1, "M": 1024, "G": 1024**2}[unit]


def test_sstat_shows_the_running_jobs_memory_and_cpu(slurm, hog):
    r = slurm("sstat", "-j", str(hog), "-P", "-o", "JobID,MaxRSS,AveRSS,AveCPU,NTasks,MaxRSSNode,TotalCPU")
    assert r.code == 0, r.err
    header, row = r.out.splitlines()
    assert header == "JobID|MaxRSS|AveRSS|AveCPU|NTasks|MaxRSSNode|TotalCPU"
    jobid, maxrss, averss, avecpu, ntasks, node, total = row.split("|")
    assert jobid == f"{hog}.batch" and ntasks == "1" and node == slurm.job(str(hog))["placement"][0]["host"]
    assert 55 * 1024 <= kib(maxrss) <= 150 * 1024  # 60 MiB held, plus the interpreter
    assert 0 < kib(averss) <= kib(maxrss)
    assert avecpu >= "00:00:02" and re.fullmatch(r"\d\d:\d\d:\d\d", avecpu)
    assert total >= "00:02.000" and re.fullmatch(r"\d\d:\d\d\.\d\d\d", total)  # milliseconds, as sacct writes them


def test_sstat_default_layout_and_options(slurm, hog):
    r = slurm("sstat", "-j", f"{hog}.batch")
    assert r.code == 0, r.err
    header, rule, row = r.out.splitlines()
    assert header.split()[:6] == ["JobID", "MaxVMSize", "MaxVMSizeNode", "MaxVMSizeTask", "AveVMSize", "MaxRSS"]
    assert rule.startswith("------------ ---------- ") and len(rule) == len(header) == len(row)
    assert row.startswith(f"{hog}.batch".ljust(12) + " ")
    r = slurm("sstat", "-n", "-p", "-a", "-j", str(hog), "--format=jobid,ntasks")
    assert (r.code, r.out) == (0, f"{hog}.batch|1|\n")


def test_sstat_of_array_elements_shows_each_running_one(slurm, hog):
    array = submit(slurm, "-a", "1-2", "--wrap", "sleep 300")
    try:
        for i in (1, 2):
            slurm.wait_state(f"{array}_{i}", ("RUN",))
        r = slurm("sstat", "-n", "-P", "-o", "JobID,NTasks", "-j", f"{array}_[1-2],{hog}")
        assert (r.code, r.out) == (0, f"{array}_1.batch|1\n{array}_2.batch|1\n{hog}.batch|1\n")
    finally:
        assert slurm("scancel", str(array)).code == 0


@pytest.mark.parametrize("argv, err", [
    ([], "sstat: error: You didn't give me any jobs to stat.\n"),
    (["-j", "99999"], "sstat: error: Invalid job id specified: 99999\n"),
    (["-j", "1.7"], None),
    (["-o", "Bogus", "-j", "1"], 'sstat: error: Invalid field requested: "Bogus"\n'),
])
def test_sstat_refusals(slurm, hog, argv, err):
    argv = [a.replace("1.7", f"{hog}.7") for a in argv]
    r = slurm("sstat", "-n", *argv)
    assert r.code == 1 and r.out == ""
    assert r.err == (err or f"sstat: error: StepId={hog}.7 not found running.\n")


def test_sstat_of_an_ended_job_says_it_has_no_steps(slurm):
    done = submit(slurm, "--wrap", "true")
    slurm.wait_state(str(done), ("DONE",))
    r = slurm("sstat", "-n", "-j", str(done))
    assert (r.code, r.out, r.err) == (1, "", f"sstat: error: couldn't get steps for job {done}\n")


def test_seff_of_a_running_job(slurm, hog):
    r = slurm("seff", str(hog))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    user = slurm.job(str(hog))["user"]
    assert lines[0] == f"Job ID: {hog}"
    assert re.fullmatch(r"Cluster: \S+", lines[1]) and lines[2].startswith(f"User/Group: {user}/")
    assert lines[3:5] == ["State: RUNNING (exit code 0)", "Cores: 1"]
    assert [line.split(":")[0] for line in lines[5:10]] == [
        "CPU Utilized", "CPU Efficiency", "Job Wall-clock time", "Memory Utilized", "Memory Efficiency"]
    assert lines[5] >= "CPU Utilized: 00:00:02"
    assert re.fullmatch(r"CPU Efficiency: \d+\.\d\d% of \d\d:\d\d:\d\d core-walltime", lines[6])
    used = float(re.fullmatch(r"Memory Utilized: (\d+\.\d\d) MB", lines[8]).group(1))
    assert 55 <= used <= 150
    efficiency = float(re.fullmatch(r"Memory Efficiency: (\d+\.\d\d)% of 200\.00 MB", lines[9]).group(1))
    assert efficiency == pytest.approx(100 * used / 200, abs=0.01)  # of the 200M asked for
    assert lines[10] == "WARNING: Efficiency statistics may be misleading for RUNNING jobs."


def test_seff_of_a_finished_job_with_several_cores(slurm):
    jobid = submit(slurm, "-n", "2", "--wrap", "python3 -c 'import time\nwhile time.process_time() < 1.2: pass'")
    slurm.wait_state(str(jobid), ("DONE",))
    r = slurm("seff", str(jobid))
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[3:6] == ["State: COMPLETED (exit code 0)", "Nodes: 1", "Cores per node: 2"]
    assert lines[6] >= "CPU Utilized: 00:00:01" and "WARNING" not in r.out
    assert lines[-1] == "Memory Efficiency: 0.00% of 0.00 MB"  # nothing requested


@pytest.mark.parametrize("argv, out, err", [
    ([], "", "Usage: seff [Options] <Jobid>"),
    (["99999"], "", "Job not found."),
    (["x"], "", "Invalid job id: x"),
])
def test_seff_refusals(slurm, argv, out, err):
    r = slurm("seff", *argv)
    assert r.code == 1 and r.out == out and r.err.splitlines()[0] == err


def test_sprio_lists_pending_jobs_with_their_factors(slurm, hog):
    filler = submit(slurm, "-n", "2", "--wrap", "sleep 300")  # the other two slots: the next jobs wait
    slurm.wait_state(str(filler), ("RUN",))
    waiting = [submit(slurm, "-p", "fair", "--wrap", "true"), submit(slurm, "-p", "normal", "--wrap", "true")]
    for jobid in waiting:
        slurm.wait_state(str(jobid), ("PEND",))
    r = slurm("sprio")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "          JOBID PARTITION   PRIORITY        AGE  FAIRSHARE  PARTITION"
    rows = {int(line.split()[0]): line for line in lines[1:]}
    assert set(rows) == set(waiting)  # pending jobs only
    fair, normal = rows[waiting[0]], rows[waiting[1]]
    assert fair == f"{waiting[0]:>15} {'fair':<9} {0:>10} {0:>10} {fair[48:58]} {20:>10}"
    assert 0 < float(fair[48:58]) <= 1  # the user's fair-share factor in that queue
    assert normal == f"{waiting[1]:>15} {'normal':<9} {0:>10} {0:>10} {'':>10} {30:>10}"
    r = slurm("sprio", "-h", "-l", "-j", str(waiting[1]))
    user = slurm.job(str(waiting[1]))["user"]
    assert (r.code, r.out) == (0, f"{waiting[1]:>15} {'normal':<9} {user[:8]:>8} {0:>10} {0:>10} {'':>10} "
                                  f"{30:>10} {0:>11}\n")
    r = slurm("sprio", "-h", "-n", "-o", "%i|%P|%r", "-u", user)
    assert r.out.splitlines() == [f"{waiting[0]}|0.6666667|fair", f"{waiting[1]}|1.0000000|normal"]
    r = slurm("sprio", "-j", str(hog))
    assert (r.code, r.err) == (1, "Unable to find jobs matching user/id(s) specified\n")
    r = slurm("sprio", "-o", "%z")
    assert (r.code, r.err) == (1, "sprio: error: Invalid job format specification: z\n")
    assert slurm("scancel", str(filler), *map(str, waiting)).code == 0  # the slots, for the tests after


def test_sshare_shows_fair_share_from_usage(slurm, hog):
    from xce.testing.wait import wait_for

    user = slurm.job(str(hog))["user"]
    wait_for(lambda: int(slurm("sshare", "-P", "-n").out.splitlines()[-1].split("|")[4]) > 0, 30,
             "the running job's usage to count")
    r = slurm("sshare")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == ("             Account       User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare"
                        .replace("             Account", "Account             "))
    assert lines[1] == "-------------------- ---------- ---------- ----------- ----------- ------------- ----------"
    assert lines[2].startswith("root                 ")
    assert lines[3].startswith(" fair                ")
    mine = lines[4].split()
    assert mine[:2] == ["fair", user] and mine[2:4] == ["1", "1.000000"]
    assert mine[5] == "1.000000" and float(mine[6]) == pytest.approx(0.5)  # all the usage: 2 ** -1
    r = slurm("sshare", "-l", "-P", "-a", "-A", "fair")
    header, *rows = r.out.splitlines()
    assert header == "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS"
    assert [row.split("|")[:2] for row in rows] == [["root", ""], [" fair", ""], ["  fair", user]]
    r = slurm("sshare", "-n", "-P", "-u", "nobody-here")
    assert [row.split("|")[0] for row in r.out.splitlines()] == ["root", " fair"]


def test_sattach_refuses_a_batch_job_and_unknown_ones(slurm, hog):
    r = slurm("sattach", f"{hog}.0")
    assert r.code == 1 and r.out == ""
    assert r.err.startswith(f"sattach: error: Job step {hog}.0 does not exist: job {hog} is a batch job")
    r = slurm("sattach", "99999.0")
    assert (r.code, r.err) == (1, "sattach: error: Invalid job id specified: 99999\n")
    r = slurm("sattach")
    assert r.code == 1 and r.err.startswith("sattach: you must specify exactly one job step")


def test_sattach_is_the_terminal_of_an_interactive_job(slurm):
    """Its output, then its exit status (a job started with a terminal: ``srun --pty``, ``bsub -I``)."""
    c = slurm.api()
    try:
        jobid = c.request("POST", "/v1/jobs", body={"command": ["sh", "-c", "read line; echo got $line; exit 3"],
                                                    "interactive": True, "cwd": str(slurm.work)})["jobid"]
    finally:
        c.close()
    slurm.wait_state(str(jobid), ("RUN",))
    r = slurm("sattach", f"{jobid}.0", input="hello\n")
    assert r.code == 3, r.err
    assert "got hello" in r.out
