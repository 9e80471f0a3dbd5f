"""A job that never started (its working directory does not exist) has one exit code in every
command: 127, the shell's "could not run the command", which LSF and Slurm show for such a job
(both run a job's command through a shell). ``xce acct --csv`` writes its times in ISO 8601, UTC."""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "lsf"))
from lsf_helpers import Lsf, start_cluster  # noqa: E402

pytestmark = [pytest.mark.integration]


def _run(lsf: Lsf, argv: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", *argv], capture_output=True, text=True, env=lsf.env, cwd=lsf.cwd,
                          timeout=60)


def test_a_job_that_never_started_has_one_exit_code_everywhere(tmp_path):
    cluster = start_cluster(tmp_path)
    try:
        work = tmp_path / "work"
        work.mkdir()
        lsf = Lsf(cluster, work)
        before = time.time()
        jobid = lsf.submit("-cwd", str(tmp_path / "no-such-dir"), "true")
        job = lsf.wait_state(jobid, "EXIT")
        assert job["end"]["code"] == "NOT_STARTED" and job["exit_code"] is None, job
        assert lsf("bjobs", "-noheader", "-o", "exit_code exit_reason delimiter='|'", str(jobid)).lines == [
            "127|TERM_CWD_NOTEXIST: current working directory not accessible or does not exist on the execution host"]
        assert "Exited with exit code 127." in lsf("bhist", "-l", str(jobid)).out
        slurm = ("import sys; from xce.compat.slurm import sacct; sys.exit(sacct.main(sys.argv[1:]))",)
        r = _run(lsf, [*slurm, "-j", str(jobid), "-X", "-n", "-P", "-o", "JobID,State,ExitCode"])
        assert r.returncode == 0 and r.stdout.splitlines() == [f"{jobid}|FAILED|127:0"], (r.stdout, r.stderr)
        xce = ("import sys; from xce.cli.main import main; sys.argv[0] = 'xce'; main(sys.argv[1:])",)
        r = _run(lsf, [*xce, "acct", "-u", "all"])
        row = next(line.split() for line in r.stdout.splitlines() if line.startswith(f"{jobid} "))
        assert row[4:6] == ["EXIT", "127"], r.stdout
        r = _run(lsf, [*xce, "acct", "-u", "all", "--csv"])
        record = next(rec for rec in csv.DictReader(io.StringIO(r.stdout)) if rec["jobid"] == str(jobid))
        assert record["exit_code"] == "127", record
        for field in ("submit_time", "start_time", "end_time"):  # a time a spreadsheet reads, to the millisecond
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", record[field]), record
        submitted = time.mktime(time.strptime(record["submit_time"][:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
        assert before - 2 <= submitted <= time.time() + 1, record
    finally:
        cluster.stop()
