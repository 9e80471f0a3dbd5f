from pathlib import Path

from xce.sim import swf
from xce.sim.swf import parse_lines, read_swf

DATA = Path(__file__).parent / "data"


def test_hand_trace_fields_and_skips():
    tr = read_swf(DATA / "hand.swf", skip_malformed=True)
    assert tr.job_lines == 11
    assert tr.jobid.tolist() == [1, 2, 3, 4, 5, 6, 8, 9]
    assert tr.skipped == {swf.MALFORMED: 1, swf.NOT_A_NUMBER: 1, swf.NEGATIVE_RUN: 1}
    assert [ln for ln, _ in tr.skipped_examples] == [10, 13, 14]
    i = tr.jobid.index(8)
    assert tr.procs[i] == 2  # field 5 is -1: requested processors (field 8) stand in
    assert tr.machine() == (2, 2)


def test_fields_mapped():
    tr = parse_lines(["7 30 5 600 16 1.5 2048 16 900 4096 1 42 3 11 2 1 -1 -1"])
    assert (tr.submit[0], tr.run[0], tr.procs[0], tr.req_time[0]) == (30, 600, 16, 900)
    assert (tr.used_mem[0], tr.req_mem[0], tr.user[0], tr.executable[0], tr.queue[0], tr.partition[0]) == (
        2048, 4096, 42, 11, 2, 1)


def test_every_skip_has_a_reason():
    lines = ["1 0 -1 10 0 -1 -1 -1 -1 -1 1 1 1 -1 0 -1 -1 -1",   # no processors at all
             "2 -5 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1",   # negative submit
             "3 0 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1",
             "3 1 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1"]   # duplicate number
    tr = parse_lines(lines)
    assert len(tr) + sum(tr.skipped.values()) == tr.job_lines == 4
    assert tr.skipped == {swf.NO_PROCS: 1, swf.NEGATIVE_SUBMIT: 1, swf.DUPLICATE: 1}


def test_sorted_by_submit_stably_and_max_jobs():
    lines = [f"{j} {s} -1 1 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1" for j, s in ((1, 5), (2, 0), (3, 5), (4, 1))]
    assert parse_lines(lines).jobid.tolist() == [2, 4, 1, 3]
    assert parse_lines(lines, max_jobs=2).jobid.tolist() == [2, 1]


def test_allocated_processors_win_over_requested_when_both_are_set():
    """Field 5 (allocated) is what ran; field 8 (requested) only stands in when field 5 is unknown."""
    tr = parse_lines(["1 0 -1 60 16 -1 -1 32 -1 -1 1 1 1 -1 0 -1 -1 -1",
                      "2 0 -1 60 -1 -1 -1 8 -1 -1 1 1 1 -1 0 -1 -1 -1"])
    assert tr.procs.tolist() == [16, 8]
