"""Same state + same events + same seed => the same decisions, in another process with another
PYTHONHASHSEED too (Req 10 AC 6)."""

import json
import os
import subprocess
import sys

from xce.core import SchedulerCore
from xce.testing.scenarios import random_events

SCRIPT = """
import json, sys
from xce.core import SchedulerCore
from xce.testing.scenarios import random_events
out = []
core = SchedulerCore(lambda d: out.append(d.to_json()), seed=7)
for e in random_events(seed=11, njobs=300):
    core.clock.freeze_at(e.ts)
    core.push_event(e)
json.dump(out, sys.stdout)
"""


def run_in_subprocess(hashseed: str) -> list:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    res = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def test_two_processes_with_different_hash_seeds_decide_identically():
    a = run_in_subprocess("1")
    b = run_in_subprocess("4242")
    assert len(a) > 100
    assert {d["op"] for d in a} >= {"DISPATCH", "PEND"}
    assert a == b


def test_in_process_runs_are_identical_and_seed_is_kept():
    def run():
        out = []
        core = SchedulerCore(out.append, seed=3)
        for e in random_events(seed=5, njobs=150):
            core.push_event(e)
        return [d.to_json() for d in out], core.rng.random()

    assert run() == run()
