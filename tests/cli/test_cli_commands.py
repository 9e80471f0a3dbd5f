"""The ``xce`` and ``xceadmin`` commands against a running controller."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import httpx
import pytest

pytestmark = pytest.mark.integration


def test_submit_then_list_as_json(cli):
    r = cli.xce("submit", "-q", "high", "-n", "2", "--priority", "4", "-P", "default", "--type", "cfd/solve",
                "--env", "A=1", "--cwd", "/tmp", "--", "sleep", "30", "-x")
    assert r.code == 0, r.err
    m = re.fullmatch(r"Job <(\d+)> is submitted to queue <high>\.\n", r.out)
    assert m, r.out
    jobid = int(m.group(1))
    listing = cli.xce("jobs", "--json", str(jobid)).json()
    (job,) = listing["jobs"]
    assert (job["jobid"], job["state"], job["queue"], job["tasks"], job["priority"], job["job_type"]) == (
        jobid, "PEND", "high", 2, 4, "cfd/solve")
    assert job["command"] == ["sleep", "30", "-x"]
    detail = cli.xce("jobs", "-l", "--json", str(jobid)).json()["jobs"][0]
    assert detail["env"]["A"] == "1" and "XCE_TOKEN" not in detail["env"] and detail["cwd"] == "/tmp"


def test_submit_json_prints_the_record(cli):
    r = cli.xce("submit", "--json", "--request", "mem=2G", "--request", "example.com/gpu=1", "--limit", "mem=3072",
                "-R", "select[type == \"X86_64\"]", "--", "true")
    assert r.code == 0, r.err
    res = r.json()
    assert res["count"] == 1 and res["state"] == "PEND"
    job = res["job"]
    assert job["requests"] == {"mem": 2 << 30, "example.com/gpu": 1}
    assert job["limits"] == {"mem": 3072 << 20}  # a bare memory number is MiB, as in rusage[]
    assert job["sched_request"] == 'select[type == "X86_64"] rusage[mem=2G:example.com/gpu=1]'


def test_array_submission(cli):
    r = cli.xce("submit", "--array", "5", "-o", "out.%J.%I", "--", "echo", "hi")
    assert r.code == 0, r.err
    m = re.fullmatch(r"Job <(\d+)> is submitted to queue <normal>: an array of 5 elements, (\d+)\[1-5\]\.\n", r.out)
    assert m and m.group(1) == m.group(2), r.out
    array = m.group(1)
    jobs = cli.xce("jobs", "--json", array).json()["jobs"]
    assert [(j["array_id"], j["array_index"]) for j in jobs] == [(int(array), i) for i in range(1, 6)]
    detail = cli.xce("jobs", "-l", "--json", f"{array}[4]").json()["jobs"]
    assert [d["stdout"] for d in detail] == [f"out.{array}.4"]
    table = cli.xce("jobs", f"{array}[2-3]").out.splitlines()[1:]
    assert [row.split()[0] for row in table] == [f"{array}[2]", f"{array}[3]"]
    r = cli.xce("submit", "-J", "sweep[1-9:4]%2", "--", "true")
    assert r.code == 0, r.err
    assert re.fullmatch(r"Job <(\d+)> is submitted to queue <normal>: an array of 3 elements, \1\[1,5,9\]%2\.\n",
                        r.out), r.out
    assert [j["array_index"] for j in cli.xce("jobs", "--json", "sweep").json()["jobs"]] == [1, 5, 9]


def test_table_output(cli):
    cli.xce("submit", "--", "sleep", "1")
    r = cli.xce("jobs")
    assert r.code == 0
    header, *rows = r.out.splitlines()
    assert header.split() == ["JOBID", "USER", "STAT", "QUEUE", "TASKS", "EXEC_HOST", "SUBMIT_TIME", "COMMAND"]
    assert rows and all(" PEND " in row for row in rows)


def test_kill_suspend_resume_and_their_refusals(cli):
    jobid = cli.xce("submit", "--json", "--", "sleep", "5").json()["jobid"]
    r = cli.xce("resume", str(jobid))
    assert r.code == 1
    assert r.err.strip() == f"xce: cannot resume job {jobid}: it is PEND (only a USUSP/SSUSP job can be resumed)"
    r = cli.xce("kill", str(jobid))
    assert (r.code, r.out) == (0, f"Job <{jobid}> is killed.\n")
    r = cli.xce("kill", str(jobid), "999999")
    assert r.code == 1 and "it is EXIT" in r.err and "job 999999 does not exist" in r.err
    assert cli.xce("jobs", "--json", "-a", str(jobid)).json()["jobs"][0]["state"] == "EXIT"
    r = cli.xce("kill", "--json", str(jobid))
    assert r.code == 1 and r.json()["results"][0]["status"] == 409


def test_modify(cli):
    jobid = cli.xce("submit", "--json", "--", "sleep", "5").json()["jobid"]
    r = cli.xce("modify", str(jobid), "--priority", "-3", "-q", "high")
    assert r.code == 0, r.err
    assert r.out == f"Job <{jobid}>: priority -3, queue <high>, project <default>.\n"
    assert cli.xce("modify", str(jobid)).code == 2


def test_long_form_explains_why_a_job_waits(cli, controller):
    jobid = cli.xce("submit", "--json", "-n", "64", "--", "sleep", "5").json()["jobid"]
    sched = httpx.Client(base_url=controller.url, headers={"Authorization": f"Bearer {controller.token('scheduler')}"})
    reason = {"step": "allocation", "text": "needs slots 64, short by slots 60", "resource": "slots", "needed": 64,
              "short": 60}
    sched.post("/v1/sched/decisions", json={"decisions": [
        {"id": uuid.uuid4().hex, "ts": 1, "decision": {"op": "PEND", "seq": 1, "jobid": jobid, "reasons": [reason]}}]})
    r = cli.xce("jobs", "-l", str(jobid))
    assert r.code == 0, r.err
    assert "PENDING REASONS:\n  [allocation] needs slots 64, short by slots 60" in r.out
    assert re.search(r"HISTORY:\n  \S+ \S+  - -> PEND\s+submitted \(by alice\)", r.out), r.out


def test_field_errors_are_refusals_with_the_field_named(cli):
    r = cli.xce("submit", "-R", "select[mem>", "--", "true")
    assert r.code == 1
    assert r.err.startswith('xce: request: resource requirement "select[mem>" column 12: expected')
    r = cli.xce("submit", "--request", "example.com/gpu=0.5", "--", "true")
    # the one quantity grammar refuses a fraction before anything is sent (a usage error), in its own words
    assert r.code == 2 and r.err == 'xce: quantity "0.5" for "example.com/gpu": expected a whole number\n'
    r = cli.xce("submit", "-q", "nope", "--", "true")
    assert r.code == 1 and r.err == "xce: queue: unknown queue 'nope' (expected one of: high, normal)\n"


def test_usage_errors_exit_2(cli):
    for args in (("submit", "--array", "0", "--", "true"), ("submit",), ("jobs", "--bogus"), ("jobs", "12[1-]"),
                 ("submit", "-J", "a\nb", "--", "true"), ("submit", "-J", "run[x]", "--", "true"),
                 ("submit", "--array", "5-1", "--", "true"),
                 ("kill", "12[x]"), ("submit", "-b", "tomorrow", "--", "true"),
                 ("submit", "--request", "mem", "--", "true"), ("nosuchcommand",)):
        r = cli.xce(*args)
        assert r.code == 2, (args, r.out, r.err)


def test_unreachable_controller_exits_3(cli, tmp_path):
    r = cli.xce("jobs", env={"XCE_URL": "http://127.0.0.1:9", "XCE_TOKEN": "x"})
    assert r.code == 3 and "cannot reach the controller at http://127.0.0.1:9" in r.err
    r = cli.xce("jobs", env={"XCE_STATE_DIR": str(tmp_path)})
    assert r.code == 3 and "no controller address" in r.err


def test_bad_token_is_refused(cli):
    r = cli.xce("jobs", "--token", "xce2_0123456789abcdef." + "x" * 43)
    assert r.code == 1 and r.err == "xce: invalid token\n"
    r = cli.xce("jobs", "--token", "xce1_bogus.token")
    assert r.code == 1 and "old format (xce1_)" in r.err and "xceadmin token create" in r.err


def test_user_tokens_from_xceadmin(cli):
    r = cli.admin("user", "add", "carol")
    assert r.code == 0, r.err
    token = r.out.strip()
    as_carol = {"XCE_TOKEN": token}
    assert cli.xce("jobs", "--json", env=as_carol).json() == {"jobs": [], "truncated": False}
    jobid = cli.xce("submit", "--json", "--", "true", env=as_carol).json()["jobid"]
    (job,) = cli.xce("jobs", "--json", env=as_carol).json()["jobs"]
    assert (job["jobid"], job["user"]) == (jobid, "carol")
    # carol cannot kill the administrator alice's jobs
    other = cli.xce("submit", "--json", "--", "true").json()["jobid"]
    r = cli.xce("kill", str(other), env=as_carol)
    assert r.code == 1 and "belongs to alice" in r.err
    # the same token through the API (no local secret): --url/--token given
    r = cli.admin("user", "add", "dave", "--admin", "--json", "--url", _url(cli), "--token", _admin_token(cli))
    assert r.code == 0, r.err
    assert r.json()["role"] == "admin" and r.json()["token"].startswith("xce2_")


def _url(cli) -> str:
    return json.loads((Path(cli.env["XCE_STATE_DIR"]) / "controller.json").read_text())["url"]


def _admin_token(cli) -> str:
    return (Path(cli.env["XCE_STATE_DIR"]) / "tokens" / "admin").read_text().strip()


def test_cluster_views(cli, controller):
    w = httpx.Client(base_url=controller.url, headers={"Authorization": f"Bearer {controller.token('worker')}"})
    assert w.post("/v1/workers/register", json={"name": "node7", "resources": {
        "slots": 8, "ncpus": 8, "maxmem": 32 << 30, "type": "X86_64", "xce.io/gpu": 2},
        "load": {"r1m": 0.5, "mem": 10 << 30}}).status_code == 200
    hosts = cli.xce("hosts", "--json").json()["hosts"]
    node = {h["name"]: h for h in hosts}["node7"]
    assert node["status"] == "ok" and node["resources"]["xce.io/gpu"] == 2
    r = cli.xce("hosts")
    assert r.code == 0 and re.search(r"node7\s+ok\s+8\s+0\s+0\s+8\s+32G\s+X86_64\s+xce\.io/gpu=2", r.out), r.out
    load = {h["name"]: h for h in cli.xce("load", "--json").json()["hosts"]}["node7"]
    assert load["load"] == {"mem": 10 << 30, "r1m": 0.5}
    assert "node7" in cli.xce("load").out
    queues = cli.xce("queues", "--json").json()["queues"]
    assert [q["name"] for q in queues] == ["high", "normal"]
    r = cli.xce("queues")
    assert r.code == 0 and "normal (default)" in r.out


def test_reconfig_and_invalid_files(cli, controller):
    sched = httpx.Client(base_url=controller.url, headers={"Authorization": f"Bearer {controller.token('scheduler')}"})
    seq = sched.get("/v1/sched/state").json()["seq"]
    cfg = controller.state_dir / "xce.toml"
    original = cfg.read_text()
    try:
        cfg.write_text(original + "\n[queues.low]\npriority = 1\n")
        r = cli.admin("reconfig")
        assert r.code == 0 and "reloaded" in r.out, r.err
        (push,) = [e["event"] for e in sched.get("/v1/sched/events", params={"after": seq}).json()["events"]
                   if e["event"]["type"] == "CONFIG_PUSH"]
        assert [q["name"] for q in push["payload"]["queues"]] == ["high", "low", "normal"]
        assert cli.admin("reconfig").out.startswith("Configuration in ")  # unchanged the second time

        cfg.write_text(original + "\n[queues.broken]\npriority = \"high\"\n")
        r = cli.admin("reconfig")
        assert r.code == 1
        assert "queues.broken.priority: expected an integer" in r.err and str(cfg) in r.err
        # the running configuration stays
        assert [q["name"] for q in cli.xce("queues", "--json").json()["queues"]] == ["high", "normal", "low"]
    finally:
        cfg.write_text(original)
        cli.admin("reconfig")


def test_scheduler_recording_commands(cli, controller):
    sched = httpx.Client(base_url=controller.url, headers={"Authorization": f"Bearer {controller.token('scheduler')}"})
    after = sched.get("/v1/sched/state").json()["control_seq"]
    r = cli.admin("scheduler", "record", "start", "replay.jsonl", "--record-snapshot-interval", "50")
    assert r.code == 0, r.err
    assert cli.admin("scheduler", "record", "stop").code == 0
    # a path outside the record directory is refused: the scheduler writes with its own (root) rights
    for outside in ("/etc/passwd", "../../escape.jsonl", "/tmp/replay.jsonl"):
        r = cli.admin("scheduler", "record", "start", outside)
        assert r.code == 1 and "recordings are written inside" in r.err, (outside, r.err)
    page = sched.get("/v1/sched/control", params={"after": after}).json()
    inside = str(controller.state_dir.absolute() / "recordings" / "replay.jsonl")
    assert [c["command"] for c in page["commands"]] == [
        {"op": "record_start", "file": inside, "snapshot_interval": 50, "by": "alice"},
        {"op": "record_stop", "by": "alice"}]
    assert page["last_seq"] == after + 2


def test_controller_refuses_an_invalid_config(cli, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('default_queue = "nope"\n')
    r = cli.xce("controller", "--state-dir", str(tmp_path / "sd"), "--config", str(bad), timeout=60)
    assert r.code == 1 and "invalid configuration" in r.err and "nope" in r.err


def test_help_lists_every_registered_command(cli):
    r = cli.xce("--help")
    assert r.code == 0
    for name in ("controller", "submit", "jobs", "kill", "suspend", "resume", "modify", "hosts", "load", "queues"):
        assert re.search(rf"^\s+{name}\s", r.out, re.M), name
    assert cli.admin("--help").code == 0


def test_other_users_commands_show_as_private(cli):
    ann = {"XCE_TOKEN": cli.admin("user", "add", "ann_priv").out.strip()}
    ben = {"XCE_TOKEN": cli.admin("user", "add", "ben_priv").out.strip()}
    r = cli.xce("submit", "--json", "--", "sleep", "1000", "--secret-flag", env=ann)
    assert r.code == 0, r.err
    jobid = r.json()["jobid"]
    r = cli.xce("jobs", "-u", "all", env=ben)
    assert r.code == 0, r.err
    line = [x for x in r.out.splitlines() if x.split() and x.split()[0] == str(jobid)][0]
    assert "(private)" in line and "--secret-flag" not in r.out
    assert "--secret-flag" in cli.xce("jobs", env=ann).out  # the owner sees it
    assert "--secret-flag" in cli.xce("jobs", "-u", "all").out  # and so does an admin
    cli.xce("kill", str(jobid))
