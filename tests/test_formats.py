"""Sizes, durations and times as people read them (``xce.formats``): each format's spelling, pinned,
because clients parse the LSF and Slurm ones and people grep the others."""

from __future__ import annotations

import time

import pytest

from xce import formats

G = 1024**3
#: 2026-12-03 14:03:27.512 UTC, a Thursday, in ns.
T = 1_796_306_607_512_000_000


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_sizes_are_the_quantity_grammars_reading():
    assert [formats.size(n) for n in (4 * G, 3 * G // 2, 512, 0, None)] == ["4G", "1.5G", "512B", "0", "-"]


@pytest.mark.parametrize("fn, seconds, text", [
    (formats.hms, 5400, "1:30:00"), (formats.hms, 300, "0:05:00"), (formats.hms, 36 * 3600, "36:00:00"),
    (formats.seconds_or_hms, 12.54, "12.5s"), (formats.seconds_or_hms, 60, "0:01:00"),
    (formats.compact, 42, "42s"), (formats.compact, 187, "3:07"), (formats.compact, 7387, "2:03:07"),
    (formats.compact, 3 * 86400 + 7387, "3d 2:03:07"), (formats.compact, None, "-"),
    (formats.in_words, 4.25, "4.2 s"), (formats.in_words, 95, "95 s"), (formats.in_words, 725, "12 min 5 s"),
    (formats.in_words, 12000, "3 h 20 min"), (formats.in_words, 187200, "2 d 4 h"),
    (formats.slurm_duration, 65, "1:05"), (formats.slurm_duration, 3661, "1:01:01"),
    (formats.slurm_duration, 90061, "1-01:01:01"), (formats.slurm_elapsed, 65, "00:01:05"),
    (formats.slurm_elapsed, 90061, "1-01:01:01"), (formats.slurm_elapsed, None, "00:00:00"),
])
def test_durations(fn, seconds, text):
    assert fn(seconds) == text


def test_times_of_day(utc):
    assert formats.minute(T) == "2026-12-03 14:03"
    assert formats.second(T) == "2026-12-03 14:03:27"
    assert formats.millisecond(T) == "2026-12-03 14:03:27.512"
    assert formats.zoned(T) == "2026-12-03 14:03:27 UTC"
    assert formats.recent(time.time_ns()).count(":") == 2  # within a day: the time alone
    assert formats.recent(T - 365 * 86400 * 10**9) == "Dec 03 14:03"
    assert formats.utc_minute(T / 1e9) == "2026-12-03 14:03 UTC"
    assert formats.utc_millisecond(T / 1e9) == "2026-12-03T14:03:27.512Z"
    assert (formats.slurm_clock(T), formats.slurm_clock(None), formats.slurm_clock(None, "Unknown")) == (
        "2026-12-03T14:03:27", "N/A", "Unknown")
    assert formats.slurm_banner(T / 1e9) == "Thu Dec 03 14:03:27 2026"
    assert (formats.lsf_short(T), formats.lsf_long(T), formats.lsf_short(None)) == (
        "Dec  3 14:03", "Thu Dec  3 14:03:27", "")
    assert formats.lsf_banner(T / 1e9) == "Thu Dec  3 14:03:27 2026"
    assert [f(None) for f in (formats.minute, formats.second, formats.millisecond, formats.recent)] == ["-"] * 4
