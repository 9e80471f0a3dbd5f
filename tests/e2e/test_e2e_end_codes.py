"""How each job ended, in one word, on a real cluster: the worker says what it did (a run or memory
limit), the controller what it decided (a kill, a start that failed) and what the exit status says."""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.integration


def test_each_end_has_its_word_in_the_job_and_in_its_long_form(make_cluster):
    cluster, xce = make_cluster(workers=1, slots=6)
    grab = "b = bytearray(600 * 1024 * 1024); import time; time.sleep(20)"
    jobs = {
        "RUNLIMIT": xce.submit("--time", "0:02", "--", "sleep", "60"),
        "MEMLIMIT": xce.submit("--limit", "mem=100M", "--", sys.executable, "-c", grab),
        "KILLED": xce.submit("--", "sleep", "60"),
        "NOT_STARTED": xce.submit("--", "xce-no-such-command"),
        "EXIT": xce.submit("--", "sh", "-c", "exit 3"),
        "DONE": xce.submit("-J", "fit (v2)", "--", "true"),
    }
    # Its child killed for memory, the script carries on and exits 0: still MEMLIMIT, EXIT.
    child = xce.submit("--limit", "mem=100M", "--", "sh", "-c", f"{sys.executable} -c '{grab}'; exit 0")
    xce.wait_state(jobs["KILLED"], "RUN", 30)
    xce("kill", str(jobs["KILLED"]))
    ended = {code: xce.wait_state(jobid, ("DONE", "EXIT"), 60) for code, jobid in jobs.items()}
    assert {code: job["end"]["code"] for code, job in ended.items()} == {code: code for code in jobs}
    killed = ended["KILLED"]
    assert killed["end"]["by"] == killed["history"][-1]["by"] == killed["user"]  # whoever ran `xce kill`
    assert all(job["end"]["by"] is None for code, job in ended.items() if code != "KILLED")
    # The exit status stays where it was: the code says why, not how.
    assert (ended["EXIT"]["exit_code"], ended["RUNLIMIT"]["exit_signal"], ended["MEMLIMIT"]["exit_signal"]) == (
        3, "SIGTERM", "SIGKILL")
    assert "run limit 0:00:02 reached" in ended["RUNLIMIT"]["reason"]
    child = xce.wait_state(child, ("DONE", "EXIT"), 60)
    assert (child["state"], child["exit_code"], child["end"]["code"]) == ("EXIT", 0, "MEMLIMIT"), child
    assert "memory limit 100M reached" in child["reason"], child["reason"]

    shown = xce("jobs", "-l", "fit (v2)").stdout
    assert "Job Name <fit (v2)>" in shown and "\nEnd: DONE\n" in shown, shown
    shown = xce("jobs", "-l", str(jobs["KILLED"])).stdout
    assert f"\nEnd: KILLED (by {killed['user']})\n" in shown, shown
