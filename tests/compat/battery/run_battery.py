"""The tool battery (``make tool-battery``): workflow tools beyond the three of the test suite, each at
a pinned version, each running a small real workflow of its own (submit, poll to the end, read the
result back, cancel where the tool can) against a live XCE site through the Slurm and LSF front-ends.

Not part of ``make test``: each tool gets a virtual environment of its own outside the checkout (tools
pin conflicting versions of the same libraries), built from ``requirements/TOOL.txt`` and kept under
``$XCE_BATTERY_DIR`` (default: the system's temporary directory) for the next run, and each tool/
scheduler pair gets a fresh site (tests/compat/clients/clients_site.py), so one tool's leftovers never
meet another's.

    python tests/compat/battery/run_battery.py [TOOL[:SCHEDULER] ...]

prints one JSON line per tool and scheduler: ``"unchanged": true`` when the tool ran its workflow with
no change of its own, else the step that failed and why (the tool's output and the site's logs go to
standard error). A failure of the tool's own (:data:`TOOL_BUGS`) says so; exit 1 if any other pair failed."""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "clients"))

from clients_site import Site  # noqa: E402

#: tool -> the schedulers it has adapters for (its workflow script takes the name as its argument).
TOOLS = {
    "parsl": ("slurm", "lsf"),
    "psij-python": ("slurm", "lsf"),
    "myqueue": ("slurm", "lsf"),
    "dpdispatcher": ("slurm", "lsf"),
    "pysqa": ("slurm", "lsf"),
    "maestrowf": ("slurm", "lsf"),
    "simple-slurm": ("slurm",),
    "ipyparallel": ("slurm", "lsf"),
    "toil": ("slurm", "lsf"),
}

#: Failures of the tool's own making, that a real LSF or Slurm would meet the same way, and why we know:
#: reported (``"tool_bug"``) but not counted as XCE's.
TOOL_BUGS = {
    ("psij-python", "lsf"): "psij 0.9.11's LsfJobExecutor.parse_status_output reads entry['reason'], a key bjobs "
                            "never prints, whenever EXIT_REASON, KILL_REASON or SUSPEND_REASON is set: a job killed "
                            "with bkill (EXIT_REASON 'TERM_OWNER: ...', which Maestro's LSF adapter matches on real "
                            "LSF) makes every later poll raise KeyError, so the cancelled job never ends for it",
    ("ipyparallel", "lsf"): "ipyparallel 9.2.0's LSFLauncher.start runs 'bsub <' with os.environ instead of the "
                            "launcher's environment (get_env(), which the Slurm launcher uses), so the engines never "
                            "get IPP_CLUSTER_ID, look for the default connection file and exit after 10 s: bsub "
                            "passes the submitter's environment on real LSF too",
    ("toil", "lsf"): "toil 9.6.0's LSFBatchSystem.GridEngineThread.prepareSubmission takes one argument fewer "
                     "than its base class passes (TypeError before any bsub is run)",
}

#: The model of the site's hosts (``lshosts``).
HOST_MODEL = "XeonE5"

#: A workflow longer than this is a hang (a tool polling for a job that never ends for it).
TIMEOUT = 300


def venv(tool: str) -> Path:
    """The tool's environment, built once per version of its requirements file."""
    req = HERE / "requirements" / f"{tool}.txt"
    digest = hashlib.sha256(req.read_bytes()).hexdigest()[:12]
    root = Path(os.environ.get("XCE_BATTERY_DIR") or Path(tempfile.gettempdir()) / "xce-tool-battery")
    env_dir = root / f"{tool}-{digest}"
    stamp = env_dir / ".installed"
    if not stamp.exists():
        shutil.rmtree(env_dir, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True)
        r = subprocess.run([str(env_dir / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
                            "-r", str(req)], capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            raise RuntimeError(f"pip install -r {req.name} failed: {r.stderr.strip()[-2000:]}")
        stamp.touch()
    return env_dir


def versions(tool: str) -> str:
    """The pins, as the requirements file states them."""
    req = HERE / "requirements" / f"{tool}.txt"
    return " ".join(line.split("#")[0].strip() for line in req.read_text().splitlines()
                    if line.split("#")[0].strip())


def run(tool: str, scheduler: str) -> dict:
    res: dict = {"tool": tool, "scheduler": scheduler}
    try:
        env_dir = venv(tool)
    except (RuntimeError, subprocess.SubprocessError) as e:
        return {**res, "unchanged": False, "why": f"not installed: {e}"}
    res["versions"] = versions(tool)
    base = Path(tempfile.mkdtemp(prefix=f"xce-battery-{tool}-{scheduler}-"))
    site = Site(base, workers=2, slots=4)
    # Every LSF host has a model (lshosts; LIM detects one), which tools select by (myqueue's
    # ``select[model == NODENAME]``): here an administrator's ``[hosts.NAME] model``.
    (base / "xce.toml").write_text("".join(f'[hosts."{n}"]\nmodel = "{HOST_MODEL}"\n'
                                           for n in site.cluster.worker_names))
    site.cluster.config = base / "xce.toml"
    t0 = time.monotonic()
    try:
        site.start()
        env = dict(site.env, PATH=os.pathsep.join([str(env_dir / "bin"), site.env["PATH"]]),
                   PYTHONDONTWRITEBYTECODE="1", HOME=str(base / "home"))
        env.pop("PYTHONPATH", None)
        # What a login shell sets and tools read (maestro's ``squeue -u $USER``, myqueue's ``squeue --user``);
        # a service or CI environment may lack it.
        env.setdefault("USER", pwd.getpwuid(os.getuid()).pw_name)
        env.setdefault("LOGNAME", env["USER"])
        (base / "home").mkdir()
        script = HERE / "workflows" / f"wf_{tool.replace('-', '_')}.py"
        proc = subprocess.Popen([str(env_dir / "bin" / "python"), str(script), scheduler], cwd=site.work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            output, _ = proc.communicate()
            output += f"\nrun_battery: stopped after {TIMEOUT} s\n"
        verdict = _verdict(output)
        res.update(unchanged=proc.returncode == 0 and verdict.get("ok", False), rc=proc.returncode,
                   steps=verdict.get("steps", {}), why=verdict.get("why", ""))
        if not res["unchanged"]:
            if (tool, scheduler) in TOOL_BUGS:
                res["tool_bug"] = TOOL_BUGS[tool, scheduler]
            res["output_tail"] = output[-4000:]
            res["site_logs"] = site.logs()[-3000:]
    finally:
        res["seconds"] = round(time.monotonic() - t0, 1)
        site.stop()
        shutil.rmtree(base, ignore_errors=True)
    return res


def _verdict(output: str) -> dict:
    """A workflow script's last line: ``{"ok": bool, "steps": {...}, "why": "..."}``."""
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    return {"ok": False, "why": "the workflow printed no verdict"}


def main(argv: list[str]) -> int:
    pairs = []
    for arg in argv or list(TOOLS):
        tool, _, sched = arg.partition(":")
        if tool not in TOOLS or (sched and sched not in TOOLS[tool]):
            print(f"run_battery: unknown tool or scheduler {arg!r} (tools: {', '.join(TOOLS)})", file=sys.stderr)
            return 2
        pairs += [(tool, s) for s in ([sched] if sched else TOOLS[tool])]
    worst = 0
    for tool, sched in pairs:
        res = run(tool, sched)
        if not res["unchanged"]:
            print(res.pop("output_tail", ""), res.pop("site_logs", ""), sep="\n", file=sys.stderr)
            worst = worst or "tool_bug" not in res
        print(json.dumps(res), flush=True)
    return int(worst)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
