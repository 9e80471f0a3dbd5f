"""snakemake 9 with its slurm and lsf executor plugins, unchanged, on XCE: the rules of a workflow run as
batch jobs of their threads and mem_mb and make every output; a failing rule fails the run and
snakemake names it."""

from __future__ import annotations

import re
import sys

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Three rules of their own size run side by side, `broken` fails beside them, and the local rule `all`
# joins what the jobs made on the submitting side: one round of jobs, so one run shows both a
# workflow completed and a failure reported (--keep-going), in the time a cluster takes for one.
# Each job runs snakemake itself (about 130 MB) under its rule's mem_mb, which Slurm's --mem makes
# its memory limit as on a site that confines memory: every rule asks for enough for that.
SNAKEFILE = r'''
localrules: all

rule all:
    input: "left.txt", "middle.txt", "right.txt"
    output: "joined.txt"
    shell: "cat {input} > {output}"

rule left:
    output: "left.txt"
    threads: 2
    resources: mem_mb=600
    shell: "echo left > {output}"

rule middle:
    output: "middle.txt"
    threads: 1
    resources: mem_mb=400
    shell: "echo middle > {output}"

rule right:
    output: "right.txt"
    threads: 1
    resources: mem_mb=300
    shell: "echo right > {output}"

rule broken:
    output: "never.txt"
    threads: 1
    resources: mem_mb=300
    shell: "echo going wrong >&2; exit 3"
'''

#: Short polls: the plugins wait 40 s (slurm) and 20 s (lsf, not a setting) before the first status
#: query, a real cluster's pace; the behaviour checked is the same.
EXECUTOR_ARGS = {
    "slurm": ["--slurm-init-seconds-before-status-checks", "1"],
    "lsf": [],
}


def snakemake(site, workdir, executor: str, *targets: str):
    workdir.mkdir(exist_ok=True)
    (workdir / "Snakefile").write_text(SNAKEFILE)
    return site.run(sys.executable, "-m", "snakemake", *targets, "--executor", executor, "--jobs", "5",
                    "--keep-going", "--default-resources", "runtime=5", "--seconds-between-status-checks", "1",
                    "--latency-wait", "5", *EXECUTOR_ARGS[executor], cwd=workdir, timeout=240)


def _memory_mib(job: dict) -> int:
    """What XCE holds for the whole job, whichever way the front-end said it: Slurm's --mem as a
    per-task request, LSF's rusage[mem=] per slot."""
    per_task = (job.get("requests") or {}).get("mem")
    if per_task:
        return per_task * job["tasks"] // 2**20
    m = re.search(r"mem=(\d+)M", job.get("request") or "")
    assert m, job
    return int(m.group(1)) * job["tasks"]


@pytest.mark.parametrize("executor", ["slurm", "lsf"])
def test_rules_run_as_jobs_of_their_threads_and_memory_and_a_failing_rule_is_reported(site, executor):
    workdir = site.work / f"wf-{executor}"
    before = {j["jobid"] for j in site.jobs()}
    r = snakemake(site, workdir, executor, "all", "never.txt")
    out = r.stdout + r.stderr
    # the failure: the run fails, and names the rule
    assert r.returncode != 0, out
    assert "Error in rule broken" in out, out
    assert not (workdir / "never.txt").exists()
    # the rest of the workflow: every output made, joined by the local rule
    assert (workdir / "joined.txt").read_text() == "left\nmiddle\nright\n", out
    new = [j for j in site.jobs() if j["jobid"] not in before]
    assert sorted(j["state"] for j in new) == ["DONE", "DONE", "DONE", "EXIT"], new
    # one batch job per rule but the local `all`, each of its rule's threads and mem_mb
    done = [j for j in new if j["state"] == "DONE"]
    assert sorted((j["tasks"], _memory_mib(site.job(j["jobid"]))) for j in done) == [(1, 300), (1, 400), (2, 600)]
