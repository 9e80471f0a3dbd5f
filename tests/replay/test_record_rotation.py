"""Which rotated recordings are kept: age first, then the total size, oldest first, never the current one."""

from __future__ import annotations

import os

from xce.scheduler.rotation import RotationPolicy, due, new_name, prune


def test_prune_by_age_then_total_size(tmp_path):
    now = 1_000_000.0
    files = []
    for _k, (age, size) in enumerate(((500, 10), (300, 10), (200, 40), (100, 40), (0, 40))):
        p = new_name(tmp_path, int((now - age) * 1e9))
        p.write_bytes(b"x" * size)
        os.utime(p, (now - age, now - age))
        files.append(p)
    (tmp_path / "manual.jsonl").write_bytes(b"y" * 1000)  # not a rotated file: never touched
    assert [p.name for p in sorted(tmp_path.glob("rotate-*"))] == [p.name for p in files]  # names sort in time order
    gone = prune(tmp_path, files[-1], RotationPolicy(keep_s=400, keep_bytes=100), now=now)
    # 500 s old: too old; then 10+40+40+40 = 130 > 100: the oldest (300 s) and then 200 s go.
    assert gone == files[:3]
    assert sorted(tmp_path.iterdir()) == sorted([files[3], files[4], tmp_path / "manual.jsonl"])
    assert prune(tmp_path, files[4], RotationPolicy(keep_s=1, keep_bytes=1), now=now) == [files[3]]  # current stays


def test_due_by_size_or_age(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * 100)
    policy = RotationPolicy(rotate_bytes=200, rotate_s=10)
    assert not due(p, 0.0, policy, now_mono=5.0)
    assert due(p, 0.0, policy, now_mono=10.0)
    p.write_bytes(b"x" * 200)
    assert due(p, 0.0, policy, now_mono=1.0)
    assert RotationPolicy.from_settings({"record": "off"}) is None
    assert RotationPolicy.from_settings({"record": "rotate", "record_rotate_s": 5}).rotate_s == 5
