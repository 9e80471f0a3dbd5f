"""A job runs with its submitter's environment, and nothing privileged ever does.

A multi-user cluster (root workers, each job as its owner) and real Unix users. The submitter's
environment is the attacker's here: every variable that steers a dynamic linker, a shell or a
Python interpreter points at code that records the uid it runs as. The job itself must see (and
use) all of it, as LSF and Slurm give it; the worker, its spawner and the site's hooks, which run
as root, must never see any of it. Each test fails if the attack works.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from sec_harness import Site, reachable_dir, run_as, unix_users

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.slow]

FAST = {"round_interval": 0.05, "report_interval": 0.5}
#: In every hostile value, so that any process's environment can be searched for it.
EVIL = "xtsevil"

_PRELOAD_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void hit(void) {
    int fd = open("%(mark)s", O_WRONLY | O_APPEND | O_CREAT, 0666);
    if (fd >= 0) { dprintf(fd, "%%d preload\n", (int)getuid()); close(fd); }
}
"""


def _wrapper(mark: Path, real: str) -> str:
    return f'#!/bin/sh\necho "$(/usr/bin/id -u) {Path(real).name}" >> {mark}\nexec {real} "$@"\n'


def _hostile_environment(base: Path) -> tuple[dict[str, str], Path]:
    """Variables an attacker would set, each pointing at code that records who ran it; the record."""
    evil = base / EVIL
    (evil / "bin").mkdir(parents=True)
    (evil / "py").mkdir()
    mark = base / "mark"
    mark.touch()
    mark.chmod(0o666)
    for name in ("sh", "bash", "id", "true", "env", "python3", "mkdir", "chown", "cat", "sleep", "ls", "kill"):
        real = shutil.which(name, path="/usr/bin:/bin")
        if real:
            (evil / "bin" / name).write_text(_wrapper(mark, real))
            (evil / "bin" / name).chmod(0o755)
    (evil / "preload.c").write_text(_PRELOAD_C % {"mark": mark})
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(evil / "preload.so"), str(evil / "preload.c")], check=True,
                   capture_output=True)
    (evil / "bashenv.sh").write_text(f'echo "$(/usr/bin/id -u) bashenv" >> {mark}\n')
    (evil / "py" / "sitecustomize.py").write_text(f"import os\nopen({str(mark)!r}, 'a').write(f'{{os.getuid()}} python\\n')\n")
    for path in evil.rglob("*"):
        path.chmod(path.stat().st_mode | 0o055)
    env = {
        "PATH": f"{evil}/bin:/usr/bin:/bin", "LD_PRELOAD": f"{evil}/preload.so", "LD_LIBRARY_PATH": str(evil),
        "BASH_ENV": f"{evil}/bashenv.sh", "ENV": f"{evil}/bashenv.sh", "PYTHONPATH": f"{evil}/py",
        "PYTHONSTARTUP": f"{evil}/py/sitecustomize.py", "PYTHONHOME": f"{evil}/pyhome", "IFS": "/",
        "GCONV_PATH": str(evil), "PYTHONINSPECT": EVIL, "PERL5OPT": f"-M{EVIL}", "TMPDIR": f"{evil}/tmp",
        "XCE_URL": f"http://{EVIL}.invalid:1", "XCE_TOKEN": EVIL, "HOSTALIASES": f"{evil}/hosts",
        "MYVAR": f"{EVIL} with spaces", "SLURM_JOB_ID": "999999", "LSB_JOBID": "999999",
    }
    return env, mark


@pytest.fixture(scope="module")
def site():
    with reachable_dir() as base, unix_users(2, base) as users:
        hooks = base / "hooks"
        hooks.mkdir(mode=0o755)
        hook = hooks / "dump-env"
        hook.write_text(f'#!/bin/sh\nenv > {hooks}/env.$XCE_HOOK_EVENT.$XCE_JOBID\n')
        hook.chmod(0o755)
        cfg = base / "xce.toml"
        cfg.write_text(f'[queues.normal]\nhooks = {{ start = "{hook}", stop = "{hook}" }}\n')
        cluster = LocalCluster(base / "state", 2, 2, config=cfg, run_as_self=False, **FAST)
        cluster.start()
        try:
            yield Site(cluster, users, None, base)
        finally:
            cluster.stop()


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def _root_processes_of(site: Site) -> list[psutil.Process]:
    """The cluster's own processes and every process they started that is not a job's."""
    out = []
    for proc in site.cluster.procs.values():
        try:
            top = psutil.Process(proc.pid)
            out += [p for p in [top, *top.children(recursive=True)] if p.uids().real == 0]
        except psutil.NoSuchProcess:
            continue
    return out


def test_the_job_gets_the_hostile_environment_and_nothing_privileged_does(site):
    a = site.alice
    env, mark = _hostile_environment(site.base)
    jobid = site.submit(a, ["sh", "-c", 'id -u; echo "$MYVAR|$SLURM_JOB_ID|$LSB_JOBID"; sleep 1'], env=env,
                        stdout="env.%J")
    # While it runs: no root process of the cluster holds any of it.
    deadline = time.monotonic() + 30
    while site.job(jobid)["state"] == "PEND" and time.monotonic() < deadline:
        time.sleep(0.05)
    for proc in _root_processes_of(site):
        try:
            assert EVIL not in " ".join(f"{k}={v}" for k, v in proc.environ().items()), proc.cmdline()
        except psutil.NoSuchProcess:
            continue
    job = site.wait(jobid)
    assert job["state"] == "DONE", job["reason"]
    uid, values = _lines(a.home / f"env.{jobid}")
    assert uid == str(a.uid)
    # The submitter's own variables reach the job; the ones naming a job are the job's own.
    assert values == f"{EVIL} with spaces|{jobid}|{jobid}"
    records = _lines(mark)
    # The job used what it was given (its PATH, its LD_PRELOAD) ...
    assert f"{a.uid} preload" in records and f"{a.uid} sh" in records
    # ... and nothing ran any of it as anybody else.
    assert {line.split()[0] for line in records} == {str(a.uid)}, records
    for event in ("start", "stop"):
        dump = site.base / "hooks" / f"env.{event}.{jobid}"
        deadline = time.monotonic() + 15
        while not dump.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert dump.exists(), f"the {event} hook did not run"
        assert EVIL not in dump.read_text()
    # The cluster still works for everybody (a root Python given PYTHONHOME would have died).
    assert site.wait(site.submit(site.bob, ["true"]))["state"] == "DONE"


def test_lsf_and_slurm_variables_of_a_two_host_four_task_job(site):
    a = site.alice
    jobid = site.submit(a, ["sh", "-c", "env | grep -E '^(LSB_|LS_SUBCWD|SLURM|XCE_SUBMIT|XCE_ARRAY)' | sort"],
                        tasks=4, request="span[ptile=2]", name="two-hosts", stdout="vars.%J",
                        submit_host="login7", env={"PATH": "/usr/bin:/bin"})
    job = site.wait(jobid)
    assert job["state"] == "DONE", job["reason"]
    hosts = [p["host"] for p in job["placement"]]
    v = dict(line.split("=", 1) for line in _lines(a.home / f"vars.{jobid}"))
    assert len(hosts) == 2
    assert v["LSB_JOBID"] == str(jobid) and v["LSB_JOBINDEX"] == "0" and v["LSB_JOBNAME"] == "two-hosts"
    assert v["LSB_HOSTS"] == f"{hosts[0]} {hosts[0]} {hosts[1]} {hosts[1]}"
    assert v["LSB_MCPU_HOSTS"] == f"{hosts[0]} 2 {hosts[1]} 2" and v["LSB_DJOB_NUMPROC"] == "4"
    assert v["LSB_QUEUE"] == "normal" and v["LS_SUBCWD"] == str(a.home)
    assert v["SLURM_JOB_ID"] == v["SLURM_JOBID"] == str(jobid) and v["SLURM_JOB_NAME"] == "two-hosts"
    assert v["SLURM_NTASKS"] == "4" and v["SLURM_CPUS_ON_NODE"] == "2" and v["SLURM_CPUS_PER_TASK"] == "1"
    assert v["SLURM_JOB_NUM_NODES"] == "2" and v["SLURM_JOB_NODELIST"] == ",".join(hosts)
    assert v["SLURM_TASKS_PER_NODE"] == "2(x2)" and v["SLURMD_NODENAME"] == hosts[0]
    assert v["SLURM_NODEID"] == "0" and v["SLURM_PROCID"] == "0" and v["SLURM_LOCALID"] == "0"
    assert v["SLURM_SUBMIT_DIR"] == str(a.home) and v["SLURM_JOB_PARTITION"] == "normal"
    assert v["SLURM_JOB_UID"] == str(a.uid) and v["SLURM_JOB_USER"] == a.name
    assert v["XCE_SUBMIT_HOST"] == v["SLURM_SUBMIT_HOST"] == "login7" and v["XCE_SUBMIT_DIR"] == str(a.home)
    assert "SLURM_ARRAY_TASK_ID" not in v and "XCE_ARRAY_JOBID" not in v


def test_array_elements_see_their_index_and_the_arrays_bounds(site):
    a = site.alice
    r = site.as_(a).post("/v1/jobs", json={
        "command": ["sh", "-c", "env | grep -E '^(LSB_JOB|SLURM_ARRAY|SLURM_JOB_ID|XCE_ARRAY)' | sort"],
        "cwd": str(a.home), "array": "1-5:2", "stdout": "arr.%J.%I"})
    assert r.status_code == 201, r.text
    first = r.json()["jobid"]
    for element, index in zip(r.json()["jobids"], (1, 3, 5)):
        assert site.wait(element)["state"] == "DONE"
        v = dict(line.split("=", 1) for line in _lines(a.home / f"arr.{first}.{index}"))
        assert v == {"LSB_JOBID": str(first), "LSB_JOBINDEX": str(index), "LSB_JOBNAME": v["LSB_JOBNAME"],
                     "SLURM_JOB_ID": str(element), "SLURM_ARRAY_JOB_ID": str(first),
                     "SLURM_ARRAY_TASK_ID": str(index), "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "5",
                     "SLURM_ARRAY_TASK_COUNT": "3", "XCE_ARRAY_JOBID": str(first), "XCE_ARRAY_INDEX": str(index)}


def test_a_spooled_bash_script_runs_under_bash_and_only_its_owner_can_read_it(site):
    a, b = site.alice, site.bob
    script = "#!/bin/bash\narr=(a b c)\necho ${arr[2]} $(id -u) \"$1\"\ncat \"$0\" > /dev/null && echo readable\nsleep 2\n"
    jobid = site.submit(a, ["job.sh", "first arg"], script=script, stdout="spool.%J")
    deadline = time.monotonic() + 30
    copy = next(iter(site.cluster.spool_root.glob(f"*/job{jobid}.script")), None)
    while copy is None and time.monotonic() < deadline:
        time.sleep(0.05)
        copy = next(iter(site.cluster.spool_root.glob(f"*/job{jobid}.script")), None)
    assert copy is not None, "the script was never spooled"
    st = copy.stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (a.uid, 0o500)
    as_bob = {"user": b.uid, "group": b.gid, "extra_groups": [], "capture_output": True, "text": True}
    assert subprocess.run(["cat", str(copy)], **as_bob).returncode != 0
    assert subprocess.run(["ls", str(copy.parent)], **as_bob).returncode != 0
    job = site.wait(jobid)
    assert job["state"] == "DONE", job["reason"]
    assert _lines(a.home / f"spool.{jobid}") == [f"c {a.uid} first arg", "readable"]
    assert not copy.exists(), "the spooled copy outlived its job"


@pytest.mark.parametrize("body, where, words", [
    ({"script": "#!/bin/sh\necho \0\n"}, ["body", "script"], "NUL"),
    ({"env": {"A=B": "x"}}, ["body", "env", "A=B"], "without '='"),
    ({"env": {"BIG": "x" * 65537}}, ["body", "env", "BIG"], "65536"),
    ({"env": {f"V{i}": "x" * 60000 for i in range(5)}}, ["body", "env"], "larger than"),
    ({"script": "x" * (4 * 1024 * 1024 + 1)}, ["body", "script"], "4194304"),
])
def test_environments_and_scripts_over_the_limits_are_refused_clearly(site, body, where, words):
    r = site.as_(site.alice).post("/v1/jobs", json={"command": ["job.sh"], "cwd": str(site.alice.home), **body})
    assert r.status_code == 422, r.text
    errors = r.json()["detail"]
    assert any(e["loc"][:len(where)] == where and words in e["msg"] for e in errors), errors


def test_a_stale_launch_key_in_the_environment_is_not_the_jobs(site):
    """A job submitted from inside another job must not inherit that job's right to start tasks."""
    a = site.alice
    jobid = site.submit(a, ["sh", "-c", 'echo "[$XCE_LAUNCH_KEY]" "[$XCE_TASK_SERVERS]"'], stdout="key.%J",
                        env={"XCE_LAUNCH_KEY": "stolen", "XCE_TASK_SERVERS": "h=1.2.3.4:1", "PATH": "/usr/bin:/bin"})
    assert site.wait(jobid)["state"] == "DONE"
    assert "stolen" not in (a.home / f"key.{jobid}").read_text()
    assert "1.2.3.4" not in (a.home / f"key.{jobid}").read_text()


def _cli(site: Site, user, *args: str, env: dict[str, str] | None = None, stdin: str = ""):
    """``xce ARGS`` as ``user`` from a shell with ``env`` exported, authenticated by a token of theirs."""
    site.as_(user)
    r = run_as(user, list(args), env={"XCE_URL": site.cluster.url, "XCE_TOKEN": site.tokens[user.name], **(env or {})},
               cwd=user.home, stdin=stdin)
    assert r.returncode == 0, r.stderr
    return int(r.stdout.split("<")[1].split(">")[0])


def test_xce_submit_carries_the_users_shell_and_spools_its_scripts(site):
    a = site.alice
    shell = {"MYVAR": "from the shell", "LD_LIBRARY_PATH": "/opt/site/lib", "PATH": "/opt/site/bin:/usr/bin:/bin"}
    show = 'echo "$MYVAR|$LD_LIBRARY_PATH|$PATH|${XCE_TOKEN:-no token}"'
    plain = _cli(site, a, "submit", "-o", "shell.%J", "--", "sh", "-c", show, env=shell)
    # A bash-only script, not executable, deleted as soon as it is submitted (as workflow tools do).
    script = a.home / "tmpjob.sh"
    script.write_text("#!/bin/bash\n#BSUB -o script.%J\narr=(a b c)\necho ${arr[1]} \"$MYVAR\"\n")
    os.chown(script, a.uid, a.gid)
    script.chmod(0o600)
    deleted = _cli(site, a, "submit", str(script), env=shell)
    script.unlink()
    # The script on standard input: `xce submit < job.sh`.
    piped = _cli(site, a, "submit", env=shell, stdin="#!/bin/sh\n#SBATCH --output=piped.%j\necho piped \"$MYVAR\"\n")
    for jobid in (plain, deleted, piped):
        job = site.wait(jobid)
        assert job["state"] == "DONE", job["reason"]
    assert _lines(a.home / f"shell.{plain}") == ["from the shell|/opt/site/lib|/opt/site/bin:/usr/bin:/bin|no token"]
    assert _lines(a.home / f"script.{deleted}") == ["b from the shell"]
    assert _lines(a.home / f"piped.{piped}") == ["piped from the shell"]
    none = _cli(site, a, "submit", "--env", "none,KEPT=1", "-o", "none.%J", "--", "sh", "-c", 'echo "$MYVAR|$KEPT"',
                env=shell)
    assert site.wait(none)["state"] == "DONE"
    assert _lines(a.home / f"none.{none}") == ["|1"]
