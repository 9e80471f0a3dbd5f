"""`xce config check` and the simulator's cluster files on hostile input: one line per problem, exit 1, no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from xce.config.loader import ConfigError, parse_config
from xce.sim.cluster_file import load_cluster_file, parse_cluster_text

ROOT = Path(__file__).resolve().parents[2]


def check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xce.cli.main", "config", "check", "--no-plugins", str(path)],
                          capture_output=True, text=True, cwd=ROOT)


def refused(proc: subprocess.CompletedProcess, *expected: str) -> str:
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[1].endswith("1 error"), proc.stderr  # the problem, then the count
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("body,expected", [
    ("a = " + "[" * 100_000, "nested 100000 levels deep at line 1"),
    ("x = " + "{ a = " * 50_000, "nested 50000 levels deep"),
    ("[queues.normal]\npriority = 99999999999999999999999\n", ":2: queues.normal.priority: integer 9999"),
    ("[queues.normal]\nmax_running = 1e999\n", ":2: queues.normal.max_running: expected an integer, got float inf"),
    ("[queues.normal]\npriority = 3\nmax_running = ", "TOML syntax error at line 3"),
])
def test_hostile_toml(tmp_path, body, expected):
    path = tmp_path / "xce.toml"
    path.write_text(body)
    refused(check(path), expected)


def test_random_bytes_and_invalid_utf8(tmp_path):
    path = tmp_path / "noise.toml"
    path.write_bytes(b"[queues.normal]\npriority = 1\n# caf\xe9\n")
    refused(check(path), "not UTF-8 text at line 3")
    path.write_bytes(b"\x80" + os.urandom(3000))
    refused(check(path), "not UTF-8 text at line 1")


def test_cluster_files_too(tmp_path):
    path = tmp_path / "cluster.toml"
    path.write_bytes(b'[[sim.hosts]]\nname = "caf\xe9"\n')
    with pytest.raises(ConfigError, match="not UTF-8 text at line 2"):
        load_cluster_file(path)
    with pytest.raises(ConfigError, match="nested 5000 levels deep"):
        parse_cluster_text("x = " + "[" * 5000)
    with pytest.raises(ConfigError, match=r"sim.hosts\[0\]: expected either .* count <= 1000000"):
        parse_cluster_text('[[sim.hosts]]\nprefix = "n"\ncount = 10000000000\n')
    with pytest.raises(ConfigError, match=r'sim.hosts\[0\].mem: quantity "1e999G" for "mem": expected a number' ):
        parse_cluster_text('[[sim.hosts]]\nname = "a"\nmem = "1e999G"\n')


_KEYS = st.sampled_from(["default_queue", "queues", "priority", "max_running", "scheduler", "job_pick_plugin",
                         "hosts", "projects", "sim", "shared_resources", "x"])
_VALUES = st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.floats(), st.text(max_size=10),
                    st.booleans(), st.sampled_from(["[", "{", "]", "}", "\"", "'''", "=", "[[", "inf", "nan"]))
_LINE = st.one_of(
    st.builds(lambda k, v: f"{k} = {v!r}".replace("'", '"'), _KEYS, _VALUES),
    st.builds(lambda k: f"[{k}]", st.sampled_from(["queues.normal", "scheduler", "queues", "projects.p", "sim"])),
    st.text(max_size=30),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_LINE, max_size=15))
def test_fuzz_loader_raises_only_config_errors(lines):
    text = "\n".join(lines)
    for parse in (lambda: parse_config(text, "fuzz.toml", check_plugins=False),
                  lambda: parse_cluster_text(text, "fuzz.toml")):
        try:
            parse()
        except ConfigError as exc:
            assert exc.issues and all(line.startswith("fuzz.toml") for line in str(exc).splitlines())
