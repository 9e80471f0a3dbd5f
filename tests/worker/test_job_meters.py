"""The providers that measure one job's use (``job_usage``): what they answer goes into the tick as
a whole number, and anything else (an error, a bool, a fraction, a negative) sends no figure."""

from __future__ import annotations

import logging

from xce.providers.base import JobView, ResourceProvider
from xce.worker.usage import JobMeters


class Meter(ResourceProvider):
    def __init__(self, name, answer):
        self._name, self.answer, self.seen = name, answer, []

    @property
    def resource_name(self):
        return self._name

    def capacity(self):
        return 8

    def is_available(self):
        return True

    def job_usage(self, job):
        self.seen.append(job)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class CountsOnly(ResourceProvider):
    resource_name = "example.com/count"

    def capacity(self):
        return 8

    def is_available(self):
        return True


def test_answers_become_figures_and_bad_ones_are_left_out_once_logged(caplog):
    good, none = Meter("example.com/good", 3), Meter("example.com/none", None)
    bad = [Meter("example.com/neg", -1), Meter("example.com/bool", True), Meter("example.com/frac", 0.5),
           Meter("example.com/err", RuntimeError("server down"))]
    meters = JobMeters([good, none, *bad, CountsOnly()])
    assert [p.resource_name for p in meters.providers] == [p.resource_name for p in (good, none, *bad)]
    with caplog.at_level(logging.WARNING, logger="xce.worker"):
        assert meters.measure(7, [100, 101], ["1"]) == {"example.com/good": 3}
        assert meters.measure(7, [100], ["1"]) == {"example.com/good": 3}
    assert good.seen[0] == JobView(7, (100, 101), ("1",))
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 4 and any("server down" in w for w in warned)  # each broken provider once
    assert JobMeters([CountsOnly()]).providers == []  # the default answers nothing: never asked
