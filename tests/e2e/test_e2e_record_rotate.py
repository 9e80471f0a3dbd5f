"""``[scheduler] record = "rotate"``: the scheduler always records, a new file by age, old files deleted;
every file replays on its own with zero mismatches."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from conftest import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CONFIG = """
default_queue = "normal"

[queues.normal]
priority = 30

[scheduler]
record = "rotate"
record_rotate_s = 1.5
record_keep_s = 6
"""


def test_rotating_recording_keeps_a_replayable_window(make_cluster, tmp_path):
    config = tmp_path / "xce.toml"
    config.write_text(CONFIG)
    cluster, xce = make_cluster(workers=1, slots=2, config=config)
    recordings = cluster.state_dir / "recordings"
    first = wait_for(lambda: sorted(recordings.glob("rotate-*.jsonl")), 30, "a rotating recording to start")[0]
    ids = []
    deadline = time.monotonic() + 12
    while time.monotonic() < deadline:  # rounds keep coming: each may rotate
        ids.append(xce.submit("--", "true"))
        time.sleep(0.7)
    for j in ids:
        xce.wait_state(j, "DONE", 60)
    files = sorted(recordings.glob("rotate-*.jsonl"))
    assert len(files) >= 2, files
    assert first not in files  # older than record_keep_s: deleted
    assert all(f.stat().st_mode & 0o777 == 0o600 for f in files if f.exists())
    copies = []
    for f in files[:-1]:  # the last one is still being written; copied, since pruning goes on meanwhile
        try:
            copies.append(Path(shutil.copy(f, tmp_path / f.name)))
        except FileNotFoundError:
            pass
    assert copies
    assert any('"DECISION"' in c.read_text() for c in copies)
    for c in copies:
        r = xce("scheduler", "--sim", str(c), "--sim-verify", check=False)
        assert r.returncode == 0, (c, r.stdout, r.stderr)
