"""Host features, models, types and GPU models on a live cluster of two workers: given in ``xce.toml``
(per host and per host group) and by the workers' own flags (``--feature``, ``--type``,
``--fake-gpus``); ``--constraint`` (the ``constraint`` body field) and ``select[model == X]`` place
jobs only on the hosts that have them, a GPU job of a model runs only where the GPUs are that model
and is handed its own devices in LSF's and Slurm's variables, and what no host can ever give is
refused at submission in Slurm's words. What the hosts are is shown by ``xce hosts -l``, ``lshosts``,
``scontrol show node`` and ``sinfo -o %f``."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FAST

from xce.cluster import LocalCluster

pytestmark = [pytest.mark.integration]

CONFIG = """
[hosts.ft-w1]
features = ["bigmem"]
model = "EPYC_7763"

[host_groups]
gpu = ["ft-w2"]

[host_group_settings.gpu]
features = ["ib"]
gpu_model = "a100"
"""
#: Each worker's own flags: w1 says its type; w2 has two fake GPUs (the configuration names their
#: model, which wins over the flag's) and a feature of its own besides its group's.
FLAGS = {"ft-w1": ["--type", "PPC64LE"], "ft-w2": ["--fake-gpus", "v100:2", "--feature", "nvme"]}


class FlaggedCluster(LocalCluster):
    """A local cluster whose workers are started with extra flags each."""

    def _argv(self, key: str, args: list[str]) -> list[str]:
        return [*super()._argv(key, args), *FLAGS.get(key, [])]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    base = tmp_path_factory.mktemp("features")
    config = base / "xce.toml"
    config.write_text(CONFIG)
    c = FlaggedCluster(base / "state", 2, 2, config=config, host_prefix="ft", **FAST)
    try:
        c.start()
        yield c
    finally:
        c.stop()


def submit(cluster: LocalCluster, cwd: Path, **body) -> int:
    return cluster.request("POST", "/v1/jobs", {"cwd": str(cwd), **body})["jobid"]


def refused(cluster: LocalCluster, cwd: Path, **body) -> str:
    with cluster.session(cluster.token("admin")) as http:
        r = http.request("POST", "/v1/jobs", json={"command": ["true"], "cwd": str(cwd), **body})
    assert r.status_code == 422, r.text
    return " | ".join(e["msg"] for e in r.json()["detail"])


def job(cluster: LocalCluster, jobid: int) -> dict:
    return cluster.request("GET", f"/v1/jobs/{jobid}")


def wait_done(cluster: LocalCluster, jobids: list[int], timeout: float = 60.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        jobs = [job(cluster, j) for j in jobids]
        if all(j["state"] in ("DONE", "EXIT") for j in jobs):
            for j in jobs:
                assert j["state"] == "DONE", (j["jobid"], j["reason"])
            return jobs
        assert time.monotonic() < deadline, [(j["jobid"], j["state"], j["pend_reasons"]) for j in jobs]
        time.sleep(0.1)


def hosts_of(j: dict) -> set[str]:
    return {p["host"] for p in j["placement"]}


def run(cluster: LocalCluster, cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    """A program as a user runs it: ``xce ...``, or an LSF/Slurm front-end by name."""
    from xce.compat.programs import PROGRAMS

    module = PROGRAMS.get(argv[0])
    cmd = ([sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main(sys.argv[1:]))", *argv[1:]]
           if module else [sys.executable, "-m", "xce.cli.main", *argv])
    return subprocess.run(cmd, capture_output=True, text=True, env=cluster.env(), cwd=cwd, timeout=60)


def test_constraints_place_jobs_only_on_hosts_with_the_features(cluster, tmp_path):
    big = [submit(cluster, tmp_path, command=["sleep", "0.2"], constraint="bigmem") for _ in range(3)]
    fast = [submit(cluster, tmp_path, command=["sleep", "0.2"], constraint="ib&nvme") for _ in range(3)]
    either = [submit(cluster, tmp_path, command=["true"], constraint="(bigmem|nvme)") for _ in range(2)]
    same = submit(cluster, tmp_path, command=["true"], constraint="[bigmem|ib]", tasks=2, nodes=1)
    jobs = wait_done(cluster, [*big, *fast, *either, same])
    assert all(hosts_of(j) == {"ft-w1"} for j in jobs[:3])
    assert all(hosts_of(j) == {"ft-w2"} for j in jobs[3:6])
    assert len(hosts_of(jobs[-1])) == 1
    assert job(cluster, big[0])["sched_request"] == "select[bigmem]"
    assert "Host features: ib&nvme" in run(cluster, tmp_path, "jobs", "-l", str(fast[0])).stdout


def test_select_model_and_type_match_the_hosts_model_and_type(cluster, tmp_path):
    r = run(cluster, tmp_path, "submit", "-R", "select[model == EPYC_7763]", "true")
    assert r.returncode == 0, r.stderr
    by_type = submit(cluster, tmp_path, command=["true"], request="select[type == PPC64LE]")
    not_w1 = submit(cluster, tmp_path, command=["true"], request="select[!bigmem]")
    by_model = int(r.stdout.split("<")[1].split(">")[0]) if "<" in r.stdout else int(r.stdout.split()[-1])
    jobs = wait_done(cluster, [by_model, by_type, not_w1])
    assert [hosts_of(j) for j in jobs] == [{"ft-w1"}, {"ft-w1"}, {"ft-w2"}]


def test_what_no_host_has_is_refused_at_submission_in_slurms_words(cluster, tmp_path):
    assert refused(cluster, tmp_path, constraint="skylake").startswith(
        "Invalid feature specification: no host has feature skylake (features here: bigmem, ib, nvme)")
    assert refused(cluster, tmp_path, constraint="bigmem&ib").startswith(
        "Requested node configuration is not available")
    assert "Invalid feature specification" in refused(cluster, tmp_path, constraint="bigmem*2", tasks=2)
    assert refused(cluster, tmp_path, gpu_model="h100", requests={"xce.io/gpu": 1}).startswith(
        "Invalid generic resource (gres) specification: no host has GPUs of model 'h100' (GPU models here: a100)")
    assert "at most 2" in refused(cluster, tmp_path, gpu_model="a100", requests={"xce.io/gpu": 3})
    # Unless the user asks to pend anyway: it waits for a host that has it.
    waiting = submit(cluster, tmp_path, command=["true"], constraint="skylake", allow_pending_forever=True)
    assert job(cluster, waiting)["state"] == "PEND"
    cluster.request("POST", f"/v1/jobs/{waiting}/kill")


def test_a_gpu_job_of_a_model_gets_its_own_devices_named_in_slurms_and_lsfs_variables(cluster, tmp_path):
    show = ('echo "$CUDA_VISIBLE_DEVICES $SLURM_JOB_GPUS $GPU_DEVICE_ORDINAL ${SLURM_STEP_GPUS-unset}"; '
            'sleep 1.5')
    ids = [submit(cluster, tmp_path, command=["sh", "-c", show], gpu_model="a100", requests={"xce.io/gpu": 1},
                  stdout=str(tmp_path / f"gpu{i}.out")) for i in range(2)]
    jobs = wait_done(cluster, ids)
    assert all(hosts_of(j) == {"ft-w2"} for j in jobs)
    seen = sorted((tmp_path / f"gpu{i}.out").read_text().split() for i in range(2))
    # Both ran at once (one host, two devices): each saw one device, never the other's.
    assert jobs[0]["start_time"] < jobs[1]["end_time"] and jobs[1]["start_time"] < jobs[0]["end_time"]
    assert seen == [["0", "0", "0", "unset"], ["1", "1", "1", "unset"]]


def test_the_hosts_features_models_and_gpus_are_shown_as_each_program_shows_them(cluster, tmp_path):
    long = run(cluster, tmp_path, "hosts", "-l").stdout
    assert "features     bigmem" in long and "model        EPYC_7763" in long and "gpu_model    a100" in long
    assert "features     ib nvme" in long and "type         PPC64LE" in long
    lines = run(cluster, tmp_path, "lshosts").stdout.splitlines()
    assert lines[0].split() == ["HOST_NAME", "type", "model", "cpuf", "ncpus", "maxmem", "maxswp", "server",
                                "RESOURCES"]
    w1 = next(line.split() for line in lines if line.startswith("ft-w1"))
    w2 = next(line.split() for line in lines if line.startswith("ft-w2"))
    assert w1[1:3] == ["PPC64LE", "EPYC_7763"] and w1[-1] == "(bigmem)"
    assert w2[2] == "-" and w2[-2:] == ["(ib", "nvme)"]
    gpus = run(cluster, tmp_path, "lshosts", "-gpu").stdout.splitlines()
    assert [line.split()[-5:-3] for line in gpus[1:]] == [["0", "a100"], ["1", "a100"]]
    node = run(cluster, tmp_path, "scontrol", "show", "node", "ft-w2").stdout
    assert "AvailableFeatures=ib,nvme" in node and "ActiveFeatures=ib,nvme" in node and "Gres=gpu:a100:2" in node
    assert run(cluster, tmp_path, "scontrol", "show", "node", "nosuch").stderr == \
        "scontrol: error: Node nosuch not found\n"
    rows = run(cluster, tmp_path, "sinfo", "-h", "-o", "%N %f %G").stdout.split("\n")
    assert sorted(r for r in rows if r) == ["ft-w1 bigmem (null)", "ft-w2 ib,nvme gpu:a100:2"]


@pytest.mark.parametrize("flags, says", [
    (["--feature", "ib,9lives"], "xce worker: --feature: feature '9lives' is not a feature name"),
    (["--fake-gpus", "a100"], "xce worker: --fake-gpus: fake GPUs 'a100': expected MODEL:COUNT"),
])
def test_a_worker_refuses_a_flag_it_cannot_register_before_it_starts(tmp_path, flags, says):
    r = subprocess.run([sys.executable, "-m", "xce.cli.main", "worker", "--url", "http://127.0.0.1:9", "--token", "t",
                        "--state-dir", str(tmp_path), *flags], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith(says), r.stderr
