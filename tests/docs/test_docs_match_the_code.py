"""Statements in the guides that a site trying XCE found false (issue 36), checked against the code
they describe, so that the next change to either shows up here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def text(rel: str) -> str:
    return (ROOT / rel).read_text()


def documents() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text() for p in [ROOT / "README.md", *(ROOT / "docs").glob("*.md"),
                                                             *(ROOT / "examples").rglob("README.md")]}


def test_a_silent_worker_is_described_with_the_states_the_controller_uses():
    from xce.controller.hosts import fleet

    source = Path(fleet.__file__).read_text()
    assert '"unreach"' in source and '"unavail"' not in source
    live = text("docs/live-cluster.md")
    assert "`unavail`" not in live and "`unreach`" in live and "`UNKWN`" in live


def test_no_guide_installs_a_package_the_project_does_not_publish():
    for name, doc in documents().items():
        assert not re.search(r"pip install xce(\s|$|`)", doc), name


def test_every_sjf_picker_example_says_where_the_plugin_comes_from():
    """``sjf`` is not built in: a page that uses it must say which plugin to install."""
    for name, doc in documents().items():
        if "--picker sjf" in doc:
            assert "examples/sjf_picker" in doc, name


def test_the_prometheus_example_scrapes_the_controllers_https_api_port():
    readme = text("examples/grafana/README.md")
    unit = text("examples/systemd/xce-controller.service")
    port = re.search(r"--port (\d+)", unit).group(1)
    assert "scheme: https" in readme and "ca_file:" in readme
    assert f':{port}"' in readme and ":8600" not in readme


#: A path of this repository as the guides name one: `xce/worker/spool.py`, `examples/traces/`.
_PATH = re.compile(r"`((?:xce|tests|bench|examples|tools|docs)/[A-Za-z0-9_./-]*)`")


def test_every_path_the_guides_name_exists():
    missing = sorted({f"{doc}: {m}" for doc, body in documents().items() for m in _PATH.findall(body)
                      if not (ROOT / m.rstrip("/")).exists()})
    assert not missing, "paths named in the docs that the repository does not have:\n" + "\n".join(missing)
