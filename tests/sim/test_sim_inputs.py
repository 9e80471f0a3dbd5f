"""Archive traces as researchers get them, and broken ones: every reader problem is one line and a non-zero exit.

Fixtures are made here in tmp_path (compressed copies of a shipped trace, Alea-style 21-field lines,
headers with bad values); nothing is downloaded.
"""

import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from xce.sim import swf
from xce.sim.swf import SwfError, parse_lines, read_swf

ROOT = Path(__file__).resolve().parents[2]
NASA = ROOT / "examples" / "traces" / "NASA-iPSC-1993-3.1-cln.swf"
LANL = ROOT / "examples" / "traces" / "LANL-CM5-1994-4.1-cln.first155.swf"
GOOD = "1 0 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1\n"


def sim(*args, cwd=ROOT):
    """``xce sim run`` in a real process, as a person runs it."""
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "xce.cli.sim_cmd", "run", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, env=env)


def one_line_error(proc, *expected):
    assert proc.returncode != 0, proc.stdout
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(err.splitlines()) == 1, err
    for text in expected:
        assert text in err, err
    return err


def _results(proc):
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    keep = ("jobs_simulated", "jobs_started", "wait_mean_s", "wait_p95_s", "bounded_slowdown_mean", "utilization",
            "makespan_s", "peak_queue_length", "hosts", "slots")
    return {k: s[k] for k in keep}


@pytest.mark.slow
def test_nasa_defaults_to_its_header_machine_and_reads_compressed_copies(tmp_path):
    """No option: the header's 128 processors; same as --hosts 128 --slots-per-host 1; same gzipped and xz'd."""
    plain = _results(sim("--workload", NASA, "--json"))
    assert plain["hosts"] == 128 and plain["slots"] == 128 and plain["jobs_simulated"] == 18239
    assert _results(sim("--workload", NASA, "--json", "--hosts", "128", "--slots-per-host", "1")) == plain
    gz = tmp_path / "NASA-iPSC-1993-3.1-cln.swf.gz"
    gz.write_bytes(gzip.compress(NASA.read_bytes()))
    assert _results(sim("--workload", gz, "--json")) == plain
    # The format is recognised by its bytes, not its name.
    xz = tmp_path / "nasa.swf"
    xz.write_bytes(lzma.compress(NASA.read_bytes()))
    assert _results(sim("--workload", xz, "--json")) == plain


@pytest.mark.parametrize("compress,suffix", [(gzip.compress, ".gz"), (bz2.compress, ".bz2"), (lzma.compress, ".xz")])
def test_compressed_traces_read_like_the_plain_one(tmp_path, compress, suffix):
    path = tmp_path / f"lanl.swf{suffix}"
    path.write_bytes(compress(LANL.read_bytes()))
    a, b = read_swf(LANL), read_swf(path)
    assert len(b) == len(a) == 155
    assert (b.jobid, b.submit, b.run, b.procs, b.req_mem) == (a.jobid, a.submit, a.run, a.procs, a.req_mem)
    assert b.header == a.header


def test_truncated_or_corrupt_compressed_file(tmp_path):
    data = gzip.compress(LANL.read_bytes())
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(data[: len(data) // 2])
    one_line_error(sim("--workload", cut, "--hosts", "1024"), "cut.swf.gz:", "corrupt or cut short")
    bad = tmp_path / "bad.swf.bz2"
    bad.write_bytes(b"BZh9" + os.urandom(3000))
    one_line_error(sim("--workload", bad, "--hosts", "4"), "bad.swf.bz2:", "corrupt")


def test_alea_extended_lines_keep_the_18_standard_fields(tmp_path):
    """The Alea format (e.g. the wagap trace) appends fields; they are ignored, not a reason to drop the job."""
    lines = ["; MaxNodes: 4", "; MaxProcs: 8"]
    lines += [f"{j} {j * 10} -1 100 2 -1 -1 2 200 -1 1 {j % 3} 1 -1 0 -1 -1 -1 2 0 cluster{j % 2}" for j in range(1, 21)]
    path = tmp_path / "alea.swf"
    path.write_text("\n".join(lines) + "\n")
    tr = read_swf(path)
    assert len(tr) == 20 and tr.malformed == 0 and tr.req_time[0] == 200
    s = json.loads(sim("--workload", path, "--json").stdout)
    assert s["jobs_simulated"] == s["jobs_finished"] == 20 and (s["hosts"], s["slots"]) == (4, 8)


def test_a_compressed_file_read_as_text_no_longer_simulates_zero_jobs(tmp_path):
    """The bug report: hpc2n.swf.gz 'simulated' 0 jobs and exited 0. Random bytes are refused the same way."""
    noise = tmp_path / "noise.swf"
    noise.write_bytes(os.urandom(20000))
    one_line_error(sim("--workload", noise, "--hosts", "4"), "noise.swf:", "malformed", "--skip-malformed")


def test_no_job_at_all(tmp_path):
    empty = tmp_path / "header-only.swf"
    empty.write_text("; MaxNodes: 4\n; MaxProcs: 4\n")
    one_line_error(sim("--workload", empty), "no job line")
    unknown = tmp_path / "unknown.swf"
    unknown.write_text("; MaxNodes: 4\n" + "1 0 -1 -1 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1\n")
    one_line_error(sim("--workload", unknown), "none of the 1 job line(s) can be simulated", "run time < 0")


@pytest.mark.parametrize("bad,expected", [
    ("1 0 -1 1e999 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1", "field 4 (run time) is not a number: '1e999'"),
    ("1 0 -1 nan 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1", "field 4 (run time) is not a number: 'nan'"),
    ("1 0 -1 99999999999 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1", "field 4 (run time) is out of range"),
    ("1 0 -1 10 4294967296 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1", "field 5 (allocated processors) is out of range"),
    ("1 0 -1 10 1 -1 -1 1 -1 -1 1 1 1 -1 0", "15 field(s), an SWF job line has 18"),
    ("1 0 -1 1_0 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1", "field 4 (run time) is not a number: '1_0'"),
    ("1 0 -1 \u0661\u0660 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1", "field 4 (run time) is not a number"),
])
def test_bad_numbers_name_the_line_and_field(tmp_path, bad, expected):
    path = tmp_path / "t.swf"
    path.write_text("; MaxNodes: 4\n" + GOOD * 3 + bad + "\n", encoding="utf-8")
    one_line_error(sim("--workload", path), "t.swf:5:", expected)


def test_skip_malformed_goes_on_and_reports_the_count(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxNodes: 4\n" + GOOD + "garbage here\n" + GOOD.replace("1 0", "2 5", 1))
    proc = sim("--workload", path, "--skip-malformed", "--json")
    assert proc.returncode == 0, proc.stderr
    s = json.loads(proc.stdout)
    assert s["jobs_simulated"] == 2 and s["malformed"] == 1
    assert "1 malformed line(s) skipped, the first at" in proc.stderr and "t.swf:3" in proc.stderr


def test_a_few_malformed_lines_in_a_long_trace_are_tolerated_and_said(tmp_path):
    path = tmp_path / "t.swf"
    good = "".join(GOOD.replace("1 0", f"{j} {j}", 1) for j in range(1, 301))
    path.write_text("; MaxNodes: 4\n" + good + "301 400 -1 10\n")  # a truncated last line
    proc = sim("--workload", path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["malformed"] == 1
    assert "t.swf:302" in proc.stderr and "4 field(s)" in proc.stderr


def test_invalid_utf8_in_a_job_line_is_malformed_in_a_header_harmless(tmp_path):
    path = tmp_path / "t.swf"
    path.write_bytes(b"; Acknowledge: J\xf6rg\n; MaxNodes: 4\n" + GOOD.encode() + b"2 1 -1 1\xff 1 -1 -1 1 -1 -1 1 1 1 -1 0 -1 -1 -1\n")
    one_line_error(sim("--workload", path), "t.swf:4:", "field 4 (run time) is not a number")
    tr = read_swf(path, skip_malformed=True)
    assert len(tr) == 1 and tr.header["Acknowledge"].startswith("J")


@pytest.mark.parametrize("header,expected", [
    ("; MaxNodes: -3", "line 1: header MaxNodes must be a positive integer, got '-3'"),
    ("; MaxNodes: 1e999", "line 1: header MaxNodes must be a positive integer, got '1e999'"),
    ("; MaxProcs: lots", "line 1: header MaxProcs must be a positive integer, got 'lots'"),
])
def test_bad_machine_size_in_the_header(tmp_path, header, expected):
    path = tmp_path / "t.swf"
    path.write_text(header + "\n" + GOOD)
    one_line_error(sim("--workload", path), expected, "--hosts")
    # Given the cluster, the header is not needed: a warning, and the run goes on.
    proc = sim("--workload", path, "--hosts", "2", "--json")
    assert proc.returncode == 0 and expected in proc.stderr and "(ignored)" in proc.stderr


def test_header_fields_parsed():
    tr = read_swf(NASA)
    assert tr.machine() == (128, 1) and tr.unix_start == 749458803 and tr.timezone == "US/Pacific"
    assert tr.queue_names == {0: "interactive", 1: "batch"}
    assert "http" not in tr.header  # a note's continuation line with a colon is not a header field
    tr = parse_lines(["; MaxNodes: 1152", "; MaxProcs: 9216", GOOD])
    assert tr.machine() == (1152, 8)
    tr = parse_lines(["; MaxNodes: 100", "; MaxProcs: 150", GOOD])
    assert tr.machine() == (150, 1)  # not divisible: one processor per host keeps the size


def test_slots_per_host_alone_keeps_the_machine_size(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxNodes: 16\n; MaxProcs: 64\n" + GOOD)
    s = json.loads(sim("--workload", path, "--slots-per-host", "8", "--json").stdout)
    assert (s["hosts"], s["slots"]) == (8, 64)


def test_jobs_larger_than_the_cluster_are_reported_not_dropped(tmp_path):
    path = tmp_path / "t.swf"
    lines = [GOOD.replace("1 0 -1 10 1", f"{j} {j} -1 10 {p}", 1).replace(" 1 -1 -1 1 1 1", f" {p} -1 -1 1 1 1", 1)
             for j, p in ((1, 1), (2, 64), (3, 2), (4, 32))]
    path.write_text("".join(lines))
    proc = sim("--workload", path, "--hosts", "8")
    assert proc.returncode == 0, proc.stderr
    assert "Too large for the cluster: 2 job(s) not simulated, e.g. job 2 (64 processors), job 4 (32 processors)" \
        in proc.stdout
    only_big = tmp_path / "big.swf"
    only_big.write_text(lines[1])
    one_line_error(sim("--workload", only_big, "--hosts", "8"), "fits the simulated cluster", "needs 64 processors")


def test_unreadable_workload(tmp_path):
    one_line_error(sim("--workload", tmp_path / "missing.swf", "--hosts", "2"), "cannot read the workload")
    one_line_error(sim("--workload", tmp_path, "--hosts", "2"), "cannot read the workload")


def test_bad_mem_per_host_is_a_usage_error(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(GOOD)
    for size in ("1e999G", "-4G", "nanG", "lots"):
        one_line_error(sim("--workload", path, "--hosts", "1", "--mem-per-host", size), "--mem-per-host", 'for "mem": expected')


# -- fuzz ---------------------------------------------------------------------------------------

_TOKENS = st.sampled_from(["-1", "0", "1", "7", "128", "3600", "1.5", "489.00", "1e999", "nan", "-", "abc", "_", ";",
                           "99999999999999999999", "-5", "\x00", "\u0661", "Infinity"])
_LINE = st.one_of(
    st.lists(_TOKENS, min_size=0, max_size=24).map(" ".join),
    st.text(max_size=80),
    st.sampled_from(["; MaxNodes: -3", "; MaxProcs: 0", "; UnixStartTime: x", "; Queue: 1 batch", "; Note: a: b",
                     GOOD.strip()]),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINE, max_size=40), st.booleans())
def test_fuzz_swf_reader_either_reads_or_says_where(lines, skip):
    """Any text: a trace whose every job line is accounted for, or an SwfError naming the file."""
    try:
        tr = parse_lines(lines, "fuzz.swf", skip_malformed=skip)
    except SwfError as exc:
        assert str(exc).startswith("fuzz.swf") and "\n" not in str(exc)
        return
    assert len(tr) + sum(tr.skipped.values()) == tr.job_lines
    assert len(tr) > 0
    assert all(p > 0 for p in tr.procs) and all(r >= 0 for r in tr.run)
    assert all(0 <= r <= swf.MAX_SECONDS for r in tr.run) and list(tr.submit) == sorted(tr.submit)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=3000))
def test_fuzz_swf_bytes(tmp_path, data):
    path = tmp_path / "b.swf"
    path.write_bytes(data)
    try:
        read_swf(path)
    except SwfError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))
