"""The plugin guide's worked example (``examples/sjf_picker``) is real, installable code.

(a) ``pip install --target`` it into a temporary directory (the venv is never touched), load it
    through the ``xce.pickers`` entry point exactly as XCE does, and run harness scenarios.
(b) Run ``xce sim run`` on a shipped trace with ``--picker sjf`` and with ``builtin_fcfs`` in
    subprocesses that see the installed plugin, and check the shortest-first property on the
    per-job output.
"""

from __future__ import annotations

import csv
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from xce.core.pickers import registry
from xce.testing import Harness, make_host, make_job, queue

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "sjf_picker"
TRACES = REPO / "examples" / "traces"
TRACE = TRACES / "LANL-CM5-1994-4.1-cln.first155.swf"


def _pip_install(target: Path, workdir: Path) -> None:
    # Build from a copy so that setuptools' build/ and *.egg-info never land in the checkout.
    src = workdir / "sjf_picker_src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    base = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
            "--target", str(target)]
    attempts = [base + [str(src)], base + ["--no-build-isolation", str(src)]]
    outputs = []
    for cmd in attempts:  # the second works offline where setuptools and wheel are installed
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
        if proc.returncode == 0:
            return
        outputs.append(f"$ {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")
    pytest.fail("could not pip install examples/sjf_picker:\n" + "\n".join(outputs))


@pytest.fixture(scope="module")
def sjf_target(tmp_path_factory: pytest.TempPathFactory):
    """The example installed with pip into a temporary directory, put on sys.path and registered."""
    work = tmp_path_factory.mktemp("sjf")
    target = work / "site"
    _pip_install(target, work)
    assert (target / "sjf_picker" / "__init__.py").is_file()
    entry_points = list(target.glob("*.dist-info/entry_points.txt"))
    assert entry_points and 'sjf = sjf_picker:ShortestJobFirst' in entry_points[0].read_text()
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    try:
        from xce.plugins import load_entry_points

        errors = load_entry_points()
        assert not [e for e in errors if "sjf" in e], errors
        assert "sjf" in registry.available()
        yield target
    finally:
        registry.unregister("sjf")
        sys.path.remove(str(target))
        for name in [m for m in sys.modules if m == "sjf_picker" or m.startswith("sjf_picker.")]:
            del sys.modules[name]
        importlib.invalidate_caches()


def _waiting_scenario(picker: str) -> tuple[list[tuple], list[tuple]]:
    """A full host, then four jobs queued one after another; the blocker ends."""
    h = Harness(queues=[queue("normal")], picker=picker)
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1).tasks(4))
    assert h.round() == [("DISPATCH", 1, (("h1", 4),))]
    # Queued in this order, one submission each, so queue times increase with the job id.
    h.submit(make_job(2).tasks(4).priority(100))  # priority is ignored by sjf
    h.submit(make_job(3).tasks(2))
    h.submit(make_job(4).tasks(1))
    h.submit(make_job(5).tasks(1))
    waiting = h.round()
    h.state(1, "DONE")
    return waiting, h.round()


def test_sjf_orders_shortest_first(sjf_target: Path) -> None:
    waiting, after = _waiting_scenario("sjf")
    # Every job is offered once, fewest tasks first, then queue time, then job id.
    assert [d[1] for d in waiting] == [4, 5, 3, 2]
    assert all(d[0] == "PEND" for d in waiting)
    # Job 2 still waits for the same reason, so no new PEND is emitted for it.
    assert after == [("DISPATCH", 4, (("h1", 1),)), ("DISPATCH", 5, (("h1", 1),)),
                     ("DISPATCH", 3, (("h1", 2),))]


def test_builtin_fcfs_differs_on_the_same_scenario() -> None:
    waiting, after = _waiting_scenario("builtin_fcfs")
    assert [d[1] for d in waiting] == [2, 3, 4, 5]
    assert after[0] == ("DISPATCH", 2, (("h1", 4),))


def test_sjf_keeps_queue_priority(sjf_target: Path) -> None:
    h = Harness(queues=[queue("high", 10), queue("low", 0)], picker="sjf")
    h.hosts(make_host("h1").slots(4))
    h.submit(make_job(1).queue("low").tasks(1), make_job(2).queue("high").tasks(4), make_job(3).queue("low").tasks(2))
    assert h.round() == [("DISPATCH", 2, (("h1", 4),)), ("PEND", 1, ("slots",)), ("PEND", 3, ("slots",))]


def test_sjf_as_a_per_queue_override(sjf_target: Path) -> None:
    """``job_pick_plugin = "sjf"`` on one queue: builtin_fcfs delegates that queue's order to it."""
    h = Harness(queues=[queue("short", 0, job_pick_plugin="sjf")])
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1).queue("short").tasks(3))
    h.submit(make_job(2).queue("short").tasks(1))
    assert h.round() == [("DISPATCH", 2, (("h1", 1),)), ("PEND", 1, ("slots",))]


def test_sjf_drops_killed_and_moved_jobs(sjf_target: Path) -> None:
    h = Harness(queues=[queue("normal")], picker="sjf")
    h.hosts(make_host("h1").slots(1))
    h.submit(make_job(1).tasks(1), make_job(2).tasks(1))
    h.state(1, "EXIT")
    assert h.round() == [("DISPATCH", 2, (("h1", 1),))]
    h.submit(make_job(3).tasks(1))
    h.update(3, queue="nowhere")  # an undefined queue never dispatches (and says so, once)
    assert h.round() == [("PEND", 3, ("queue",))]


# -- (b) the same picker inside the closed-loop simulator --------------------------------------

SIM_RUN = [sys.executable, "-m", "xce.cli.main", "sim", "run"]


def _run_sim(picker: str, out_dir: Path, plugin_dir: Path) -> dict[int, tuple]:
    """Per-job results of ``xce sim run --picker PICKER`` with the example installed in ``plugin_dir``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(plugin_dir), env.get("PYTHONPATH", "")) if p)
    opts = ["--workload", str(TRACE), "--hosts", "16", "--slots-per-host", "32", "--picker", picker,
            "--out", str(out_dir), "--json"]
    proc = subprocess.run(SIM_RUN + opts, capture_output=True, text=True, env=env, cwd=REPO, timeout=240)
    assert proc.returncode == 0, f"{' '.join(SIM_RUN + opts)}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    with (out_dir / "jobs.csv").open(newline="") as fp:
        return {int(r["jobid"]): (int(r["submit"]), int(r["start"]) if r["start"] else None)
                for r in csv.DictReader(fp)}


def _inversions(jobs: dict[int, tuple], submit: dict[int, int], tasks: dict[int, int]) -> list[tuple[int, int]]:
    """Pairs (a, b) where a started while b was waiting (submitted, not started) with fewer tasks.

    On a cluster of identical hosts and slots only, a job that fits whenever a bigger one fits,
    so shortest-first never produces such a pair."""
    started = {j: s for j, (_, s) in jobs.items() if s is not None and j in tasks}
    out = []
    for a, sa in started.items():
        for b, sb in started.items():
            if sa < sb and submit[b] <= sa and tasks[b] < tasks[a]:
                out.append((a, b))
    return out


def test_sim_sjf_starts_waiting_jobs_shortest_first(sjf_target: Path, tmp_path: Path) -> None:
    assert TRACE.is_file(), f"trace not found: {TRACE} (the shared/ directory beside the checkout)"
    from xce.sim import read_swf

    trace = read_swf(TRACE)
    tasks = dict(zip(trace.jobid, trace.procs))
    trace_submit = dict(zip(trace.jobid, trace.submit))

    sjf = _run_sim("sjf", tmp_path / "sjf", sjf_target)
    fcfs = _run_sim("builtin_fcfs", tmp_path / "fcfs", sjf_target)
    assert set(sjf) == set(trace.jobid) == set(fcfs)

    def submits(jobs: dict[int, tuple]) -> dict[int, int]:
        # Prefer the run's own submit column (same clock as its start column) over the trace's.
        return {j: (s if s is not None else trace_submit[j]) for j, (s, _) in jobs.items()}

    sjf_submit = submits(sjf)
    waited = [j for j, (_, s) in sjf.items() if s is not None and s > sjf_submit[j]]
    assert len(waited) > 20, "the scenario must make jobs wait, or it proves nothing"
    assert _inversions(sjf, sjf_submit, tasks) == []
    assert _inversions(fcfs, submits(fcfs), tasks), "builtin_fcfs should start some bigger job first"
    assert {j: s for j, (_, s) in sjf.items()} != {j: s for j, (_, s) in fcfs.items()}


# -- the guide shows exactly the shipped code, and its harness example runs ---------------------

GUIDE = REPO / "docs" / "plugin-guide.md"


def _python_blocks(text: str) -> list[str]:
    blocks, inside, current = [], False, []
    for line in text.splitlines(keepends=True):
        if not inside and line.startswith("```python"):
            inside, current = True, []
        elif inside and line.startswith("```"):
            inside = False
            blocks.append("".join(current))
        elif inside:
            current.append(line)
    return blocks


def test_guide_shows_the_shipped_picker() -> None:
    blocks = _python_blocks(GUIDE.read_text())
    header = "# examples/sjf_picker/sjf_picker/__init__.py\n"
    shown = [b for b in blocks if b.startswith(header)]
    assert len(shown) == 1
    assert shown[0][len(header):] == (EXAMPLE / "sjf_picker" / "__init__.py").read_text()


def test_guide_harness_example_runs(sjf_target: Path) -> None:
    blocks = [b for b in _python_blocks(GUIDE.read_text()) if "Harness(" in b and "picker=\"sjf\"" in b]
    assert blocks
    for block in blocks:
        exec(compile(block, str(GUIDE), "exec"), {})
