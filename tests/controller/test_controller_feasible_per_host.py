"""A job's per-host amounts (``rusage[NAME=V/host]``, GPUs per node) judged at submission as Slurm
judges ``--gres``: refused when no host has GPUs, or when no host has that many."""

from xce.controller.jobs.feasible import Capacity


def cluster(gpus_per_host: int | None) -> Capacity:
    largest = {"slots": 8} | ({"xce.io/gpu": gpus_per_host} if gpus_per_host is not None else {})
    total = {k: 2 * v for k, v in largest.items()}
    return Capacity(hosts=2, slots=16, largest=largest, total=total, slots_of={"a": 8, "b": 8})


def test_gpus_per_host_on_a_cluster_without_gpus_are_refused_in_slurms_words():
    why = cluster(None).problem("span[hosts=1] rusage[xce.io/gpu=1/host]", 8)
    assert why.startswith("Invalid generic resource (gres) specification: needs xce.io/gpu 1 per host but no host "
                          "has GPUs")


def test_more_gpus_per_host_than_any_host_has_are_refused_and_what_fits_is_not():
    assert cluster(2).problem("rusage[xce.io/gpu=4/host]", 8).startswith(
        "Requested node configuration is not available: needs xce.io/gpu 4 per host, short by xce.io/gpu 2")
    assert cluster(2).problem("span[hosts=1] rusage[xce.io/gpu=2/host]", 8) is None
