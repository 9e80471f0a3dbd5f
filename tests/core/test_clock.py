"""The four modes of the virtual clock (Req 10 AC 3), with a controllable monotonic source."""

import pytest

from xce.core.clock import VirtualClock


class FakeMonotonic:
    def __init__(self, t=1_000):
        self.t = t

    def __call__(self):
        return self.t


def test_normal_mode_is_the_monotonic_clock():
    mono = FakeMonotonic(5_000_000)
    clock = VirtualClock(mono)
    assert clock.now() == 5_000_000
    mono.t += 1_234
    assert clock.now() == 5_001_234


def test_discrete_simulation_is_frozen_at_the_event_time():
    mono = FakeMonotonic()
    clock = VirtualClock(mono)
    clock.freeze_at(42_000)
    mono.t += 10**9
    assert clock.now() == 42_000
    clock.set(43_000, None, 0, 1)
    assert clock.now() == 43_000


def test_real_time_simulation_tracks_the_wall_from_the_anchor():
    mono = FakeMonotonic(100)
    clock = VirtualClock(mono)
    clock.set(7_000_000, None, 1, 1)
    mono.t += 250
    assert clock.now() == 7_000_250


@pytest.mark.parametrize("num,den,expected", [(10, 1, 2_500), (1, 10, 25)])
def test_fast_and_slow_simulation(num, den, expected):
    mono = FakeMonotonic(0)
    clock = VirtualClock(mono)
    clock.set(1_000_000, 0, num, den)
    mono.t = 250
    assert clock.now() == 1_000_000 + expected


def test_parameters_change_as_one_group_and_bad_speed_is_refused():
    clock = VirtualClock(FakeMonotonic(0))
    clock.set(1, 2, 3, 4)
    assert tuple(clock.params) == (1, 2, 3, 4)
    with pytest.raises(ValueError, match="speed"):
        clock.set(0, 0, 1, 0)
    assert tuple(clock.params) == (1, 2, 3, 4)


def test_core_log_records_carry_core_time(caplog):
    from xce.testing import Harness

    h = Harness()
    h.core.clock.freeze_at(1_700_000_000_123_000_000)
    with caplog.at_level("WARNING", logger="xce.core"):
        h.core.log.warning("hello")
    rec = caplog.records[-1]
    assert rec.created == pytest.approx(1_700_000_000.123)
