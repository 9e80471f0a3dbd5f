"""``bpeek`` and ``lsload`` against a live cluster: a running job's output so far (and followed to its
end), refused to anyone but its owner and for a file that is not the job's own; the load indices of
each host in LSF's columns."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from lsf_helpers import LAUNCH, Lsf, start_cluster, wait_for

pytestmark = [pytest.mark.integration]

#: Prints a line, waits for the file ``go`` in its directory, prints another and ends.
WAITER = "echo one; while [ ! -e go ]; do sleep 0.1; done; echo two"


@pytest.fixture(scope="module")
def lsf(tmp_path_factory):
    base = tmp_path_factory.mktemp("peek")
    cluster = start_cluster(base)
    work = base / "work"
    work.mkdir()
    try:
        yield Lsf(cluster, work)
    finally:
        cluster.stop()


def started(lsf, out: str, *args: str) -> int:
    """A running WAITER job writing ``out``, once its first line is there."""
    jobid = lsf.submit("-o", out, *args, WAITER)
    lsf.wait_state(jobid, "RUN")
    wait_for(lambda: "one" in ((lsf.cwd / out.replace("%J", str(jobid))).read_text()
                               if (lsf.cwd / out.replace("%J", str(jobid))).exists() else ""), 30,
             "the job's first line")
    return jobid


def test_bpeek_shows_the_output_so_far_and_f_follows_it_to_the_end(lsf):
    (lsf.cwd / "go").unlink(missing_ok=True)
    jobid = started(lsf, "peek.%J")
    r = lsf("bpeek", str(jobid))
    assert (r.code, r.out, r.err) == (0, "<< output from stdout >>\none\n", "")
    r = lsf("bpeek")  # no job: the caller's most recent running one
    assert (r.code, r.out) == (0, "<< output from stdout >>\none\n")
    follow = subprocess.Popen([sys.executable, "-c", LAUNCH, "bpeek", "-f", str(jobid)], cwd=lsf.cwd, env=lsf.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert follow.stdout.readline() == "<< output from stdout >>\n"
        assert follow.stdout.readline() == "one\n"
        (lsf.cwd / "go").touch()
        out, err = follow.communicate(timeout=60)  # it ends when the job does
    finally:
        follow.kill()
        (lsf.cwd / "go").unlink(missing_ok=True)
    assert (follow.returncode, out, err) == (0, "two\n", "")
    r = lsf("bpeek", str(jobid))
    assert (r.code, r.out, r.err) == (255, "", f"Job <{jobid}>: Job has already finished.\n")


def test_bpeek_of_a_pending_or_unknown_job(lsf):
    held = lsf.submit("-H", "true")
    r = lsf("bpeek", str(held))
    assert (r.code, r.out, r.err) == (255, "", f"Job <{held}>: Not yet started.\n")
    assert lsf("bkill", str(held)).code == 0
    r = lsf("bpeek", "99999")
    assert (r.code, r.out, r.err) == (255, "", "Job <99999> is not found\n")


def test_bpeek_shows_no_file_that_is_not_the_job_owners(lsf):
    """Even to an administrator (the tests' user is one: a personal cluster has no other users): a job
    owned by ``admin``, which is no account here, wrote a file its owner does not own."""
    (lsf.cwd / "go").unlink(missing_ok=True)
    theirs = lsf.cluster.request("POST", "/v1/jobs", {"command": ["sh", "-c", WAITER], "cwd": str(lsf.cwd),
                                                      "stdout": "theirs.%J"})["jobid"]
    try:
        lsf.wait_state(theirs, "RUN")
        wait_for(lambda: (lsf.cwd / f"theirs.{theirs}").exists(), 30, "their output file")
        r = lsf("bpeek", str(theirs))
        assert r.code == 255 and r.out == "" and "one" not in r.err
        assert r.err == (f"Job <{theirs}>: {lsf.cwd / f'theirs.{theirs}'} does not belong to the job's owner admin: "
                         "not showing it\n")
    finally:
        (lsf.cwd / "go").touch()
        lsf.wait_state(theirs, "DONE")
        (lsf.cwd / "go").unlink()


def test_bpeek_does_not_follow_a_link_the_job_put_in_place_of_its_output(lsf):
    """A job that swaps its output file for a link to another file does not get that file shown
    (to its owner it would be no leak; to an administrator peeking at it, it would be)."""
    (lsf.cwd / "go").unlink(missing_ok=True)
    (lsf.cwd / "secret").write_text("TOP SECRET\n")
    jobid = lsf.submit("-o", "swap.%J", f"echo one; rm swap.$LSB_JOBID; ln -s secret swap.$LSB_JOBID; {WAITER}")
    link = lsf.cwd / f"swap.{jobid}"
    try:
        lsf.wait_state(jobid, "RUN")
        wait_for(lambda: link.is_symlink(), 30, "the job's link")
        r = lsf("bpeek", str(jobid))
        assert r.code == 255 and r.out == "" and "TOP SECRET" not in r.err
        assert r.err.startswith(f"Job <{jobid}>: {link}: not the job's output file")
    finally:
        (lsf.cwd / "go").touch()
        lsf.wait_state(jobid, "DONE", "EXIT")
        (lsf.cwd / "go").unlink()


HEADER = "HOST_NAME       status  r15s   r1m  r15m   ut    pg  ls    it   tmp   swp   mem"


def test_lsload_lists_each_hosts_load_indices(lsf):
    hosts = lsf.cluster.request("GET", "/v1/hosts")["hosts"]
    wait_for(lambda: all(h.get("load") for h in lsf.cluster.request("GET", "/v1/hosts")["hosts"]), 30,
             "every worker's first load report")
    r = lsf("lsload")
    assert r.code == 0, r.err
    header, *rows = r.lines
    assert header == HEADER
    assert [row.split()[0] for row in rows] == [h["name"] for h in hosts]
    for row in rows:
        assert len(row) == len(header)
        name, status, r15s, r1m, r15m, ut, pg, ls, it, tmp, swp, mem = row.split()
        assert status == "ok"
        assert all(re.fullmatch(r"\d+\.\d", v) for v in (r15s, r1m, r15m))
        assert re.fullmatch(r"\d+%", ut) and re.fullmatch(r"\d+(\.\d)?[MG]", mem)
        assert (pg, ls, it, tmp) == ("-", "-", "-", "-")  # not measured here: LSF's "-"
    r = lsf("lsload", "-l", hosts[0]["name"])
    header, row = r.lines
    assert header.split() == ["HOST_NAME", "status", "r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp",
                              "swp", "mem"]
    assert re.fullmatch(r"\d+M", row.split()[-1])  # -l: whole megabytes
    r = lsf("lsload", "-I", "r1m:mem")
    assert r.lines[0] == "HOST_NAME       status   r1m   mem" and len(r.lines) == len(hosts) + 1


@pytest.mark.parametrize("argv, err", [
    (["nohost"], "nohost: Unknown host"),
    (["-I", "bogus"], "lsload: bogus: Bad load index name"),
    (["-z"], "lsload: illegal option -- z"),
])
def test_lsload_refusals(lsf, argv, err):
    r = lsf("lsload", *argv)
    assert r.code == 255 and r.out == "" and r.err.splitlines()[0] == err


def test_bpeek_of_another_users_job_is_refused(tmp_path):
    """On a multi-user cluster: ``daemon`` may not peek at ``nobody``'s job, whatever state it is in."""
    from xce.cluster import LocalCluster

    cluster = LocalCluster(tmp_path / "state", 1, 1, run_as_self=False, round_interval=0.05, report_interval=0.5)
    try:
        cluster.start()
        tokens = {name: cluster.request("POST", "/v1/admin/tokens", {"name": name, "role": "user"})["token"]
                  for name in ("nobody", "daemon")}
        lsf = Lsf(cluster, tmp_path)
        as_ = {name: {"XCE_TOKEN": token, "XCE_URL": cluster.url} for name, token in tokens.items()}
        r = lsf("bsub", "-H", "-cwd", "/tmp", "-o", "/tmp/never.%J", "echo private", env=as_["nobody"])
        assert r.code == 0, r.err
        jobid = int(r.out.split("<")[1].split(">")[0])
        r = lsf("bpeek", str(jobid), env=as_["daemon"])
        assert r.code == 255 and r.out == ""
        assert r.err in (f"Job <{jobid}>: User permission denied\n", f"Job <{jobid}> is not found\n")
        r = lsf("bpeek", str(jobid), env=as_["nobody"])  # its owner gets past that, to the job's state
        assert (r.code, r.err) == (255, f"Job <{jobid}>: Not yet started.\n")
    finally:
        cluster.stop()
