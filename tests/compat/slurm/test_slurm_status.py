"""``squeue``, ``sacct``, ``scancel``, ``scontrol`` and ``sinfo`` against a live cluster holding jobs
in every state a client polls for: each table row is a command line and the lines Slurm prints."""

from __future__ import annotations

import pwd
import re

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def submit(slurm, *args: str) -> int:
    r = slurm("sbatch", "--parsable", *args)
    assert r.code == 0, r.err
    return int(r.out)


@pytest.fixture(scope="module")
def jobs(slurm):
    """Jobs ended every way, one running, pending ones; their ids and the user's name and uid."""
    ids = {
        "done": submit(slurm, "--wrap", "true"),
        "failed": submit(slurm, "--wrap", "exit 3"),
        "cancelled": submit(slurm, "--wrap", "sleep 300"),
        "timeout": submit(slurm, "-t", "0:01", "--wrap", "sleep 300"),
        "running": submit(slurm, "-J", "runner", "-t", "10", "--wrap", "sleep 300"),
        "waiter": submit(slurm, "-H", "-J", "waiter", "--wrap", "true"),
        "array": submit(slurm, "-H", "-a", "1-3", "--wrap", "true"),
    }
    slurm.wait_state(str(ids["cancelled"]), ("RUN",))
    r = slurm("scancel", str(ids["cancelled"]))
    assert (r.code, r.out, r.err) == (0, "", "")
    for key in ("done", "failed", "cancelled", "timeout"):
        slurm.wait_state(str(ids[key]), ("DONE", "EXIT"))
    slurm.wait_state(str(ids["running"]), ("RUN",))
    user = slurm.job(str(ids["done"]))["user"]
    try:
        uid = pwd.getpwnam(user).pw_uid
    except KeyError:
        uid = 0
    element = slurm.job(f"{ids['array']}_2")["jobid"]
    return {**ids, "user": user, "uid": uid, "element2": element, "host": slurm.job(str(ids["running"]))
            ["placement"][0]["host"], "host_cancelled": slurm.job(str(ids["cancelled"]))["placement"][0]["host"]}


def lines(text: str) -> list[str]:
    return text.splitlines()


def fill(template, j: dict):
    return [t.format(**j) for t in template] if isinstance(template, list) else template.format(**j)


# -- squeue ----------------------------------------------------------------------------------------

SQUEUE = [
    (["-h", "-t", "all", "-j", "{done},{failed},{cancelled},{timeout},{running}", "-o", "%i %t %T %r"],
     ["{done} CD COMPLETED None", "{failed} F FAILED NonZeroExitCode", "{cancelled} CA CANCELLED None",
      "{timeout} TO TIMEOUT TimeLimit", "{running} R RUNNING None"]),
    # an ended job keeps why it ended (slurmctld's job_complete sets FAIL_EXIT_CODE, FAIL_TIMEOUT), and %R
    # shows it in place of the nodes for a failed or timed-out one (squeue's _print_job_reason_list)
    (["-h", "-t", "F,TO,CA", "-o", "%i|%R"], ["{failed}|(NonZeroExitCode)", "{cancelled}|{host_cancelled}",
                                              "{timeout}|(TimeLimit)"]),
    (["-h", "-t", "all", "-j", "{failed}", "-O", "JobArrayID,StateCompact,Reason"],
     ["{failed:<20}F                   NonZeroExitCode     "]),
    # -j alone keeps squeue's default states: an ended job is gone (a poller's sign that it ended)
    (["-h", "-j", "{done},{failed},{cancelled},{timeout},{running}", "-o", "%i %t"], ["{running} R"]),
    (["-j", "{done}"], ["             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"]),
    (["-h", "-j", "{failed}", "-t", "F", "-o", "%i %T"], ["{failed} FAILED"]),
    (["-h", "-u", "{user}", "-o", "%i %t %j"],  # default states: what is still in the system
     ["{running} R runner", "{waiter} PD waiter", "{array}_[1-3] PD wrap"]),
    (["-h", "-r", "-t", "PD", "-o", "%i|%A|%F|%K|%R"],
     ["{waiter}|{waiter}|{waiter}|N/A|(JobHeldUser)", "{array}_1|{array}|{array}|1|(JobHeldUser)",
      "{array}_2|{element2}|{array}|2|(JobHeldUser)", "{array}_3|{element3}|{array}|3|(JobHeldUser)"]),
    (["-h", "--name", "runner,wait*", "-o", "%j %u %P"], ["runner {user} normal", "waiter {user} normal"]),
    (["-h", "-t", "CD,CA", "-o", "%i"], ["{done}", "{cancelled}"]),
    (["-t", "R", "-o", "%.18i %.9P %.8j %.8u %.2t %.6D %R"],
     ["             JOBID PARTITION     NAME     USER ST  NODES NODELIST(REASON)",
      "{running:>18} {p:>9} {n:>8} {u:>8} {st:>2} {d:>6} {host}"]),
    (["-h", "-j", "{running}", "-o", '"%u"'], ['"{user}"']),  # a format is printed as given, quotes too
    (["-h", "-j", "{running}", "-o", '"%i","%t","%j"'], ['"{running}","R","runner"']),
    (["-h", "-j", "{running}", "-o", "[%.10i|%4j|%a|%K|%A]"], ["[{running:>10}|runn|default|N/A|{running}]"]),
    (["-j", "{running}", "-O", "JobID,StateCompact,Name:8,NumNodes:.6,Partition:4"],  # a width cuts
     ["JOBID               ST                  NAME     NODESPART", "{running:<20}R                   runner       1norm"]),
    (["-h", "-j", "{running},999999999", "-o", "%i %l"], ["{running} 10:00"]),  # an unknown one beside: exit 0
]


@pytest.mark.parametrize("args, expected", SQUEUE)
def test_squeue_lines(slurm, jobs, args, expected):
    values = {**jobs, "p": "normal", "n": "runner", "u": jobs["user"][:8], "st": "R", "d": "1",
              "element3": jobs["element2"] + 1}
    r = slurm("squeue", *fill(args, values))
    assert (r.code, r.err) == (0, "")
    assert lines(r.out) == fill(expected, values)


def test_squeue_default_format(slurm, jobs):
    r = slurm("squeue", "-j", str(jobs["running"]))
    header, row = lines(r.out)
    assert header == "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)"
    assert re.fullmatch(rf" *{jobs['running']}    normal   runner {jobs['user'][:8]:>8}  R +\d+:\d\d      1 "
                        rf"{re.escape(jobs['host'])}", row), row


def test_squeue_long_starts_with_the_time(slurm, jobs):
    r = slurm("squeue", "-l", "-j", str(jobs["running"]))
    when, header, row = lines(r.out)
    assert re.fullmatch(r"\w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4}", when)
    assert header.split() == ["JOBID", "PARTITION", "NAME", "USER", "STATE", "TIME", "TIME_LIMI", "NODES",
                              "NODELIST(REASON)"]
    assert "RUNNING" in row and "10:00" in row


@pytest.mark.parametrize("args, err", [
    (["-j", "999999999"], "slurm_load_jobs error: Invalid job id specified\n"),
    (["-j", "999999999", "-t", "all"], "slurm_load_jobs error: Invalid job id specified\n"),
    (["--bogus"], "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information\n"),
    (["-o", "%.5z"], "squeue: error: Invalid job format specification: z\n"),
    (["-t", "WAITING"], "squeue: error: Invalid job state specified: WAITING\n"),
])
def test_squeue_refusals(slurm, jobs, args, err):
    r = slurm("squeue", *args)
    assert (r.code, r.out, r.err) == (1, "", err)


# -- sacct -----------------------------------------------------------------------------------------

SACCT = [
    (["-X", "-P", "-n", "-j", "{done},{failed},{cancelled}", "-o", "JobID,JobIDRaw,JobName,State,ExitCode"],
     ["{done}|{done}|wrap|COMPLETED|0:0", "{failed}|{failed}|wrap|FAILED|3:0",
      "{cancelled}|{cancelled}|wrap|CANCELLED by {uid}|0:15"]),
    (["-X", "-P", "-n", "-j", "{timeout}", "-o", "JobID,State,Timelimit"], ["{timeout}|TIMEOUT|00:00:01"]),
    (["-P", "-n", "-j", "{done}", "-o", "JobID,JobName,State,ExitCode"],
     ["{done}|wrap|COMPLETED|0:0", "{done}.batch|batch|COMPLETED|0:0", "{done}.extern|extern|COMPLETED|0:0"]),
    (["-P", "-j", "{cancelled}", "--format=JobID,State"],
     ["JobID|State", "{cancelled}|CANCELLED by {uid}", "{cancelled}.batch|CANCELLED", "{cancelled}.extern|COMPLETED"]),
    (["-X", "-p", "-n", "-j", "{array}_2", "-o", "JobID,JobIDRaw,State,Reason"],
     ["{array}_2|{element2}|PENDING|JobHeldUser|"]),
    (["-X", "-j", "{done}", "-o", "JobID,State,ExitCode,JobName%4"],
     ["JobID             State ExitCode JobN ", "------------ ---------- -------- ---- ",
      "{done:<12}  COMPLETED      0:0 wrap "]),
    (["-X", "-n", "-P", "--name", "runner,waiter", "-o", "JobName,State"], ["runner|RUNNING", "waiter|PENDING"]),
    (["-X", "-nP", "-S", "now-1hour", "-E", "now", "-s", "F,TO", "-o", "jobidraw,state"],
     ["{failed}|FAILED", "{timeout}|TIMEOUT"]),  # field names in any case
    (["-X", "-n", "-P", "-j", "999999999"], []),  # nothing: exit 0 (a client's probe)
    (["-X", "-n", "-P", "-a", "-s", "R", "-o", "User,NodeList,AllocCPUS"], ["{user}|{host}|1"]),
    (["-X", "-n", "-P", "-s", "CD", "-o", "JobIDRaw"], []),  # -s without -S: in that state now
    (["-X", "-n", "-P", "-s", "CD", "-S", "midnight", "-o", "JobIDRaw"], ["{done}"]),
]


@pytest.mark.parametrize("args, expected", SACCT)
def test_sacct_lines(slurm, jobs, args, expected):
    r = slurm("sacct", *fill(args, jobs))
    assert (r.code, r.err) == (0, "")
    assert lines(r.out) == fill(expected, jobs)


def test_sacct_default_fields(slurm, jobs):
    r = slurm("sacct", "-j", str(jobs["failed"]))
    assert lines(r.out)[:3] == [
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode ",
        "------------ ---------- ---------- ---------- ---------- ---------- -------- ",
        f"{jobs['failed']:<12}       wrap     normal    default          1     FAILED      3:0 "]


def test_sacct_helpformat_lists_the_fields(slurm):
    r = slurm("sacct", "--helpformat")
    names = r.out.split()
    assert r.code == 0 and {"JobID", "JobIDRaw", "State", "ExitCode", "Elapsed", "NodeList"} <= set(names)


@pytest.mark.parametrize("args, err", [
    (["-o", "Bogus"], 'sacct: error: Invalid field requested: "Bogus"\n'),
    (["--bogus"], "sacct: unrecognized option '--bogus'\nTry \"sacct --help\" for more information\n"),
    (["-S", "whenever"], "sacct: error: Invalid time specification (pos=0): whenever\n"),
])
def test_sacct_refusals(slurm, args, err):
    r = slurm("sacct", *args)
    assert (r.code, r.out, r.err) == (1, "", err)


# -- scancel ---------------------------------------------------------------------------------------

def test_scancel_of_finished_and_unknown_jobs(slurm, jobs):
    r = slurm("scancel", str(jobs["done"]))
    assert (r.code, r.out, r.err) == (0, "", f"scancel: error: Kill job error on job id {jobs['done']}: "
                                             "Job/step already completing or completed\n")
    assert slurm("scancel", "-Q", str(jobs["done"])).err == ""
    r = slurm("scancel", "999999999")
    assert (r.code, r.err) == (1, "scancel: error: Invalid job id 999999999\n")
    r = slurm("scancel")
    assert (r.code, r.err) == (1, "scancel: error: No job identification provided\n")


def test_scancel_by_element_name_and_signal(slurm, jobs):
    a = submit(slurm, "-H", "-a", "1-2", "--wrap", "true")
    assert slurm("scancel", f"{a}_2").code == 0
    assert [slurm.job(f"{a}_{i}")["state"] for i in (1, 2)] == ["PEND", "EXIT"]
    named = submit(slurm, "-H", "-J", "cancel-me", "--wrap", "true")
    assert slurm("scancel", "--name", "cancel-me").code == 0
    assert slurm.wait_state(str(named), ("EXIT",))["end"]["code"] == "KILLED"
    trapped = submit(slurm, "--wrap", "trap 'echo got-usr1; exit 0' USR1; while :; do sleep 0.1; done")
    slurm.wait_state(str(trapped), ("RUN",))
    import time

    time.sleep(0.5)  # the trap is set once the shell runs
    assert slurm("scancel", "-s", "USR1", str(trapped)).code == 0
    assert slurm.wait_state(str(trapped), ("DONE", "EXIT"))["state"] == "DONE"
    assert "got-usr1\n" in (slurm.work / f"slurm-{trapped}.out").read_text()
    assert slurm("scancel", "-s", "NOSUCH", str(trapped)).err == "scancel: error: Invalid job signal: NOSUCH\n"


# -- scontrol and sinfo ----------------------------------------------------------------------------

def test_scontrol_show_config_answers_the_probes(slurm):
    r = slurm("scontrol", "show", "config")
    assert r.code == 0
    assert re.search(r"^MinJobAge\s*=\s*300 sec$", r.out, re.M)
    assert int(re.search(r"^MaxArraySize\s*=\s*(\d+)$", r.out, re.M).group(1)) >= 1000
    assert re.search(r"^ClusterName\s*=\s*\S+$", r.out, re.M)


def test_scontrol_show_job(slurm, jobs):
    r = slurm("scontrol", "show", "job", str(jobs["failed"]))
    first, *rest = r.out.splitlines()
    assert first == f"JobId={jobs['failed']} JobName=wrap"
    assert "   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)" in rest
    assert re.search(r"ExitCode=3:0\b", r.out)
    r = slurm("scontrol", "show", "job", str(jobs["array"]))
    records = r.out.strip().split("\n\n")
    assert [rec.splitlines()[0] for rec in records] == [
        f"JobId={jobs['element2'] + i - 2} ArrayJobId={jobs['array']} ArrayTaskId={i} JobName=wrap" for i in (1, 2, 3)]
    r = slurm("scontrol", "-o", "show", "job", str(jobs["done"]))
    assert len(lines(r.out)) == 1 and "JobState=COMPLETED" in r.out
    r = slurm("scontrol", "show", "job", "999999999")
    assert (r.code, r.err) == (1, "slurm_load_jobs error: Invalid job id specified\n")


def test_scontrol_actions_and_hostnames(slurm, jobs):
    j = submit(slurm, "-H", "--wrap", "true")
    assert slurm("scontrol", "release", str(j)).code == 0
    slurm.wait_state(str(j), ("DONE",))
    assert slurm("scontrol", "requeue", str(j)).code == 0
    assert slurm.job(str(j))["state"] in ("PEND", "RUN", "DONE") and len(slurm.detail(j)["history"]) > 4
    h = submit(slurm, "--begin", "now+1hour", "--wrap", "true")
    assert slurm("scontrol", "hold", str(h)).code == 0
    assert slurm.job(str(h))["pend_category"] == "held"
    r = slurm("scontrol", "show", "hostnames", "n[1-3],x")
    assert lines(r.out) == ["n1", "n2", "n3", "x"]
    r = slurm("scontrol", "show", "hostnames", env={"SLURM_JOB_NODELIST": "a[7-8]"})
    assert lines(r.out) == ["a7", "a8"]
    r = slurm("scontrol", "bogus")
    assert (r.code, r.err) == (1, "scontrol: error: invalid keyword: bogus\n")


def test_sinfo(slurm, jobs):
    r = slurm("sinfo")
    header, *rows = lines(r.out)
    assert header == "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST"
    assert rows and all(re.fullmatch(r"normal\*      up   infinite +\d+ +(idle|mix|alloc) \S+", row) for row in rows)
    assert lines(slurm("sinfo", "-h", "-o", "%P").out)[0] == "normal*"
    assert lines(slurm("sinfo", "-o", "%P %a %l %G").out)[:2] == ["PARTITION AVAIL TIMELIMIT GRES",
                                                                 "normal* up infinite gpu:fake:2"]


def test_sinfo_named_fields(slurm, jobs):
    """``sinfo -O``: Slurm's named fields (any case), 20 characters each unless ``:W`` is given, ``.``
    right-justifies, the text after the width follows the field (sinfo's ``_parse_long_token``); myqueue's
    ``mq config slurm`` reads ``sinfo --noheader -O CPUs,Memory,Partition``."""
    mem = lines(slurm("sinfo", "-h", "-o", "%m").out)[0]
    r = slurm("sinfo", "--noheader", "-O", "CPUs,Memory,Partition")
    assert (r.code, r.err) == (0, "")
    assert set(lines(r.out)) == {f"{'2':<20}{mem:<20}{'normal*':<20}"}
    header, *rows = lines(slurm("sinfo", "-O", "partitionname:.10 |,Available:3,nodelist:0").out)
    assert header == " PARTITION |AVANODELIST"
    assert rows and all(re.fullmatch(r"    normal \|up \S+", row) for row in rows), rows


def test_a_listing_longer_than_one_answer_is_read_to_its_end(slurm, jobs):
    """The front-ends page through the API (``after`` the last id) instead of stopping at its bound."""
    from xce.compat.slurm import _api

    c = slurm.api()
    try:
        whole = c.get("/v1/jobs", user="all", all="true")
        first = c.get("/v1/jobs", user="all", all="true", limit=2)
        paged = _api.jobs(c, user="all", all="true", limit=2)
    finally:
        c.close()
    ids = [j["jobid"] for j in whole["jobs"]]
    assert len(ids) > 4 and not whole["truncated"]
    assert first["truncated"] and [j["jobid"] for j in first["jobs"]] == ids[:2]
    assert [j["jobid"] for j in paged["jobs"]] == ids and not paged["truncated"]


def test_sinfo_node_long_is_slurms_layout(slurm, jobs):
    """``sinfo -N -l``: the time, then one row per node in Slurm's node-oriented long format."""
    when, header, *rows = lines(slurm("sinfo", "-N", "-l").out)
    assert re.fullmatch(r"\w{3} \w{3} \d\d \d\d:\d\d:\d\d \d{4}", when)
    assert header.split() == ["NODELIST", "NODES", "PARTITION", "STATE", "CPUS", "S:C:T", "MEMORY", "TMP_DISK",
                              "WEIGHT", "AVAIL_FE", "REASON"]
    assert len(rows) == 2 and any(row.startswith(jobs["host"] + " ") for row in rows)
    for row in rows:
        assert re.fullmatch(r"\S+ +1 normal\* +(idle|mixed|allocated) +2 +1:2:1 +\d+ +0 +1 +\(null\) none +", row), row
    assert lines(slurm("sinfo", "-l").out)[1].split() == ["PARTITION", "AVAIL", "TIMELIMIT", "JOB_SIZE", "ROOT",
                                                          "OVERSUBS", "GROUPS", "NODES", "STATE", "NODELIST"]


def test_json_is_slurm_23_02s_layout(slurm, jobs):
    """``squeue --json``/``sacct --json``: data_parser v0.0.39 with the fields tools read; filters apply."""
    import json

    r = slurm("squeue", "--json", "-j", f"{jobs['running']},{jobs['done']}")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert doc["meta"]["plugin"]["data_parser"] == "data_parser/v0.0.39" and doc["errors"] == []
    [job] = doc["jobs"]  # the ended one is left out, as in the table
    assert {k: job[k] for k in ("job_id", "name", "job_state", "user_name", "partition", "nodes")} == {
        "job_id": jobs["running"], "name": "runner", "job_state": "RUNNING", "user_name": jobs["user"],
        "partition": "normal", "nodes": jobs["host"]}
    assert job["time_limit"] == {"set": True, "infinite": False, "number": 10}

    r = slurm("sacct", "--json", "-j", f"{jobs['done']},{jobs['failed']},{jobs['cancelled']}")
    assert r.code == 0, r.err
    rows = {j["job_id"]: j for j in json.loads(r.out)["jobs"]}
    assert rows[jobs["done"]]["state"] == {"current": "COMPLETED", "reason": "None"}
    assert rows[jobs["done"]]["exit_code"] == {"status": "SUCCESS", "return_code": 0}
    assert rows[jobs["failed"]]["exit_code"] == {"status": "FAILED", "return_code": 3}
    assert rows[jobs["cancelled"]]["state"]["current"] == "CANCELLED"
    assert rows[jobs["cancelled"]]["exit_code"]["status"] == "SIGNALED"
    assert all(j["user"] == jobs["user"] and j["partition"] == "normal" and j["time"]["end"] > 0 for j in rows.values())


def test_the_controller_collapses_waiting_arrays_for_squeue(slurm, jobs):
    """``collapse``: a pending array is one record (its first element, with every index), so that a
    collapsed ``squeue`` costs the lines it prints; paging shows each array once."""
    from xce.compat.slurm import _api

    c = slurm.api()
    try:
        whole = c.get("/v1/jobs", user="all", collapse="true")["jobs"]
        paged = _api.jobs(c, user="all", collapse="true", limit=1)["jobs"]
        plain = c.get("/v1/jobs", user="all")["jobs"]
    finally:
        c.close()
    [array] = [j for j in whole if j["array_id"] == jobs["array"]]
    assert array["array_indexes"] == [1, 2, 3] and array["array_index"] == 1
    assert len([j for j in plain if j["array_id"] == jobs["array"]]) == 3
    assert [j["jobid"] for j in paged] == [j["jobid"] for j in whole]
    assert len(whole) == len(plain) - 2
