"""The clients' own repository tests that need a live scheduler, run against a live XCE site
(``make client-suites``; tests/compat/clients/test_client_suites.py runs the fast ones in CI).

Nothing of theirs lives in this repository: dask-jobqueue's tests are copied from the installed
wheel (which lacks the repository's root conftest.py: ours, dask_jobqueue_conftest.py, stands in), and
snakemake-executor-plugin-slurm's ``tests/`` come from its sdist, downloaded with pip at the installed,
pinned version (its wheel ships no tests), and the lsf plugin's, which no package ships, are restated
in snakemake_lsf_tests.py (twelve lines over snakemake's installed test base). Each suite runs in a temporary directory of its own, in a
site of its own (xce_site_plugin.py).

    python tests/compat/clients/suites/run_suites.py [SUITE ...] [-- PYTEST ARGS]

prints one JSON line per suite (passed/failed/skipped counts) and exits 1 if any test failed."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Tests that cannot pass outside their own project's CI machines, and why; not run (--deselect
#: matches these as node-id prefixes, so parametrized variants go too).
DASK_DESELECT = {
    "tests/test_jobqueue_core.py::test_security[":
        "reads key.pem/ca.pem from the repository's tests folder; neither wheel nor sdist ships them",
    "tests/test_jobqueue_core.py::test_security_temporary":
        "needs the cryptography package (in dask-jobqueue's CI environment, not a dependency of theirs)",
    "tests/test_slurm.py::test_different_interfaces_on_scheduler_and_workers":
        "needs the aliased interfaces eth0:scheduler and eth0:worker of their docker CI",
    "tests/test_slurm.py::test_slurm_runner":
        "writes its scheduler file under /shared_space, a mount of their docker CI: rank 0 fails and "
        "the other ranks wait for the file for ever",
    "tests/test_lsf.py::test_basic": "uses LSFCluster.pending_jobs, gone from dask-jobqueue (no LSF CI upstream)",
    "tests/test_lsf.py::test_adaptive": "uses LSFCluster.pending_jobs, gone from dask-jobqueue (no LSF CI upstream)",
}


def _dask_tests(root: Path) -> None:
    import dask_jobqueue

    shutil.copytree(Path(dask_jobqueue.__file__).parent / "tests", root / "tests",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(HERE / "dask_jobqueue_conftest.py", root / "conftest.py")


def _sdist_tests(dist: str, root: Path) -> None:
    version = importlib.metadata.version(dist)
    download = root / "sdist"
    r = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        f"{dist}=={version}", "-d", str(download)], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"pip download {dist}=={version} failed: {r.stderr.strip()}")
    (archive,) = download.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        prefix = tar.getnames()[0].split("/")[0] + "/tests/"
        members = [m for m in tar.getmembers() if m.name.startswith(prefix) and (m.isfile() or m.isdir())]
        for m in members:
            m.name = m.name[len(prefix) - len("tests/"):]
        tar.extractall(root, members=members, filter="data")
    shutil.rmtree(download)


def _lsf_plugin_tests(root: Path) -> None:
    (root / "tests").mkdir()
    shutil.copy(HERE / "snakemake_lsf_tests.py", root / "tests" / "tests.py")


#: name -> (how its tests get into the folder, pytest arguments, deselected node ids)
SUITES = {
    "dask-jobqueue-slurm": (_dask_tests, ["tests", "-E", "slurm"], DASK_DESELECT),
    "dask-jobqueue-lsf": (_dask_tests, ["tests", "-E", "lsf"], DASK_DESELECT),
    "snakemake-executor-plugin-slurm": (lambda root: _sdist_tests("snakemake-executor-plugin-slurm", root),
                                        ["tests/tests.py"], {}),
    "snakemake-executor-plugin-lsf": (_lsf_plugin_tests, ["tests/tests.py"], {}),
}


def run(name: str, extra: list[str] = (), timeout: float = 1800) -> dict:
    """One suite in a fresh folder and site; its counts from pytest's JUnit report."""
    prepare, args, deselect = SUITES[name]
    root = Path(tempfile.mkdtemp(prefix=f"xce-suite-{name}-"))
    try:
        prepare(root)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1",
                   PYTHONPATH=os.pathsep.join([str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
        junit = root / "junit.xml"
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "xce_site_plugin", "-q", "-rfE",
               f"--junitxml={junit}", "--basetemp", str(root / "tmp"), *args, *extra]
        for nodeid in deselect:
            cmd += ["--deselect", nodeid]
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.terminate()  # SIGTERM: the site plugin stops its cluster (a SIGKILL would orphan it)
            output, _ = proc.communicate(timeout=120)
            output += f"\nrun_suites: {name} stopped after {timeout:.0f} s\n"
        counts = {"suite": name, "passed": 0, "failed": 0, "skipped": 0, "deselected": sorted(deselect)}
        if junit.exists():
            s = ET.parse(junit).getroot().find("testsuite")
            total, failed = int(s.get("tests")), int(s.get("failures")) + int(s.get("errors"))
            counts.update(failed=failed, skipped=int(s.get("skipped")),
                          passed=total - failed - int(s.get("skipped")))
        counts["rc"] = proc.returncode
        counts["output_tail"] = output[-6000:]
        return counts
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str]) -> int:
    names, extra = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        print(f"run_suites: unknown suite {unknown[0]!r} (one of: {', '.join(SUITES)})", file=sys.stderr)
        return 2
    worst = 0
    for name in names or list(SUITES):
        res = run(name, extra)
        if res["rc"] not in (0, 5) or res["failed"]:
            print(res.pop("output_tail"), file=sys.stderr)
            worst = 1
        res.pop("output_tail", None)
        print(json.dumps(res), flush=True)
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
