"""A site's own resource provider measures each job's use (``ResourceProvider.job_usage``), and
``xce drift`` compares it with what jobs declared (issue 24: drift for every declared resource).

The provider is a real plugin: a throwaway distribution on the worker's ``PYTHONPATH`` whose entry
point the worker loads at start, as a site installs one. It counts the processes in each job's
control group, so what it measures is what the job really does."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROVIDER = '''\
from xce.providers.base import ResourceProvider


class Processes(ResourceProvider):
    resource_name = "example.com/procs"

    def capacity(self):
        return 64

    def is_available(self):
        return True

    def job_usage(self, job):
        return len(job.pids)


class Broken(ResourceProvider):
    """Measures per job, badly: the worker must send no figure and go on."""

    resource_name = "example.com/broken"

    def capacity(self):
        return 8

    def is_available(self):
        return True

    def job_usage(self, job):
        raise RuntimeError("the license server is down")
'''


def _install(base) -> str:
    base.mkdir()
    info = base / "xce_site_meters-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: xce_site_meters\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent("""\
        [xce.resource_providers]
        procs = xce_site_meters:Processes
        broken = xce_site_meters:Broken
        """))
    (base / "xce_site_meters.py").write_text(PROVIDER)
    return str(base)


def test_a_plugin_providers_per_job_measure_reaches_drift(make_cluster, tmp_path, monkeypatch):
    site = _install(tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [site, os.environ.get("PYTHONPATH")])))
    cluster, xce = make_cluster(workers=1, slots=2, report_interval=0.5)
    (host,) = json.loads(xce("hosts", "--json").stdout)["hosts"]
    assert host["resources"]["example.com/procs"] == 64, host
    # Three processes (the shell and two sleeps) against ten declared.
    jobid = xce.submit("--type", "etl", "--request", "example.com/procs=10", "--request", "example.com/broken=1",
                       "--", "sh", "-c", "sleep 3 & sleep 3 & wait")
    job = xce.wait_state(jobid, ("DONE", "EXIT"), timeout=60)
    assert job["state"] == "DONE", job
    usage = job["usage"]
    assert usage["peak"]["example.com/procs"] == 3, usage
    assert "example.com/broken" not in usage["peak"], usage  # its failure sent nothing, not a 0

    rep = json.loads(xce("drift", "--json", "--min-samples", "1").stdout)
    rows = {(r["job_type"], r["resource"]): r for r in rep["rows"]}
    procs = rows[("etl", "example.com/procs")]
    assert (procs["declared"], procs["measured_median"], procs["verdict"]) == (10, 3, "far-below"), procs
    assert [(u["job_type"], u["resource"]) for u in rep["unmeasured"]] == [("etl", "example.com/broken")], rep
