"""Job scripts as LSF and Slurm users write them, run on a real cluster: #SBATCH lines and Slurm's
file name codes, a script on standard input, a script deleted as soon as it is submitted, and two
-R merged into one requirement."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FAST, Cli

from xce.cluster import LocalCluster

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("directives")
    (base / "work").mkdir()
    cluster = LocalCluster(base / "state", 1, 2, **FAST)
    cluster.start()
    yield cluster, Cli(cluster, base / "work")
    cluster.stop()


def test_sbatch_lines_name_the_output_file_and_errors_land_in_it(cluster):
    c, xce = cluster
    script = xce.cwd / "fit.sh"
    script.write_text("#!/bin/sh\n"
                      "#SBATCH --job-name=fit\n"
                      "#SBATCH -o out-%x-%j-%N.txt\n"
                      "echo to-out\n"
                      "echo to-err >&2\n")
    jobid = xce.submit(str(script))
    xce.wait_state(jobid, "DONE", 30)
    host = c.worker_names[0].split(".")[0]
    out = xce.cwd / f"out-fit-{jobid}-{host}.txt"
    assert out.read_text() == "to-out\nto-err\n"
    assert not (xce.cwd / f"xce-{jobid}.err").exists()


def test_a_script_on_standard_input_runs(cluster):
    c, xce = cluster
    script = "#!/bin/sh\n#BSUB -o piped.%J\necho \"piped $XCE_JOBID\"\n"
    r = subprocess.run([sys.executable, "-m", "xce.cli.main", "submit", "--json"], input=script, text=True,
                       capture_output=True, env=c.env(), cwd=xce.cwd, timeout=60)
    assert r.returncode == 0, r.stderr
    jobid = int(json.loads(r.stdout)["jobid"])
    xce.wait_state(jobid, "DONE", 30)
    assert (xce.cwd / f"piped.{jobid}").read_text() == f"piped {jobid}\n"


def test_a_script_deleted_right_after_submission_still_runs(cluster):
    c, xce = cluster
    script = xce.cwd / "gone.sh"
    script.write_text("#!/bin/sh\n#BSUB -oo gone.%J\necho \"still here: $1\"\n")
    jobid = xce.submit("-H", str(script), "arg one")  # held: it cannot start before the file is gone
    script.unlink()
    xce("release", str(jobid))
    xce.wait_state(jobid, "DONE", 30)
    assert (xce.cwd / f"gone.{jobid}").read_text() == "still here: arg one\n"


def test_two_r_are_merged_into_one_requirement(cluster):
    c, xce = cluster
    jobid = xce.submit("-R", "select[maxmem>1M]", "-R", "rusage[mem=10M]", "--", "true")
    job = xce.wait_state(jobid, "DONE", 30)
    assert job["request"] == "select[maxmem>1M] rusage[mem=10M]"
