"""squeue's reason column against a live cluster: each way XCE holds a job back shows as the code
Slurm gives it (``Resources``, ``Dependency``, ``BeginTime``, ``PartitionInactive`` ...), never a
blanket ``Priority``."""

from __future__ import annotations

import pytest

from xce.testing.wait import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def submit(slurm, *args: str) -> str:
    r = slurm("sbatch", "--parsable", *args)
    assert r.code == 0, r.err
    return r.out.strip()


def reasons(slurm) -> dict[str, str]:
    r = slurm("squeue", "-h", "-t", "PD", "-o", "%i %r")
    assert r.code == 0, r.err
    return dict(line.split(" ", 1) for line in r.out.splitlines())


def test_each_pend_reason_is_slurms_code(slurm):
    failed = submit(slurm, "--wrap", "exit 1")
    slurm.wait_state(failed, ("EXIT",))
    filler = submit(slurm, "-N", "2", "--ntasks-per-node", "2", "-t", "10", "--wrap", "sleep 300")
    slurm.wait_state(filler, ("RUN",))
    expected = {
        submit(slurm, "-n", "1", "--wrap", "true"): "Resources",
        submit(slurm, "-d", f"afterok:{filler}", "--wrap", "true"): "Dependency",
        submit(slurm, "-d", f"afterok:{failed}", "--wrap", "true"): "DependencyNeverSatisfied",
        submit(slurm, "--begin", "now+1hour", "--wrap", "true"): "BeginTime",
        submit(slurm, "-H", "--wrap", "true"): "JobHeldUser",
        submit(slurm, "-a", "1-3%1", "-H", "--wrap", "true") + "_[1-3%1]": "JobHeldUser",
    }
    wait_for(lambda: reasons(slurm) == expected, 60, lambda: f"reasons {reasons(slurm)} to be {expected}")
    r = slurm("squeue", "-h", "-j", ",".join(k.partition("_")[0] for k in expected), "-o", "%R")
    assert sorted(r.out.splitlines()) == sorted(f"({v})" for v in expected.values())

    slurm.cluster.request("POST", "/v1/admin/queues/normal/close", {"reason": "maintenance"})
    try:  # a closed queue takes and runs nothing: Slurm's INACTIVE partition
        closed = {k: "PartitionInactive" if v in ("Resources",) else v for k, v in expected.items()}
        wait_for(lambda: reasons(slurm) == closed, 60, lambda: f"reasons {reasons(slurm)} to be {closed}")
        r = slurm("sinfo", "-h", "-o", "%P %a")
        assert r.out.split() == ["normal*", "inact"]
    finally:
        slurm.cluster.request("POST", "/v1/admin/queues/normal/open", {})
