"""Screenshots of every dashboard page, for the documentation (``make screenshots``).

Starts a small personal cluster on 127.0.0.1 (what ``xce up`` starts: three workers of two slots),
gives it a little of everything (finished jobs of its owner and of the admin, a job that fails, a job that keeps a core and some memory busy for the
usage chart, a job that cannot fit and waits with its reason, a burst of short jobs for the drift
report), logs in with a real headless Chromium and saves one PNG per page, reduced to 256 colours
so that they stay small in the repository.

    python -m bench.ui_screenshots [OUTDIR]     # default: docs/screenshots
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import httpx

#: ``admins = []``: the owner is a plain user, so the last screenshot shows what a user sees.
CONFIG = """\
cluster_name = "demo"
default_queue = "normal"
admins = []
[queues.normal]
priority = 30
description = "The default queue"
[queues.high]
priority = 50
preemptible_queues = ["low"]
[queues.low]
priority = 10
"""
BUSY = "import time\nx = bytearray(150 << 20)\nt = time.time()\nwhile time.time() - t < 90:\n    sum(range(10000))\n"
SHORT = "import time\nx = bytearray(30 << 20)\ntime.sleep(0.6)\n"


def _wait(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"ui_screenshots: timed out waiting for {what}")
        time.sleep(0.2)


def _shrink(path: Path) -> None:
    from PIL import Image

    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def log_in(b, token: str) -> None:
    b.css("#token").send_keys(token)
    b.css("#login").click()
    b.wait(lambda: b.all("#whoami"), 30, "the overview")


def main(out: Path) -> None:
    from xce.cluster.local import LocalCluster
    from xce.testing.browser import Browser

    with tempfile.TemporaryDirectory(prefix="xce-shots-") as tmp:
        base = Path(tmp)
        (base / "xce.toml").write_text(CONFIG)
        (base / "work").mkdir()
        cluster = LocalCluster(base / "state", 3, 2, config=base / "xce.toml", round_interval=0.1,
                               report_interval=0.5, host_prefix="node")
        cluster.start()
        try:
            admin = {"Authorization": f"Bearer {cluster.token('admin')}"}
            users = {"me": (cluster.state_dir / "token").read_text().strip(), "admin": cluster.token("admin")}

            def submit(user: str, command: list[str], **extra) -> dict:
                r = httpx.post(cluster.url + "/v1/jobs", json={"command": command, "cwd": str(base / "work"), **extra},
                               headers={"Authorization": f"Bearer {users[user]}"}, timeout=30)
                r.raise_for_status()
                return r.json()

            py = "python3"
            arr = submit("me", [py, "-c", SHORT], array=24, job_type="etl", requests={"mem": 1 << 30})
            submit("admin", ["sh", "-c", "echo failing; exit 3"])
            job = lambda jid: httpx.get(f"{cluster.url}/v1/jobs/{jid}", headers=admin).json()  # noqa: E731
            _wait(lambda: all(job(j)["state"] in ("DONE", "EXIT") for j in arr["jobids"]), 120, "the short jobs")
            busy = submit("me", [py, "-c", BUSY], queue="low", job_type="solver", requests={"mem": 256 << 20})["jobid"]
            submit("admin", ["sleep", "120"], queue="high", tasks=2)
            waiting = submit("admin", ["sleep", "60"], tasks=4, request="select[maxmem > 4000000G]")["jobid"]
            _wait(lambda: job(waiting).get("pend_reasons"), 30, "the waiting job's reasons")
            _wait(lambda: len(job(busy)["usage"].get("series", {}).get("points", [])) >= 12, 60, "usage samples")

            out.mkdir(parents=True, exist_ok=True)
            shots = [("overview", "/ui/"), ("jobs", "/ui/jobs"), ("job-running", f"/ui/jobs/{busy}"),
                     ("job-pending", f"/ui/jobs/{waiting}"), ("host", f"/ui/hosts/{cluster.worker_names[0]}"),
                     ("drift", "/ui/drift"), ("api-docs", "/docs"), ("redoc", "/redoc")]
            with Browser(cluster.url, 1280, 800) as b:
                b.get("/ui/login")
                b.screenshot(out / "login.png")
                log_in(b, cluster.token("admin"))
                for name, path in shots:
                    b.get(path)
                    time.sleep(2.5 if name in ("api-docs", "redoc") else 0.5)
                    b.screenshot(out / f"{name}.png", full_page=name not in ("api-docs", "redoc"))
                # what a user sees of other users' jobs: no command
                b.get("/ui/")
                b.css("form.who button").click()
                b.wait(lambda: b.all("#token"), 30, "the log-in page")
                log_in(b, users["me"])
                b.get("/ui/jobs?state=PEND,RUN,SSUSP,USUSP")
                b.screenshot(out / "jobs-as-a-user.png")
                b.resize(390, 844)
                b.get("/ui/")
                b.screenshot(out / "phone-overview.png", full_page=True)
                outside = b.external_requests()
            for png in sorted(out.glob("*.png")):
                _shrink(png)
                print(f"{png}  {png.stat().st_size // 1024} KiB")
            if outside:
                raise SystemExit(f"ui_screenshots: pages requested other hosts: {outside}")
        finally:
            cluster.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "docs" / "screenshots")
