"""The multi-host test bed itself: hosts in network namespaces behind a bridge, cleaned up always."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from xce.procs import pid_alive
from xce.testing.netbed import NetBed, clean_leftovers, ip, namespaces, netbed, wait_for  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def _links() -> set[str]:
    return {link["ifname"] for link in json.loads(ip("-j", "link", "show"))}


def test_a_job_submitted_from_the_root_namespace_runs_on_a_host_behind_the_bridge(netbed, tmp_path):
    bed = netbed(hosts=2, slots=1)
    assert bed.url.startswith(f"http://{bed.bridge_address}:")
    hosts = {h["name"]: h for h in bed.hosts()}
    assert sorted(hosts) == ["h1", "h2"] and all(h["status"] == "ok" for h in hosts.values())
    out = tmp_path / "out"
    jobid = bed.submit("-o", str(out), "--", "sh", "-c", "echo host=$XCE_HOSTS; ip -4 -o addr show dev eth0")
    job = bed.wait_state(jobid, "DONE")
    assert job["exit_code"] == 0, job
    host = job["placement"][0]["host"]
    text = out.read_text()
    # The job ran inside its host's namespace: its only network is that host's address on the bridge.
    assert f"host={host}" in text and f"inet {bed.address(host)}/24" in text, text
    # Each worker lives in its host's namespace, and the controller is not in any of them.
    for host in ("h1", "h2"):
        assert bed.procs[host].pid in bed.pids(host)
    assert bed.procs["controller"].pid not in bed.pids("h1") + bed.pids("h2")


def test_stop_removes_namespaces_links_and_processes_even_after_a_failure(tmp_path):
    bed = NetBed(tmp_path / "state", hosts=2, slots=1)
    with pytest.raises(ZeroDivisionError):
        with bed:
            made = [bed.ns(h) for h in bed.worker_names]
            assert set(made) <= set(namespaces())
            pid = bed.procs["h1"].pid
            1 / 0  # noqa: B018 - the failure the test is about
    assert not set(made) & set(namespaces())
    assert not {n for n in _links() if n.startswith(bed.tag)}
    assert not pid_alive(pid)


def test_leftovers_of_a_crashed_run_are_removed_by_the_next_bed(tmp_path):
    # A bed made by a process that then died (SIGKILL: no teardown ran).
    code = ("import os, sys, time\nfrom xce.testing.netbed import NetBed\n"
            "bed = NetBed(sys.argv[1], hosts=1, slots=1); bed._build()\n"
            "import subprocess\nsubprocess.Popen(['ip', 'netns', 'exec', bed.ns('h1'), 'sleep', '300'])\n"
            "print(bed.tag, flush=True); time.sleep(300)")
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "s")], stdout=subprocess.PIPE, text=True)
    try:
        tag = p.stdout.readline().strip()
        assert tag, "the crashing bed did not start"
        stale = f"xce-{tag}-h1"
        assert stale in namespaces() and tag in _links()
        sleeper = wait_for(lambda: [int(x) for x in ip("netns", "pids", stale).split()], 10, "the sleeper")
    finally:
        p.kill()
        p.wait()
    removed = clean_leftovers()
    assert f"netns {stale}" in removed
    assert stale not in namespaces() and tag not in _links()
    assert not any(pid_alive(pid) for pid in sleeper)
