"""The compact ``hosts`` column of jobs.csv: Slurm-style host ranges that expand to the full list."""

from __future__ import annotations

import csv
import random
from pathlib import Path

import pytest

from xce.cli.main import XCE
from xce.sim.hostlist import CompactWriter, compress, expand, expand_hostlist
from xce.testing.cli import invoke

ROOT = Path(__file__).resolve().parents[2]
LUBLIN = ROOT / "examples" / "traces" / "lublin_256.swf"
DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize("pairs,text", [
    ([("h001", 1), ("h002", 1), ("h003", 1), ("h004", 1), ("h007", 1)], "h[001-004,007]:1"),
    ([("h001", 4), ("h002", 4), ("h003", 2)], "h[001-002]:4 h003:2"),
    ([("h9", 1), ("h10", 1), ("h11", 1)], "h[9-11]:1"),            # unpadded numbers cross a power of ten
    ([("h099", 1), ("h100", 1)], "h[099-100]:1"),
    ([("gpu07", 2), ("cpu07", 2), ("login", 1)], "gpu07:2 cpu07:2 login:1"),
    ([("h005", 1), ("h001", 1)], "h[005,001]:1"),                  # placement order is kept, not sorted
])
def test_compress_writes_slurm_ranges_and_expand_reads_them_back(pairs, text):
    assert compress(pairs) == text
    assert expand(text) == pairs


def test_the_full_list_is_the_same_grammar():
    assert expand("h001:2 h002:2") == [("h001", 2), ("h002", 2)]
    assert expand_hostlist("a[01-03,7],b2") == ["a01", "a02", "a03", "a7", "b2"]


@pytest.mark.parametrize("bad", ["h001", "h[001-003:1", "h[3-1]:1", "h[a-b]:1", "h001:x"])
def test_expand_refuses_what_is_not_a_host_list(bad):
    with pytest.raises(ValueError):
        expand(bad)


def test_the_run_based_writer_agrees_with_compress_on_random_placements():
    names = [f"n{i:04d}" for i in range(1, 1001)] + [f"x{i}" for i in range(5, 15)] + ["login"]
    writer = CompactWriter(names)
    rng = random.Random(39)
    for _ in range(300):
        runs, h = [], rng.randrange(0, 50)
        while h < len(names) and len(runs) < 6:
            count = rng.randint(1, min(200, len(names) - h))
            runs.append((h, count, rng.choice((1, 1, 2, 4))))
            h += count + rng.choice((0, 0, 1, 7))
        pairs = [(names[k], t) for first, count, t in runs for k in range(first, first + count)]
        text = writer.text(runs)
        assert text == compress(pairs)
        assert expand(text) == pairs


def test_jobs_csv_compact_by_default_and_full_on_request(tmp_path):
    """The same run written both ways: every job's expanded compact hosts equal its full list."""
    args = ["sim", "run", "--workload", str(LUBLIN), "--max-jobs", "400", "--json"]
    assert invoke(XCE, [*args, "--out", str(tmp_path / "c")]).exit_code == 0
    assert invoke(XCE, [*args, "--out", str(tmp_path / "f"), "--full-placement"]).exit_code == 0
    compact = list(csv.DictReader((tmp_path / "c" / "jobs.csv").open()))
    full = list(csv.DictReader((tmp_path / "f" / "jobs.csv").open()))
    assert len(compact) == len(full) == 400
    wide = 0
    for c, f in zip(compact, full):
        assert {k: v for k, v in c.items() if k != "hosts"} == {k: v for k, v in f.items() if k != "hosts"}
        assert expand(c["hosts"]) == expand(f["hosts"])
        assert sum(t for _, t in expand(c["hosts"])) == int(c["tasks"])
        wide += int(c["tasks"]) >= 32
    assert wide > 0
    assert (tmp_path / "c" / "jobs.csv").stat().st_size < (tmp_path / "f" / "jobs.csv").stat().st_size / 2
    widest = max(range(len(full)), key=lambda k: int(full[k]["tasks"]))
    assert len(compact[widest]["hosts"]) * 10 < len(full[widest]["hosts"])
