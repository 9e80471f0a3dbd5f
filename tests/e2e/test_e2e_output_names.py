"""Where a job's output goes without ``-o``, as the user guide says it does (a user reads the guide,
then looks for the file by that name)."""

from __future__ import annotations

import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"


def test_output_without_o_goes_where_the_user_guide_says(make_cluster):
    stated = re.search(r"Without `-o`: `(xce-<jobid>\.out)` and `(xce-<jobid>\.err)` in the job's working directory",
                       GUIDE.read_text())
    assert stated, "the user guide no longer says where output goes without -o"
    cluster, cli = make_cluster(workers=1, slots=1)
    jobid = cli.submit("--", "sh", "-c", "echo to-out; echo to-err >&2")
    assert cli.wait_state(jobid, ("DONE", "EXIT"))["state"] == "DONE"
    out, err = (cli.cwd / name.replace("<jobid>", str(jobid)) for name in stated.groups())
    assert out.read_text() == "to-out\n"
    assert err.read_text() == "to-err\n"
