"""A harness shipped with the package: tests, benchmarks and the simulator build scenarios with it.

    h = Harness(queues=[queue("normal")])
    h.hosts(make_host("h1").slots(8).mem("16G"))
    h.submit(make_job(1).tasks(4).rusage("mem=1G"))
    assert h.round() == [("DISPATCH", 1, (("h1", 4),))]

Every event the harness pushes is followed by ``core.validate()``, so a scenario test also
checks the core's invariants at every step.
"""

from xce.testing.builders import make_host, make_job, queue
from xce.testing.harness import Harness, Recorder, compact

__all__ = ["Harness", "Recorder", "compact", "make_host", "make_job", "queue"]
