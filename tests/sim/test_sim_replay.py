"""A recorded simulation replays through the core with zero mismatches (Req 10 AC 11-14)."""

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]
LANL = ROOT / "examples" / "traces" / "LANL-CM5-1994-4.1-cln.first155.swf"



def _record_and_verify(tmp_path, args):
    rec = tmp_path / "run.jsonl"
    out = subprocess.run([sys.executable, "-m", "xce.cli.sim_cmd", "run", *args, "--record", str(rec),
                          "--snapshot-interval", "50", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert rec.stat().st_size > 0
    ver = subprocess.run([sys.executable, "-m", "xce.cli.scheduler_cmd", "--sim", str(rec), "--sim-verify"],
                         capture_output=True, text=True, cwd=ROOT)
    assert ver.returncode == 0, ver.stdout + ver.stderr
    text = (ver.stdout + ver.stderr).lower()
    assert "0 mismatch" in text or "no mismatch" in text, text


def test_hand_trace_replays(tmp_path):
    _record_and_verify(tmp_path, ["--workload", str(DATA / "hand.swf"), "--hosts", "2", "--slots-per-host", "2",
                                  "--skip-malformed"])


CLUSTER = """
default_queue = "q1"
[queues.q0]
priority = 50
preemptible_queues = ["q1"]
preempt_policy = "queue_priority_first"
[queues.q1]
priority = 10
[[sim.hosts]]
prefix = "n"
count = 2
slots = 1
mem = "1G"
"""


def test_memory_and_preemption_replay(tmp_path):
    # Memory requests, usage ticks, suspensions and resumes all go through the writer.
    cluster = tmp_path / "cluster.toml"
    cluster.write_text(CLUSTER)
    _record_and_verify(tmp_path, ["--workload", str(DATA / "preempt.swf"), "--cluster", str(cluster),
                                  "--queues-from-trace"])


def test_lanl_replays(tmp_path):
    _record_and_verify(tmp_path, ["--workload", str(LANL), "--mem-per-host", "32M"])
