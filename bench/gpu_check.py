"""Device check, by hand, on a machine with an NVIDIA GPU: is a job's GPU use measured, and does
``xce drift`` judge it?

    .venv/bin/python -m bench.gpu_check            # about a minute on one GPU, less on two
    .venv/bin/python -m bench.gpu_check --seconds 10

It starts a small local cluster (controller, scheduler, one worker, in a temporary directory) and
runs two jobs that each declare ``xce.io/gpu=1``:

* ``gpu-busy`` keeps its GPU busy for ``--seconds``: a one-thread spin kernel written in PTX,
  loaded and launched through the CUDA driver with ``ctypes`` (no CUDA toolkit, no Python package);
* ``gpu-idle`` holds its GPU for as long and only sleeps.

It prints one JSON object: NVML's view of the host, each job's state, devices and GPU usage ticks
(``gpu_util_milli``: the sum over its devices of NVML's utilisation x 10), the ``xce.io/gpu``
drift rows and whatever ``xce drift`` lists as unmeasured, then ``ok`` and the ``failed``
expectations: the busy job averages at least half a GPU (ratio 1, verdict "ok"), the idle one less
than a tenth (0 of 1, "far-below"). Exit status 0 when all hold, 1 when one does not, 2 when
there is no usable GPU here. On MIG instances NVML reports no utilisation: both jobs then land in
"unmeasured", which is what the check reports (and fails).

Not a timed test and not one of ``python -m bench``'s suites: it needs the hardware, and its
figures depend on the driver.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: The busy job: CUDA driver API through ctypes, a PTX kernel that counts to N and stores the count
#: (so the loop cannot be optimised away), launched back to back until the time is up. It prints
#: what it did, or why it could not, as one JSON line.
BUSY_JOB = r'''
import ctypes, ctypes.util, json, sys, time
PTX = b"""
.version 7.0
.target sm_70
.address_size 64
.visible .entry spin(.param .u64 dst, .param .u64 count)
{
    .reg .u64 %rd<5>;
    .reg .pred %p;
    ld.param.u64 %rd1, [dst];
    ld.param.u64 %rd2, [count];
    mov.u64 %rd3, 0;
LOOP:
    add.u64 %rd3, %rd3, 1;
    setp.lt.u64 %p, %rd3, %rd2;
    @%p bra LOOP;
    cvta.to.global.u64 %rd4, %rd1;
    st.global.u64 [%rd4], %rd3;
    ret;
}
"""
seconds = float(sys.argv[1])
try:
    cu = ctypes.CDLL(ctypes.util.find_library("cuda") or "libcuda.so.1")
    P, U, V = ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.c_void_p
    cu.cuDevicePrimaryCtxRetain.argtypes = [P, ctypes.c_int]
    cu.cuCtxSetCurrent.argtypes = [V]
    cu.cuModuleLoadData.argtypes = [P, ctypes.c_char_p]
    cu.cuModuleGetFunction.argtypes = [P, V, ctypes.c_char_p]
    cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    cu.cuLaunchKernel.argtypes = [V, U, U, U, U, U, U, U, V, P, P]
    def check(name, rc):
        if rc != 0:
            raise RuntimeError(f"{name} returned CUDA error {rc}")
    dev, ctx, mod, fn = ctypes.c_int(), V(), V(), V()
    out, n = ctypes.c_uint64(), ctypes.c_uint64(20_000_000)
    check("cuInit", cu.cuInit(0))
    check("cuDeviceGet", cu.cuDeviceGet(ctypes.byref(dev), 0))
    check("cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    check("cuCtxSetCurrent", cu.cuCtxSetCurrent(ctx))
    check("cuModuleLoadData", cu.cuModuleLoadData(ctypes.byref(mod), PTX))
    check("cuModuleGetFunction", cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"spin"))
    check("cuMemAlloc", cu.cuMemAlloc_v2(ctypes.byref(out), 8))
    args = (V * 2)(ctypes.cast(ctypes.byref(out), V), ctypes.cast(ctypes.byref(n), V))
    launches, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        check("cuLaunchKernel", cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, args, None))
        check("cuCtxSynchronize", cu.cuCtxSynchronize())
        launches += 1
    print(json.dumps({"load": "ran", "launches": launches, "seconds": seconds}))
except Exception as exc:
    print(json.dumps({"load": "failed", "error": str(exc)}))
    sys.exit(1)
'''


def nvml_view() -> dict[str, Any] | None:
    """What NVML says about this host, or None when there is no usable NVIDIA GPU."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    try:
        count = pynvml.nvmlDeviceGetCount()
        devices = []
        for i in range(count):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(h)
            try:
                util: Any = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
            except pynvml.NVMLError as exc:
                util = f"not readable: {exc}"
            try:
                mig: Any = pynvml.nvmlDeviceGetMigMode(h)[0]
            except pynvml.NVMLError:
                mig = None
            devices.append({"index": i, "name": name.decode() if isinstance(name, bytes) else name,
                            "utilization_now": util, "mig_mode": mig})
        driver = pynvml.nvmlSystemGetDriverVersion()
        return {"driver": driver.decode() if isinstance(driver, bytes) else driver, "devices": devices}
    finally:
        pynvml.nvmlShutdown()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.gpu_check", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="how long each job holds its GPU (default 20)")
    args = ap.parse_args(argv)
    nvml = nvml_view()
    if not nvml or not nvml["devices"]:
        print(json.dumps({"ok": False, "nvml": nvml, "why": "no NVIDIA GPU that NVML can see here"}))
        return 2

    from xce.cluster.local import LocalCluster

    with tempfile.TemporaryDirectory(prefix="xce-gpu-check-") as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "busy.py").write_text(BUSY_JOB)
        cluster = LocalCluster(Path(tmp) / "state", workers=1, slots=2, report_interval=1.0)
        cluster.start()
        try:
            def xce(*a: str) -> Any:
                r = subprocess.run([sys.executable, "-m", "xce.cli.main", *a], env=cluster.env(), cwd=work,
                                   capture_output=True, text=True, timeout=120, check=True)
                return json.loads(r.stdout)

            # The job's environment is minimal; a driver library found through LD_LIBRARY_PATH here must be there too.
            lib = os.environ.get("LD_LIBRARY_PATH")
            env = ["--env", f"LD_LIBRARY_PATH={lib}"] if lib else []
            jobs = {
                "gpu-busy": xce("submit", "--json", "--type", "gpu-busy", "--request", "xce.io/gpu=1", "-o", "busy.out",
                                *env, "--", sys.executable, "busy.py", str(args.seconds))["jobid"],
                "gpu-idle": xce("submit", "--json", "--type", "gpu-idle", "--request", "xce.io/gpu=1", "-o", "idle.out",
                                "--", "sleep", str(args.seconds))["jobid"],
            }
            deadline = time.monotonic() + 3 * args.seconds + 120  # one GPU: the jobs run one after the other
            ended: dict[str, dict[str, Any]] = {}
            while len(ended) < len(jobs) and time.monotonic() < deadline:
                for name, jobid in jobs.items():
                    job = xce("jobs", "-l", "--json", str(jobid))["jobs"][0]
                    if job["state"] in ("DONE", "EXIT"):
                        ended[name] = job
                time.sleep(1.0)
            drift = xce("drift", "--json", "--min-samples", "1")
        finally:
            cluster.stop()
        out = (work / "busy.out").read_text()[-2000:] if (work / "busy.out").exists() else None
    report: dict[str, Any] = {"nvml": nvml, "jobs": {}, "busy_job_output": out}
    for name, jobid in jobs.items():
        job = ended.get(name, {})
        usage = job.get("usage") or {}
        report["jobs"][name] = {
            "jobid": jobid, "state": job.get("state", "did not end in time"), "exit_code": job.get("exit_code"),
            "gpu_util_milli": {k: usage.get(k, {}).get("gpu_util_milli") for k in ("peak", "mean", "count")},
            "ticks": usage.get("samples"),
        }
    report["drift"] = [r for r in drift["rows"] if r["resource"] == "xce.io/gpu"]
    report["unmeasured"] = drift["unmeasured"]
    rows = {r["job_type"]: r for r in report["drift"]}
    busy, idle = rows.get("gpu-busy"), rows.get("gpu-idle")
    idle_mean = report["jobs"]["gpu-idle"]["gpu_util_milli"]["mean"]
    expectations = {
        "both jobs ended DONE": all(j["state"] == "DONE" for j in report["jobs"].values()),
        "the busy job averaged at least half a GPU (ratio 1, ok)": bool(busy) and busy["ratio"] == 1.0
        and busy["verdict"] == "ok",
        "the idle job averaged under a tenth of a GPU": idle_mean is not None and idle_mean < 100,
        "the idle job is far below its declaration (0 of 1)": bool(idle) and idle["measured_median"] == 0
        and idle["verdict"] == "far-below",
        "nothing unmeasured": not report["unmeasured"],
    }
    report["failed"] = [what for what, held in expectations.items() if not held]
    report["ok"] = not report["failed"]
    print(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
