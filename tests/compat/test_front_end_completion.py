"""Shell completion for the front-ends and for ``xce``, tried as a user has it: bash with the script
``xce completion bash`` prints, a live cluster, the front-ends installed by ``xce compat install``.
Options come from each program's table; queues, hosts, users and job ids from the cluster."""

from __future__ import annotations

import getpass
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from xce.cluster import LocalCluster
from xce.compat.manual import of

XCE = Path(sys.executable).parent / "xce"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("complete")
    cluster = LocalCluster(base / "state", 2, 2, round_interval=0.05, report_interval=0.5)
    cluster.start()
    try:
        env = cluster.env()
        done = subprocess.run([str(XCE), "compat", "install", "--only-me", str(base / "bin")], capture_output=True,
                              text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        env["PATH"] = os.pathsep.join([str(base / "bin"), str(XCE.parent), env["PATH"]])
        held = subprocess.run([str(XCE), "submit", "-H", "-J", "held", "--", "sleep", "600"], capture_output=True,
                              text=True, timeout=60, env=env, cwd=base)
        assert held.returncode == 0, held.stderr
        jobid = next(w for w in held.stdout.replace("<", " ").replace(">", " ").split() if w.isdigit())
        script = subprocess.run([str(XCE), "completion", "bash"], capture_output=True, text=True, timeout=60,
                                env=env, check=True).stdout
        (base / "complete.bash").write_text(script)
        c = _client(cluster)
        queues = sorted(q["name"] for q in c.get("/v1/queues")["queues"])
        hosts = sorted(h["name"] for h in c.get("/v1/hosts")["hosts"])
        c.close()
        yield {"env": env, "script": base / "complete.bash", "jobid": jobid, "queues": queues, "hosts": hosts,
               "cluster": cluster}
    finally:
        cluster.stop()


def _client(cluster):
    from xce.cli.client import Client
    from xce.client import statedir

    sd = str(cluster.state_dir)
    return Client(",".join(statedir.controller_urls(sd)), statedir.read_token(sd))


def tab(site, line: str, cwd: Path | None = None) -> list[str]:
    """What bash offers on TAB at the end of ``line``, through the installed completion."""
    words = line.split(" ")
    probe = (f"source {shlex.quote(str(site['script']))}\n"
             f"COMP_LINE={shlex.quote(line)}; COMP_POINT=${{#COMP_LINE}}\n"
             f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
             f"spec=$(complete -p {shlex.quote(words[0])}); fn=${{spec#*-F }}; fn=${{fn%% *}}\n"
             '"$fn"; printf "%s\\n" "${COMPREPLY[@]}"\n')
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=60, env=site["env"],
                         cwd=cwd)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    return [w for w in out.stdout.split("\n") if w]


def test_partitions_and_queues_come_from_the_cluster(site):
    assert tab(site, "sbatch -p ") == site["queues"]
    assert tab(site, "bsub -q ") == site["queues"]
    assert tab(site, "squeue --partition=") == site["queues"]  # bash replaces what follows '='
    assert tab(site, "xce submit -q ") == site["queues"]
    assert tab(site, f"sinfo -p {site['queues'][0][:1]}") == [q for q in site["queues"] if q[:1] == site["queues"][0][:1]]


def test_hosts_users_and_job_ids_come_from_the_cluster(site):
    assert tab(site, "bjobs -m ") == site["hosts"]
    assert tab(site, "sbatch --nodelist ") == site["hosts"]
    assert getpass.getuser() in tab(site, "squeue -u ")
    assert tab(site, "scancel ") == [site["jobid"]]
    assert tab(site, "bkill ") == [site["jobid"]]
    assert tab(site, "xce kill ") == [site["jobid"]]
    assert tab(site, "xce jobs -q ") == site["queues"]
    assert tab(site, "scontrol show j") == ["job"]
    assert tab(site, "scontrol show job ") == [site["jobid"]]
    assert tab(site, "scontrol -o show node ") == site["hosts"]
    assert tab(site, "scontrol release ") == [site["jobid"]]


def test_options_come_from_each_programs_table(site):
    assert tab(site, "sbatch --par") == ["--parsable", "--partition"]
    assert tab(site, "bjobs -no") == ["-noheader"]
    offered = tab(site, "squeue -")
    assert {f"--{f.name}" for f in of("squeue").flags} <= set(offered)
    assert tab(site, "scancel --signal ") == ["KILL", "TERM", "INT", "HUP", "USR1", "USR2", "STOP", "CONT"]


def test_after_the_script_the_shell_completes_file_names(site, tmp_path):
    (tmp_path / "job.sh").write_text("#!/bin/sh\n")
    assert tab(site, "sbatch -p x jo", tmp_path) == ["job.sh"]
    assert tab(site, "bsub -n 2 jo", tmp_path) == ["job.sh"]
    assert tab(site, "sbatch -o jo", tmp_path) == ["job.sh"]


def test_without_a_controller_completion_offers_nothing_quietly_and_quickly(site):
    env = {**site["env"], "XCE_URL": "http://127.0.0.1:9", "XCE_TOKEN": "x"}
    dead = {**site, "env": env}
    start = time.monotonic()
    assert tab(dead, "scancel ") == []
    assert tab(dead, "sbatch -p ") == []
    assert time.monotonic() - start < 10
    r = subprocess.run([str(XCE), "__complete-values", "queues"], capture_output=True, text=True, timeout=30, env=env)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    live = subprocess.run([str(XCE), "__complete-values", "hosts"], capture_output=True, text=True, timeout=30,
                          env=site["env"])
    assert live.stdout.split() == site["hosts"]


def test_zsh_completes_the_front_ends_and_xce_from_the_same_answers(site, tmp_path):
    """zsh's completion system is stood in for by functions that print what would be offered."""
    script = subprocess.run([str(XCE), "completion", "zsh"], capture_output=True, text=True, timeout=60,
                            env=site["env"], check=True).stdout
    (tmp_path / "c.zsh").write_text(script)
    probe = (f"compdef() {{ : }}\ncompadd() {{ [[ $1 == -- ]] && shift; print -l -- \"$@\" }}\n"
             f"_files() {{ print -- FILES }}\nsource {shlex.quote(str(tmp_path / 'c.zsh'))}\n"
             "words=(sbatch -p ''); CURRENT=3; _xce_compat_complete; print -- ---\n"
             "words=(bkill ''); CURRENT=2; _xce_compat_complete; print -- ---\n"
             "words=(squeue --par); CURRENT=2; _xce_compat_complete; print -- ---\n"
             "words=(xce submit -q ''); CURRENT=4; _xce_complete\n")
    out = subprocess.run(["zsh", "-f", "-c", probe], capture_output=True, text=True, timeout=60, env=site["env"])
    assert out.returncode == 0 and out.stderr == "", out.stderr
    parts = [p.split() for p in out.stdout.split("---\n")]
    assert parts == [site["queues"], [site["jobid"]], ["--partition"], site["queues"]]
