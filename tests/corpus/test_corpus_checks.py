"""The corpus test's own yardsticks, against the programs' documented meanings: time and memory as
sbatch and bsub write them, arrays, constraints and LSF select conditions, output file names, and
how a refusal is matched to the directive it names."""

from __future__ import annotations

from corpus_checks import (
    _names,
    expand_lsf,
    expand_slurm,
    lsf_array,
    lsf_mem,
    lsf_select,
    lsf_time,
    resreq_sections,
    slurm_array,
    slurm_constraint,
    slurm_mem,
    slurm_time,
)
from corpus_directives import Directive


def test_times_as_sbatch_and_bsub_write_them():
    assert [slurm_time(t) for t in ("15", "5:00", "00:30:00", "7-00:00:00", "14-0", "0-01:00:00", "11:0:0")] == [
        900, 300, 1800, 7 * 86400, 14 * 86400, 3600, 11 * 3600]
    assert [lsf_time(t) for t in ("10", "04:00", "2:00", "120:00", "W30"[1:])] == [600, 14400, 7200, 432000, 1800]


def test_memory_as_sbatch_and_bsub_write_it():
    assert slurm_mem("4096") == 4096 << 20 and slurm_mem("100mb") == 100 << 20 and slurm_mem("64G") == 64 << 30
    assert slurm_mem("65536MB") == 64 << 30 and slurm_mem("0") == 0
    assert lsf_mem("1000") == 1000 << 20 and lsf_mem("48GB") == 48 << 30 and lsf_mem("512MB") == 512 << 20
    assert lsf_mem("1000", unit="KB") == 1000 << 10


def test_arrays_of_both_programs():
    assert slurm_array("1-10%10") == (set(range(1, 11)), 10)
    assert slurm_array("0-31") == (set(range(32)), None) and slurm_array("1-7:3,20") == ({1, 4, 7, 20}, None)
    assert lsf_array("array[2,29,71]") == ("array", {2, 29, 71}, None)
    assert lsf_array("calliope[1-9]%2") == ("calliope", set(range(1, 10)), 2)
    assert lsf_array("plain") == ("plain", None, None)


def test_host_conditions():
    assert slurm_constraint("[v100|a100]", {"a100"}) and not slurm_constraint("gpu&v100", {"gpu"})
    assert slurm_constraint("scarf18*2|amd", {"scarf18"})
    assert lsf_select("model == XeonGold6126", "h2", set(), "XeonGold6126", 1000)
    assert not lsf_select("avx512", "h1", {"avx"}, None, 1000)
    assert lsf_select("hname!=c061n01 && hname!=c061n02", "h1", set(), None, 1000)
    assert not lsf_select("mem>1000", "h1", set(), None, 500) and lsf_select("type==any", "h1", set(), None, 1)
    assert resreq_sections('rusage[mem=512MB] span[hosts=1]') == {"rusage": ["mem=512MB"], "span": ["hosts=1"]}
    assert resreq_sections("V100") == {"select": ["V100"]}


def test_output_names():
    rec = {"jobid": 42, "array_id": 40, "array_index": 3, "name": "fit", "placement": [{"host": "n1", "tasks": 1}]}
    assert expand_slurm("%x_%A_%a.%j.%N.%u.%%", rec, "ann") == "fit_40_3.42.n1.ann.%"
    assert expand_slurm("o%3a", rec, "ann") == "o003"
    assert expand_lsf("array_%J_%I.out", rec) == "array_40_3.out"
    single = {"jobid": 7, "array_id": None, "array_index": None, "name": "x", "placement": []}
    assert expand_lsf("%J.out", single) == "7.out" and expand_slurm("slurm-%j.out", single, "u") == "slurm-7.out"


def test_a_refusal_names_its_directive_by_option_or_value_not_by_a_word_inside_another():
    d = Directive("sbatch", 3, "--partition", "batch", "--partition=batch")
    assert not _names("sbatch: error: 1 GPU(s) per host over 6 slots", d)
    assert _names("sbatch: error: invalid partition specified: batch", d)
    assert _names("unknown name \"avx512\" in select[]", Directive("bsub", 1, "-R", "select[avx512]", "-R x"))
    n = Directive("sbatch", 2, "--nodes", "1", "-N 1")
    assert not _names("unrecognized option '--tasks-per-node'", n)
    r = Directive("bsub", 2, "-R", "span[ptile=1]", "-R span[ptile=1]")
    assert _names("-R 'x': bad", r) and not _names("-R 'x': bad", r, repeated=True)
