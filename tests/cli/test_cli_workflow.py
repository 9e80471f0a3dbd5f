"""Job names, holds and acting on many jobs at once, against a real controller (no workers: jobs pend)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def _user(cli, name: str) -> dict[str, str]:
    r = cli.admin("user", "add", name)
    assert r.code == 0, r.err
    return {"XCE_TOKEN": r.out.strip()}


def _states(cli, env, *jobids) -> dict[int, str]:
    jobs = cli.xce("jobs", "--json", "-a", *map(str, jobids), env=env).json()["jobs"]
    return {j["jobid"]: j["state"] for j in jobs}


def test_kill_0_ends_all_and_only_the_callers_jobs(cli):
    ann, ben = _user(cli, "ann_k0"), _user(cli, "ben_k0")
    mine = [cli.xce("submit", "--json", "-q", q, "--", "sleep", "60", env=ann).json()["jobid"]
            for q in ("normal", "high", "high")]
    theirs = cli.xce("submit", "--json", "--", "sleep", "60", env=ben).json()["jobid"]
    r = cli.xce("kill", "0", "-q", "high", env=ann)
    assert r.code == 0, r.err
    assert r.out.splitlines() == [f"Job <{mine[1]}> is killed.", f"Job <{mine[2]}> is killed."]
    assert _states(cli, ann, *mine) == {mine[0]: "PEND", mine[1]: "EXIT", mine[2]: "EXIT"}
    r = cli.xce("kill", "0", env=ann)
    assert (r.code, r.out) == (0, f"Job <{mine[0]}> is killed.\n")
    assert _states(cli, ben, theirs) == {theirs: "PEND"}
    r = cli.xce("kill", "0", env=ann)  # nothing left: said, and a failure
    assert r.code == 1 and "No unfinished job found" in r.err
    r = cli.xce("kill", "0", "-u", "ann_k0", env=ben)  # bkill -u is an administrator's
    assert r.code == 1 and r.err == "xce: only an admin may act on ann_k0's jobs\n"
    r = cli.xce("kill", "-u", "ann_k0", str(theirs))  # ids with -u: only that user's
    assert r.code == 1 and r.err == "No unfinished job found\n" and _states(cli, ben, theirs) == {theirs: "PEND"}
    r = cli.xce("kill", "0", "-u", "ben_k0")  # the admin
    assert (r.code, r.out) == (0, f"Job <{theirs}> is killed.\n")


def test_names_and_holds(cli):
    ann = _user(cli, "ann_names")
    a = cli.xce("submit", "--json", "-J", "prep", "-H", "--", "true", env=ann).json()["jobid"]
    job = cli.xce("jobs", "-l", "--json", "prep", env=ann).json()["jobs"][0]
    assert (job["jobid"], job["name"], job["state"], job["held_by"]) == (a, "prep", "PEND", "ann_names")
    assert job["pend_reasons"] == [{"step": "held", "text": f"held by ann_names: `xce release {a}` lets it run"}]
    r = cli.xce("hold", "prep", env=ann)
    assert r.code == 1 and r.err == f"xce: cannot hold job {a}: it is already held (by ann_names)\n"
    r = cli.xce("release", "prep", env=ann)
    assert (r.code, r.out) == (0, f"Job <{a}> is released.\n")
    job = cli.xce("jobs", "-l", "--json", str(a), env=ann).json()["jobs"][0]
    assert job["held_by"] is None and job["pend_reasons"] == []
    assert [h["reason"] for h in job["history"]] == ["submitted", "released by ann_names"]
    # a second job of the same name makes the name ambiguous while both are unfinished
    b = cli.xce("submit", "--json", "-J", "prep", "--", "true", env=ann).json()["jobid"]
    r = cli.xce("kill", "prep", env=ann)
    assert r.code == 1 and r.err == f"xce: job name 'prep' is ambiguous: it names jobs {a}, {b} (give a job id)\n"
    r = cli.xce("kill", "-J", "prep", env=ann)  # -J means every job of that name
    assert r.out.splitlines() == [f"Job <{a}> is killed.", f"Job <{b}> is killed."]
    r = cli.xce("jobs", "nosuchname", env=ann)
    assert r.code == 1 and r.err == "xce: no job of yours is named 'nosuchname'\n"


def test_arrays_by_element_and_range(cli):
    ann = _user(cli, "ann_arr")
    arr = cli.xce("submit", "--json", "--array", "1-10:3", "--", "true", env=ann).json()
    assert arr["indexes"] == [1, 4, 7, 10]
    first = arr["jobid"]
    r = cli.xce("hold", f"{first}[4-7]", env=ann)
    assert r.code == 0, r.err
    assert r.out.splitlines() == [f"Job <{first}[4]> is held.", f"Job <{first}[7]> is held."]
    r = cli.xce("kill", f"{first}[1]", f"{first}[2]", env=ann)
    assert r.code == 1 and r.out == f"Job <{first}[1]> is killed.\n"
    assert r.err == f"xce: job {first}[2] does not exist\n"
    r = cli.xce("kill", "--json", str(first), env=ann)  # the whole array: what is left of it
    results = r.json()["results"]
    assert [(x["job"], x["ok"]) for x in results] == [(f"{first}[1]", False), (f"{first}[4]", True),
                                                      (f"{first}[7]", True), (f"{first}[10]", True)]
    assert results[0]["message"] == f"cannot kill job {first}[1]: it is EXIT (only a PEND/RUN/SSUSP/USUSP/UNKWN job can be killed)"


def test_kill_with_a_signal_needs_a_process(cli):
    ann = _user(cli, "ann_sig")
    a = cli.xce("submit", "--json", "--", "sleep", "60", env=ann).json()["jobid"]
    r = cli.xce("kill", "-s", "USR1", str(a), env=ann)
    assert r.code == 1 and r.err == (f"xce: cannot kill job {a}: it is PEND: there is no process to send SIGUSR1 to "
                                     f"(only SIGHUP, SIGINT, SIGKILL, SIGQUIT, SIGTERM end a pending job)\n")
    r = cli.xce("kill", "-s", "NOSUCH", str(a), env=ann)
    assert r.code == 1 and r.err == "xce: signal: unknown signal 'NOSUCH' (expected a name such as SIGUSR1 or USR1, or a number)\n"
    r = cli.xce("kill", "-s", "9", str(a), env=ann)
    assert (r.code, r.out) == (0, f"Job <{a}> is killed.\n")


def test_dependencies_are_checked_at_submission_with_the_column(cli):
    ann = _user(cli, "ann_dep")
    a = cli.xce("submit", "--json", "-J", "stepa", "--", "true", env=ann).json()["jobid"]
    r = cli.xce("submit", "-w", "done(stepa) && (exit(", "--", "true", env=ann)
    assert r.code == 1 and r.err == ("xce: depend: dependency 'done(stepa) && (exit(' column 22: expected a condition "
                                     "such as done(12) or a job, found the end\n")
    r = cli.xce("submit", "-w", "done(nosuch)", "--", "true", env=ann)
    assert r.code == 1 and r.err == ("xce: depend: dependency 'done(nosuch)' column 6: no job of yours is named "
                                     "'nosuch'\n")
    r = cli.xce("submit", "--dependency", "afterwards:1", "--", "true", env=ann)
    assert r.code == 2 and "is not TYPE:JOB[:JOB...]" in r.err
    b = cli.xce("submit", "--json", "--dependency", f"afterok:{a}", "--", "true", env=ann).json()["jobid"]
    job = cli.xce("jobs", "-l", "--json", str(b), env=ann).json()["jobs"][0]
    assert job["pend_reasons"] == [{"step": "depend", "text": f"waiting for done({a}) (done({a}))"}]
    c = cli.xce("submit", "--json", "-w", "ended(stepa) || !started(stepa)", "--", "true", env=ann).json()["jobid"]
    assert cli.xce("jobs", "-l", "--json", str(c), env=ann).json()["jobs"][0]["pend_reasons"][0]["text"] == (
        f"waiting for ended({a}) and !started({a}) (ended({a}) || !started({a}))")
    # the first job is killed before it ran: done() can never be met, started() neither, ended() is
    cli.xce("kill", str(a), env=ann)
    job = cli.xce("jobs", "-l", "--json", str(b), env=ann).json()["jobs"][0]
    for _ in range(50):
        if "never" in job["pend_reasons"][0]["text"]:
            break
        import time
        time.sleep(0.1)
        job = cli.xce("jobs", "-l", "--json", str(b), env=ann).json()["jobs"][0]
    assert job["pend_reasons"] == [{"step": "depend", "text": f"dependency can never be met: done({a}): job {a} "
                                    f"ended EXIT (`xce kill --orphans` removes such jobs)"}]
    r = cli.xce("kill", "--orphans", env=ann)
    assert (r.code, r.out) == (0, f"Job <{b}> is killed.\n")


def test_views_pending_with_reasons_columns_and_history(cli):
    ann = _user(cli, "ann_views")
    a = cli.xce("submit", "--json", "-J", "vheld", "-H", "--", "true", env=ann).json()["jobid"]
    b = cli.xce("submit", "--json", "-J", "vlater", "-b", "+1h", "--", "true", env=ann).json()["jobid"]
    r = cli.xce("jobs", "-p", env=ann)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].split()[:3] == ["JOBID", "USER", "STAT"] and len(lines) == 5
    assert lines[3] == f"{a}: [held] held by ann_views: `xce release {a}` lets it run"
    assert lines[4].startswith(f"{b}: [begin] will not start before ")
    r = cli.xce("jobs", "-o", "jobid,name stat pend_reason", "vheld", env=ann)
    assert r.out.splitlines() == ["JOBID  JOB_NAME  STAT  PEND_REASON",
                                  f"{a:<5}  vheld     PEND  held by ann_views: `xce release {a}` lets it run"
                                  .replace(f"{a:<5}", str(a).ljust(5))]
    assert cli.xce("jobs", "-o", "jobid nosuch", env=ann).code == 2
    cli.xce("kill", "vheld", env=ann)
    assert [j["jobid"] for j in cli.xce("jobs", "-d", "--json", env=ann).json()["jobs"]] == [a]
    assert cli.xce("jobs", "-r", env=ann).out == "No unfinished job found\n"
    r = cli.xce("hist", "vheld", env=ann)
    assert r.code == 0, r.err
    out = r.out.splitlines()
    assert out[0] == f"Job <{a}>, Job Name <vheld>, User <ann_views>, Queue <normal>, State <EXIT>"
    assert "- -> PEND" in out[1] and "submitted (by ann_views)" in out[1]
    assert "PEND -> EXIT" in out[2] and "killed by ann_views" in out[2]
    assert out[3].startswith("  Time in each state: PEND ") and "; total " in out[3]
    r = cli.xce("hist", "--json", "vheld", "999999", env=ann)
    assert r.code == 1 and r.err == "xce: job 999999 does not exist\n"
    assert [h["to"] for h in r.json()["jobs"][0]["history"]] == ["PEND", "EXIT"]


def test_a_job_script_brings_its_own_options_and_the_command_line_wins(cli, tmp_path):
    ann = _user(cli, "ann_script")
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\n"
                      "#\n"
                      "#BSUB -J from_bsub -q high -o out.%J\n"
                      "#SBATCH --ntasks=2 --job-name from_sbatch\n"
                      "#XCE --env A=1 --priority 7\n"
                      "echo hello\n"
                      "#XCE --priority 99\n")  # after the leading block: not a directive
    script.chmod(0o755)
    r = cli.xce("submit", "--json", "-q", "normal", str(script), "arg1", env=ann)
    assert r.code == 0, r.err
    job = r.json()["job"]
    assert (job["name"], job["queue"], job["tasks"], job["priority"], job["env"]["A"]) == (
        "from_sbatch", "normal", 2, 7, "1")
    assert job["command"] == [str(script), "arg1"] and job["stdout"] == f"out.{job['jobid']}"
    bad = tmp_path / "bad.sh"
    bad.write_text("#!/bin/sh\n#BSUB -Zz\ntrue\n")
    r = cli.xce("submit", str(bad), env=ann)
    assert r.code == 2 and r.err == f"xce: {bad} line 2: illegal option -- Z\n"  # bsub's words
    plain = tmp_path / "plain.sh"
    plain.write_text("#SBATCH -J not_executable\necho hi\n")
    job = cli.xce("submit", "--json", str(plain), env=ann).json()["job"]
    assert job["command"] == [str(plain)] and job["name"] == "not_executable"  # spooled: run under /bin/sh


def test_queues_long_form_names_every_setting(cli):
    r = cli.xce("queues", "-l", "high")
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "QUEUE: high" and "  priority: 50" in lines and "  status: open" in lines
    assert lines[-1].startswith("  jobs: PEND ")
    r = cli.xce("queues", "-l", "nosuch")
    assert r.code == 1 and r.err == "xce: unknown queue 'nosuch' (expected one of: high, normal)\n"


def test_modify_every_submission_option_while_pending(cli):
    ann = _user(cli, "ann_mod")
    a = cli.xce("submit", "--json", "-J", "before", "-b", "+1h", "--", "true", env=ann).json()["jobid"]
    r = cli.xce("modify", str(a), "-J", "after", "-n", "3", "-R", "rusage[mem=1G]", "-o", "o.txt", "-b", "+0s",
                env=ann)
    assert r.code == 0, r.err
    job = cli.xce("jobs", "-l", "--json", "after", env=ann).json()["jobs"][0]
    assert (job["jobid"], job["tasks"], job["request"], job["stdout"], job["pend_reasons"]) == (
        a, 3, "rusage[mem=1G]", "o.txt", [])
    assert job["history"][-1]["reason"].startswith("modified: name before -> after, tasks 1 -> 3")
    r = cli.xce("modify", str(a), "-R", "select[mem>", env=ann)
    assert r.code == 1 and r.err.startswith('xce: request: resource requirement "select[mem>" column 12')
    r = cli.xce("modify", str(a), "-w", "done(nosuch)", env=ann)
    assert r.code == 1 and "no job of yours is named 'nosuch'" in r.err
    cli.xce("kill", str(a), env=ann)
    r = cli.xce("modify", str(a), "-n", "2", env=ann)
    assert r.code == 1 and "it is EXIT" in r.err


def test_modify_takes_a_job_as_people_write_it_and_shows_what_changed(cli):
    """Names and ID[INDEX] as every other command takes them; times and limits as people read them."""
    ann = _user(cli, "ann_ref")
    a = cli.xce("submit", "--json", "-J", "refd", "-b", "+1h", "--", "true", env=ann).json()["jobid"]
    r = cli.xce("modify", "refd", "--priority", "5", env=ann)
    assert r.code == 0 and r.out.startswith(f"Job <{a}>: priority 5"), r.err
    arr = cli.xce("submit", "--json", "-J", "sweep", "--array", "1-3", "--", "true", env=ann).json()
    r = cli.xce("modify", f"{arr['array_id']}[3]", "--priority", "7", env=ann)
    assert r.code == 0 and r.out.startswith(f"Job <{arr['jobids'][2]}>: priority 7"), r.err
    r = cli.xce("modify", "sweep", "--priority", "7", env=ann)
    assert r.code == 1 and "sweep names 3 jobs" in r.err and len(r.err.splitlines()) == 1, r.err
    r = cli.xce("modify", "nosuch", "--priority", "7", env=ann)
    assert r.code == 1 and r.err == "xce: no job of yours is named 'nosuch'\n", r.err
    r = cli.xce("modify", "refd", "-W", "1:30", "-b", "+0s", env=ann)
    assert r.code == 0 and r.out.startswith(f"Job <{a}>: run limit 1:30:00, "), r.out
    reason = cli.xce("jobs", "-l", "--json", str(a), env=ann).json()["jobs"][0]["history"][-1]["reason"]
    assert "run limit " in reason and "-> 1:30:00" in reason and "begin time 20" in reason, reason
    assert "begin_time" not in reason and not any(len(w) > 12 and w.isdigit() for w in reason.split()), reason


def test_tables_keep_one_line_per_job_and_acct_names_array_elements_by_their_array(cli):
    ann = _user(cli, "ann_tbl")
    multi = cli.xce("submit", "--json", "--", "sh", "-c", "echo one\necho two", env=ann).json()["jobid"]
    lines = [line for line in cli.xce("jobs", env=ann).out.splitlines() if line.startswith(str(multi))]
    assert len(lines) == 1 and "echo one\\necho two" in lines[0], lines
    long = cli.xce("jobs", "-l", str(multi), env=ann).out
    assert "Command <sh -c echo one\\necho two>\n" in long, long
    arr = cli.xce("submit", "--json", "--array", "1-3", "--", "true", env=ann).json()
    cli.xce("kill", str(arr["array_id"]), env=ann)
    out = cli.xce("acct", env=ann).out
    assert f"{arr['array_id']}[3] " in out and f"{arr['jobids'][2]}[3]" not in out, out
