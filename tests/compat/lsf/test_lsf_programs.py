"""bsub, bjobs, bkill ... against a live cluster: the lines clients parse, byte for byte, and the
exit codes they test (the front-end reference of the specification, sections 3.1-3.4)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lsf_helpers import LAUNCH, Lsf, start_cluster, wait_for

pytestmark = [pytest.mark.integration]


@pytest.fixture(scope="module")
def lsf(tmp_path_factory):
    base = tmp_path_factory.mktemp("lsf")
    cluster = start_cluster(base)
    work = base / "work"
    work.mkdir()
    try:
        yield Lsf(cluster, work)
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def jobs(lsf):
    """One job of each kind clients meet, settled: done, failed (exit 3), an array, killed, held."""
    ids = {"done": lsf.submit("-J", "done", "-o", "done.%J", "echo", "hello"),
           "failed": lsf.submit("-J", "failed", "exit 3"),
           "sweep": lsf.submit("-J", "sweep[1-3]", "true"),
           "killed": lsf.submit("-J", "killed", "sleep", "300"),
           "held": lsf.submit("-H", "-J", "held", "sleep", "1")}
    lsf.wait_state(ids["killed"], "RUN")
    assert lsf("bkill", str(ids["killed"])).code == 0
    for key in ("done", "failed", "killed"):
        lsf.wait_state(ids[key], "DONE", "EXIT")
    elements = lambda: lsf.cluster.request("GET", "/v1/jobs", job=str(ids["sweep"]))["jobs"]  # noqa: E731
    wait_for(lambda: all(j["state"] == "DONE" for j in elements()), 40, "the array to finish")
    return ids


# -- bsub ------------------------------------------------------------------------------------------

#: The regexes and splits dask-jobqueue, the snakemake plugin and other clients apply to bsub's answer.
CLIENT_PARSERS = [
    lambda out: re.search(r"\d+", out).group(0),
    lambda out: re.search(r"Job <(\d+)>", out).group(1),
    lambda out: re.search(r"Job <(.*)> is submitted", out).group(1),
    lambda out: next(line.split()[1].strip("<>") for line in out.splitlines()
                     if line.lower().startswith("job") and "is submitted to" in line),
    lambda out: re.search(r"Job <[0-9]+>", out).group(0)[5:-1],
    lambda out: out.split("<")[1].split(">")[0],
]


@pytest.mark.parametrize("argv, line", [
    (["true"], "Job <{id}> is submitted to default queue <normal>."),
    (["-q", "short", "true"], "Job <{id}> is submitted to queue <short>."),
    (["-J", "arr[1-2]", "-n", "1,2", "true"], "Job <{id}> is submitted to default queue <normal>."),
    (["-P", "default", "-W", "5", "-x", "-We", "3", "-u", "me@example.com", "-N", "-sla", "gold", "true"],
     "Job <{id}> is submitted to default queue <normal>."),
])
def test_bsub_answers_as_lsf_does(lsf, argv, line):
    r = lsf("bsub", *argv)
    assert r.code == 0, r.err
    jobid = lsf.cluster.request("GET", "/v1/jobs", all="true", user="all")["jobs"][-1]
    shown = str(jobid["array_id"] or jobid["jobid"])
    assert r.out == line.format(id=shown) + "\n"
    assert all(parse(r.out) == shown for parse in CLIENT_PARSERS)


def test_a_command_never_reads_standard_input(lsf):
    """Clients pass a pipe nobody writes to: bsub must answer without waiting for its end."""
    p = subprocess.Popen([sys.executable, "-c", LAUNCH, "bsub", "echo", "hi"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=lsf.env, cwd=lsf.cwd)
    try:
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert "is submitted to default queue <normal>." in out


def test_a_command_runs_with_the_shell_and_a_script_on_stdin_brings_its_directives(lsf, tmp_path):
    line = lsf.submit("-o", str(tmp_path / "line.%J"), "echo a; echo", "$((1+2))")
    script = f"#!/bin/sh\n#BSUB -J fromstdin\n#BSUB -oo {tmp_path}/script.%J\necho from the script\n"
    spooled = lsf.submit(input=script)
    for jobid in (line, spooled):
        assert lsf.wait_state(jobid, "DONE", "EXIT")["state"] == "DONE"
    assert (tmp_path / f"line.{line}").read_text() == "a\n3\n"
    assert (tmp_path / f"script.{spooled}").read_text() == "from the script\n"
    assert lsf("bjobs", "-o", "job_name", "-noheader", str(spooled)).out == "fromstdin\n"


def test_only_a_directive_at_the_start_of_its_line_counts(lsf, tmp_path):
    """"#BSUB at the beginning of each line" (LSF's job_script page; Slurm's sbatch reads ``#SBATCH``
    and ``#BSUB`` with ``xstrncmp(line, magic_word, ...)``): an indented one is a comment. IPython
    Parallel's LSF engine template indents ``#BSUB -J ipengine-ID`` under the array line it puts first."""
    script = (f"#!/bin/sh\n#BSUB -J eng[1-2]\n    #BSUB -J single\n\t#BSUB -q nosuchqueue\n"
              f"#BSUB -oo {tmp_path}/o.%J\ntrue\n")
    jobid = lsf.submit(input=script)
    r = lsf("bjobs", "-a", "-noheader", "-o", "job_name queue", str(jobid))
    assert sorted(line.split() for line in r.lines) == [["eng[1]", "normal"], ["eng[2]", "normal"]], r.out


@pytest.mark.parametrize("env_option, seen", [([], "from-submitter:"), (["-env", "none, GREETING=hi"], ":hi"),
                                               (["-env", "all, ~SECRET_WORD"], ":")])
def test_the_job_gets_the_submitters_environment_as_env_says(lsf, tmp_path, env_option, seen):
    out = tmp_path / "env.out"
    r = lsf("bsub", *env_option, "-oo", str(out), "echo ${SECRET_WORD}:${GREETING}",
            env={"SECRET_WORD": "from-submitter"})
    assert r.code == 0, r.err
    jobid = int(r.out.split("<")[1].split(">")[0])
    assert lsf.wait_state(jobid, "DONE", "EXIT")["state"] == "DONE"
    assert out.read_text() == seen + "\n"


def test_a_job_script_given_by_name_may_be_deleted_once_submitted(lsf, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text(f"#!/bin/sh\n#BSUB -o {tmp_path}/named.%J\necho spooled\n")
    jobid = lsf.submit(str(script))
    script.unlink()
    assert lsf.wait_state(jobid, "DONE", "EXIT")["state"] == "DONE"
    assert (tmp_path / f"named.{jobid}").read_text() == "spooled\n"


def test_bsub_lines_are_read_as_its_command_line_attached_values_and_trailing_words(lsf, tmp_path):
    """``-n2 -qshort -R"span[hosts=1]"``, ``-alloc_flags``, ``-ptl`` in a script as on the command line;
    a word that is not an option ends the line's options, as LSF's bsub reads it."""
    script = (f"#!/bin/sh\n#BSUB -n2 -qshort -R\"span[hosts=1]\" # two slots\n#BSUB -alloc_flags smt4 -ptl 10\n"
              f"#BSUB -J lines cores please -q normal\n#BSUB -oo {tmp_path}/lines.%J\necho $LSB_DJOB_NUMPROC\n")
    in_script = lsf.submit(input=script)
    on_line = lsf.submit("-n2", "-qshort", "-Rspan[hosts=1]", "-alloc_flags", "smt4", "-ptl", "10", "-J", "lines",
                         "-oo", f"{tmp_path}/line.%J", "echo $LSB_DJOB_NUMPROC")
    for jobid, name in ((in_script, "lines"), (on_line, "line")):
        job = lsf.wait_state(jobid, "DONE", "EXIT")
        assert (job["state"], job["tasks"], job["queue"], job["name"]) == ("DONE", 2, "short", "lines")
        assert job["options"]["recorded"] == {"alloc_flags": "smt4", "pending_time_limit": "10"}
        assert (tmp_path / f"{name}.{jobid}").read_text() == "2\n"


@pytest.mark.parametrize("env, unit_bytes", [({}, 1024), ({"XCE_LSF_UNIT_FOR_LIMITS": "MB"}, 1024**2)])
def test_bare_memory_is_in_lsf_unit_for_limits_and_the_probes_say_which(lsf, env, unit_bytes):
    r = lsf("bsub", "-M", "4000", "-R", "rusage[mem=2000] span[hosts=1]", "-H", "true", env=env)
    assert r.code == 0, r.err
    jobid = int(r.out.split("<")[1].split(">")[0])
    job = lsf.job(jobid)
    assert job["limits"] == {"mem": 4000 * unit_bytes}
    unit = "KB" if unit_bytes == 1024 else "MB"
    assert f"rusage[mem=2000{unit[0]}]" in job["request"]
    for probe in (("badmin", "showconf", "mbd"), ("bparams", "-a")):
        r = lsf(*probe, env=env)
        assert r.code == 0 and f"    LSF_UNIT_FOR_LIMITS = {unit}" in r.lines, r.out
    lsf("bkill", str(jobid))


def test_bsub_k_waits_for_the_job_and_exits_with_its_code(lsf):
    r = lsf("bsub", "-K", "-J", "snake rule (1): x, y*", "exit 4")
    assert r.code == 4, r.err
    assert re.fullmatch(r"Job <\d+> is submitted to default queue <normal>\.\n", r.out)
    assert r.err.splitlines()[0] == "<<Waiting for dispatch ...>>" and r.err.splitlines()[-1].endswith("exited>>")
    listed = lsf("bjobs", "-a", "-J", "snake rule (1)*", "-o", "name exit_code delimiter='|'", "-noheader")
    assert listed.lines == ["snake rule (1): x, y*|4"]


@pytest.mark.parametrize("argv, first", [
    (["-z", "true"], "bsub: illegal option -- z"),
    (["-Q"], "bsub: option requires an argument -- Q"),
    (["-J"], "bsub: option requires an argument -- J"),
])
def test_bsub_refuses_an_option_it_does_not_know_with_its_usage(lsf, argv, first):
    before = len(lsf.cluster.request("GET", "/v1/jobs", all="true", user="all")["jobs"])
    r = lsf("bsub", *argv)
    assert (r.code, r.out) == (255, "")
    assert r.err.splitlines()[0] == first
    assert r.err.splitlines()[1].startswith("Usage: bsub ")
    assert len(lsf.cluster.request("GET", "/v1/jobs", all="true", user="all")["jobs"]) == before


@pytest.mark.parametrize("argv, err", [
    (["-k", "/ckpt", "true"], "-k: checkpointing is not available on this cluster. Job not submitted.\n"),
    (["-q", "nosuch", "true"], "queue: unknown queue 'nosuch' (expected one of: normal, short). Job not submitted.\n"),
    (["-n", "x", "true"], None),
    (["-b", "99:99", "true"], "99:99: Bad time specification. Job not submitted.\n"),  # not rolled days ahead
])
def test_bsub_says_job_not_submitted(lsf, argv, err):
    r = lsf("bsub", *argv)
    assert (r.code, r.out) == (255, "")
    assert r.err == err if err else r.err.rstrip().endswith("Job not submitted."), r.err


# -- bjobs -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv, expected", [
    (["-o", "jobid stat exit_code", "-noheader", "{done}"], ["{done:<7} DONE  -"]),
    (["-o", "jobid stat exit_code", "{failed}"], ["JOBID   STAT  EXIT_CODE", "{failed:<7} EXIT  3"]),
    (["-o", "id stat delimiter='|'", "-noheader", "{done}", "{failed}"], ["{done}|DONE", "{failed}|EXIT"]),
    (["-o", 'jobid stat delimiter=","', "{held}"], ["JOBID,STAT", "{held},PSUSP"]),
    (["-o", "jobid stat exit_reason delimiter='|'", "-noheader", "{killed}"],
     ["{killed}|EXIT|TERM_OWNER: job killed by owner"]),
    (["-o", "jobid jobindex stat name delimiter=' '", "-noheader", "{sweep}"],
     ["{sweep} 1 DONE sweep[1]", "{sweep} 2 DONE sweep[2]", "{sweep} 3 DONE sweep[3]"]),
    (["-o", "jobid jobindex delimiter=' '", "-noheader", "{sweep}[2]"], ["{sweep} 2"]),
    (["-o", "jobid:3 stat:-6 queue:4 delimiter=' '", "-noheader", "{sweep}[1-2]"],
     ["{sweep} DONE normal", "{sweep} DONE normal"]),
    (["-o", "jobid:-9 stat:-6 queue:4", "-noheader", "{done}"], ["{done:>9}   DONE norm"]),
    (["-o", "jobid:-9 stat:-6 queue:4", "-noheader", "-w", "{done}"], ["{done:>9}   DONE normal"]),
    (["-o", "user slots max_req_proc nreq_slot proj_name exec_host delimiter='|'", "-noheader", "{failed}"],
     ["{user}|1|1|1|default|{host}"]),
    (["-aJ", "swe*", "-o", "jobid stat delimiter=' '", "-noheader"],
     ["{sweep} DONE", "{sweep} DONE", "{sweep} DONE"]),
    (["-p", "-o", "jobid stat delimiter=' '", "-noheader"], ["{held} PSUSP"]),
])
def test_bjobs_lines(lsf, jobs, argv, expected):
    names = {**jobs, "user": lsf.job(jobs["done"])["user"], "host": lsf.cluster.worker_names[0]}
    r = lsf("bjobs", *[a.format(**names) for a in argv])
    assert r.code == 0, r.err
    assert r.lines == [e.format(**names) for e in expected]


def test_bjobs_o_pads_every_column_but_the_last_and_cuts_as_lsf_does(lsf, jobs):
    """Each column padded to its width, the last not (``grep -c ' DONE$'`` counts it); a field
    alone is never cut, ``FIELD:`` has its recommended width, ``FIELD:W`` at most W: cut at the end,
    a job name at the start behind ``*``."""
    done = str(jobs["done"])
    r = lsf("bjobs", "-o", "jobid stat", done)
    assert r.lines == ["JOBID   STAT", f"{done:<7} DONE"]
    assert len([line for line in r.lines if line.endswith(" DONE")]) == 1
    r = lsf("bjobs", "-noheader", "-o", "name:4 queue:3 cmd:5 cmd: cmd", str(jobs["killed"]))
    assert r.lines == ["*led nor sleep sleep 300       sleep 300"]
    assert lsf("bjobs", "-noheader", "-o", "stat:-6", done).lines == ["  DONE"]


def test_bjobs_default_columns(lsf, jobs):
    r = lsf("bjobs", "-a", str(jobs["done"]), str(jobs["held"]))
    header, done, held = r.lines
    assert header == "JOBID   USER    STAT  QUEUE      FROM_HOST   EXEC_HOST   JOB_NAME   SUBMIT_TIME"
    assert done.split()[:4] == [str(jobs["done"]), lsf.job(jobs["done"])["user"][:7], "DONE", "normal"]
    assert done[45:57] == lsf.cluster.worker_names[0][:11].ljust(11) + " "
    assert done[57:68] == "done       "
    assert held[16:22] == "PSUSP " and held[45:57] == " " * 12
    assert lsf("bjobs", "-noheader", str(jobs["done"])).lines == [done]


def test_bjobs_long_form_has_what_clients_look_for(lsf, jobs):
    r = lsf("bjobs", "-l", str(jobs["done"]), str(jobs["failed"]), str(jobs["held"]), str(jobs["killed"]))
    assert r.code == 0, r.err
    blocks = {int(b.split(">", 1)[0].rpartition("<")[2]): b for b in r.out.split("-" * 78 + "\n")}
    assert sorted(blocks) == sorted(jobs[k] for k in ("done", "failed", "held", "killed"))
    done, failed, held, killed = (blocks[jobs[k]] for k in ("done", "failed", "held", "killed"))
    assert done.startswith(f"\nJob <{jobs['done']}>, Job Name <done>, ")
    assert "Status <DONE>" in done and "Done successfully." in done and "Completed <done>." in done
    assert f"Started on <{lsf.cluster.worker_names[0]}>" in done
    assert "Status <EXIT>" in failed and "Exited with exit code 3." in failed and "Completed <exit>." in failed
    assert "Status <PSUSP>" in held and "\n PENDING REASONS:\n" in held
    assert "Completed <exit>; TERM_OWNER: job killed by owner." in killed


def test_bjobs_json_shape(lsf, jobs):
    r = lsf("bjobs", "-o", "jobid stat exit_code", "-json", str(jobs["failed"]), "999999")
    assert r.code == 0, r.err
    assert json.loads(r.out) == {"COMMAND": "bjobs", "JOBS": 2, "RECORDS": [
        {"JOBID": str(jobs["failed"]), "STAT": "EXIT", "EXIT_CODE": "3"},
        {"JOBID": "999999", "ERROR": "Job <999999> is not found"}]}
    assert r.out.startswith('{\n  "COMMAND":"bjobs",\n  "JOBS":2,\n  "RECORDS":[\n    {\n      "JOBID":"')
    plain = json.loads(lsf("bjobs", "-json", str(jobs["done"])).out)["RECORDS"][0]
    assert list(plain) == ["JOBID", "USER", "STAT", "QUEUE", "FROM_HOST", "EXEC_HOST", "JOB_NAME", "SUBMIT_TIME"]


@pytest.mark.parametrize("argv, code, out, err", [
    (["999999"], 255, [], ["Job <999999> is not found"]),
    (["{done}", "999999", "{sweep}[9]"], 255, ["{done} DONE"],
     ["Job <999999> is not found", "Job <{sweep}[9]> is not found"]),
    (["-q", "short", "-u", "all"], 0, [], ["No unfinished job found"]),
    (["-a", "-J", "nothing*"], 0, [], ["No job found"]),
    (["-r"], 0, [], ["No running job found"]),
])
def test_bjobs_not_found(lsf, jobs, argv, code, out, err):
    r = lsf("bjobs", "-o", "jobid stat delimiter=' '", "-noheader", *[a.format(**jobs) for a in argv])
    assert (r.code, r.lines, r.err.splitlines()) == (code, [o.format(**jobs) for o in out],
                                                     [e.format(**jobs) for e in err])


@pytest.mark.parametrize("prog, argv, first", [
    ("bjobs", ["-z"], "bjobs: illegal option -- z"),
    ("bjobs", ["-o", "jobid nosuchfield"], "bjobs: nosuchfield: Illegal field name in -o"),
    ("bjobs", ["-A"], "bjobs: -A: array summaries are not available on this cluster"),
    ("bkill", ["-y", "1"], "bkill: illegal option -- y"),
    ("bhist", ["-k"], "bhist: illegal option -- k"),
    ("bqueues", ["-k"], "bqueues: illegal option -- k"),
])
def test_unknown_options_get_the_usage(lsf, prog, argv, first):
    r = lsf(prog, *argv)
    assert (r.code, r.out) == (255, "")
    assert r.err.splitlines()[0] == first
    assert r.err.splitlines()[1].startswith(f"Usage: {prog} ")


# -- bkill, bstop, bresume, brequeue, bmod ---------------------------------------------------------------

def test_job_control_words(lsf, jobs):
    run = lsf.submit("-J", "ctl", "sleep", "300")
    lsf.wait_state(run, "RUN")
    assert lsf("bstop", str(run)).lines == [f"Job <{run}> is being stopped"]
    assert lsf("bjobs", "-o", "stat", "-noheader", str(run)).out == "USUSP\n"
    assert lsf("bresume", str(run)).lines == [f"Job <{run}> is being resumed"]
    assert lsf("bkill", "-s", "12", str(run)).lines == [f"Job <{run}> is being signaled"]  # SIGUSR2 ends sleep
    lsf.wait_state(run, "EXIT")
    r = lsf("bkill", str(run), "999999")
    assert (r.code, r.out, r.err.splitlines()) == (
        255, "", [f"Job <{run}>: Job has already finished", "Job <999999>: No matching job found"])
    assert lsf("brequeue", str(run)).lines == [f"Job <{run}> is being requeued"]
    lsf.wait_state(run, "RUN")
    r = lsf("bkill", str(run))
    assert (r.code, r.lines) == (0, [f"Job <{run}> is being terminated"])


def test_bstop_holds_a_pending_job_and_bresume_releases_it(lsf):
    next_year = __import__("time").localtime().tm_year + 1
    pend = lsf.submit("-b", f"{next_year}:01:01:00:00", "true")  # LSF's [[year:][month:]day:]hour:minute
    assert lsf("bstop", str(pend)).lines == [f"Job <{pend}> is being stopped"]
    assert lsf("bjobs", "-o", "stat", "-noheader", str(pend)).out == "PSUSP\n"
    assert lsf("bresume", str(pend)).lines == [f"Job <{pend}> is being resumed"]
    assert lsf("bjobs", "-o", "stat", "-noheader", str(pend)).out == "PEND\n"
    changed = lsf("bmod", "-J", "renamed", "-q", "short", str(pend))
    assert changed.lines == [f"Parameters of job <{pend}> are being changed"]
    assert lsf("bjobs", "-o", "name queue delimiter=' '", "-noheader", str(pend)).lines == ["renamed short"]
    r = lsf("bmod", "-q", "nosuch", str(pend))
    assert r.code == 255 and r.err.endswith("Request aborted.\n")
    assert lsf("bkill", "0").code == 0


# -- bhist, bacct ----------------------------------------------------------------------------------

def test_bhist_and_bacct(lsf, jobs):
    r = lsf("bhist", "-l", str(jobs["done"]))
    assert r.code == 0, r.err
    assert r.lines[1].startswith(f"Job <{jobs['done']}>, Job Name <done>, User <") and "Project <default>" in r.lines[1]
    assert "Summary of time in seconds spent in various states by  " in r.out
    assert r.lines[-1] == "-" * 78
    short = lsf("bhist", str(jobs["done"])).lines
    assert short[:2] == ["Summary of time in seconds spent in various states:",
                         "JOBID   USER    JOB_NAME  PEND    PSUSP   RUN     USUSP   SSUSP   UNKWN   TOTAL"]
    acct = lsf("bacct", "-l", str(jobs["done"]), str(jobs["failed"]))
    assert acct.code == 0, acct.err
    assert ": Completed <done>." in acct.out and ": Completed <exit>." in acct.out
    assert " Total number of done jobs:       1      Total number of exited jobs:     1" in acct.lines


# -- probes ----------------------------------------------------------------------------------------

def test_probes(lsf):
    lsid = lsf("lsid").lines
    assert re.match(r"IBM Spectrum LSF Standard 10\.1\.0\.13, ", lsid[0])
    assert lsid[-2] == "My cluster name is lsftest" and lsid[-1].startswith("My master name is ")
    master = lsid[-1].rsplit(" ", 1)[1]
    header, row = lsf("lsclusters").lines
    assert header == "CLUSTER_NAME   STATUS   MASTER_HOST               ADMIN    HOSTS  SERVERS"
    assert row.split() == ["lsftest", "ok", master, "xceadmin", "1", "1"]
    queues = lsf("bqueues").lines
    assert queues[0] == "QUEUE_NAME      PRIO STATUS          MAX JL/U JL/P JL/H NJOBS  PEND   RUN  SUSP "
    assert [q.split()[:3] for q in queues[1:]] == [["short", "40", "Open:Active"], ["normal", "30", "Open:Active"]]
    hosts = lsf("bhosts").lines
    assert hosts[0] == "HOST_NAME          STATUS       JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV "
    assert hosts[1].split()[:4] == [lsf.cluster.worker_names[0], "ok", "-", "2"]
    conf = lsf("badmin", "showconf", "mbd")
    assert conf.code == 0
    keys = dict(line.strip().split(" = ", 1) for line in conf.lines[1:])
    assert {"LSB_SHAREDIR", "LSF_CONFDIR", "LSF_UNIT_FOR_LIMITS"} <= set(keys) and keys["DEFAULT_QUEUE"] == "normal"
    # What a client then opens there exists, and says what the cluster says (the snakemake LSF
    # executor reads lsb.params under LSF_CONFDIR; dask-jobqueue lsf.conf under LSF_ENVDIR).
    cluster = next(line for line in lsf("lsid").lines if line.startswith("My cluster name is ")).split()[-1]
    params = Path(keys["LSF_CONFDIR"]) / "lsbatch" / cluster / "configdir" / "lsb.params"
    assert "DEFAULT_QUEUE = normal" in params.read_text()
    assert f"LSF_UNIT_FOR_LIMITS={keys['LSF_UNIT_FOR_LIMITS']}" in (Path(keys["LSF_ENVDIR"]) / "lsf.conf").read_text()
    assert lsf("bparams").lines[0] == "Default Queues:  normal"
    bad = lsf("badmin", "hclose", "x")
    assert bad.code == 255 and "xceadmin" in bad.err


# -- other users' text -----------------------------------------------------------------------------

#: What a hostile command line may hold: ESC sequences (clear the screen, retitle the terminal, a
#: CSI in its one-byte C1 form), BEL, CR (overwrite the line), DEL and a right-to-left override.
HOSTILE = "\x1b[2J\x1b]0;owned\x07\r\x9b31m\x7f\u202eevil"


def _raw_controls(text: str) -> list[str]:
    import unicodedata

    return sorted({repr(c) for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf")})


def test_no_listing_prints_another_users_control_characters_raw(lsf, tmp_path):
    jobid = lsf.submit("-o", f"{tmp_path}/out{HOSTILE}.%J", f"true '{HOSTILE}'")
    lsf.wait_state(jobid, "DONE")
    listings = [["bjobs", "-a", "-u", "all"], ["bjobs", "-w", str(jobid)], ["bjobs", "-l", str(jobid)],
                ["bjobs", "-o", "jobid name cmd stat", str(jobid)],
                ["bjobs", "-o", "jobid name:12 cmd:-8 delimiter='|'", str(jobid)],
                ["bjobs", "-json", "-o", "jobid name cmd", str(jobid)],
                ["bhist", str(jobid)], ["bhist", "-l", str(jobid)], ["bhist", "-w", "-a"],
                ["bacct", "-l", str(jobid)], ["bacct", "-l", "-u", "all"]]
    for argv in listings:
        r = lsf(*argv)
        assert r.code == 0, (argv, r.err)
        assert not _raw_controls(r.out) and not _raw_controls(r.err), (argv, r.out)
        if argv[1] in ("-w", "-l") or argv[1:3] == ["-o", "jobid name cmd stat"]:  # the whole command: shown, escaped
            assert "\\x1b[2J\\x1b]0;owned\\x07\\r\\x9b31m\\x7f\\u202eevil" in r.out, (argv, r.out)
    shown = json.loads(lsf("bjobs", "-json", "-o", "cmd", str(jobid)).out)["RECORDS"][0]["COMMAND"]
    assert shown == f"true '{HOSTILE}'"  # JSON's own escapes: a parser reads the text as it was


def test_bhosts_l_is_lsfs_long_host_layout(lsf):
    host = lsf.cluster.worker_names[0]
    wait_for(lambda: lsf.cluster.request("GET", "/v1/hosts")["hosts"][0]["load"].get("mem"), 30, "a load report")
    r = lsf("bhosts", "-l", host)
    assert r.code == 0, r.err
    lines = r.lines
    assert lines[:2] == [f"HOST  {host}",
                         "STATUS           CPUF  JL/U    MAX  NJOBS    RUN  SSUSP  USUSP    RSV DISPATCH_WINDOW"]
    assert lines[2].split() == ["ok", "1.00", "-", "2", "0", "0", "0", "0", "0", "-"]
    at = lines.index(" CURRENT LOAD USED FOR SCHEDULING:")
    assert lines[at + 1].split() == ["r15s", "r1m", "r15m", "ut", "pg", "io", "ls", "it", "tmp", "swp", "mem", "slots"]
    total = lines[at + 2].split()
    assert total[0] == "Total" and re.fullmatch(r"\d+%", total[4]) and re.fullmatch(r"\d+M|\d+\.\dG", total[11])
    assert total[12] == "2" and lines[at + 3].split()[0] == "Reserved"
    at = lines.index(" LOAD THRESHOLD USED FOR SCHEDULING:")
    assert [line.split()[0] for line in lines[at + 2:at + 4]] == ["loadSched", "loadStop"]
    # One host: the same block, but for the load indices, which move between the two reports.
    def without_load(out: str) -> list[str]:
        return [ln for ln in out.splitlines() if ln.split()[:1] not in (["Total"], ["Reserved"])]

    assert without_load(lsf("bhosts", "-l").out) == without_load(r.out)
    assert lsf("bhosts", "-l", "nosuch").err == "nosuch: No such host\n"
