"""The checkout stands on its own: nothing in it reaches for files beside or above it.

Users and packagers clone into arbitrary folders; a test, benchmark or document that reads
``../something`` passes on a development machine and fails everywhere else.
"""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT_SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".sh", ".txt", ".yml", ".yaml", ".json", ".mako", ""}

OUTSIDE = re.compile(r"\.\./shared|[\"']shared[\"']\s*/|\b(?:ROOT|REPO)\.parent\b")
PARENTS = re.compile(r"parents\[(\d+)\]")


def _tracked_files() -> list[Path]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    return [ROOT / line for line in out.splitlines()
            if line and (ROOT / line).is_file() and Path(line).suffix in TEXT_SUFFIXES]


def test_no_file_refers_to_a_path_outside_the_checkout():
    offenders = []
    for path in _tracked_files():
        if path == Path(__file__).resolve():
            continue  # its own examples of what an escape looks like
        rel = path.relative_to(ROOT)
        text = path.read_text(encoding="utf-8", errors="replace")
        for lineno, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{rel}:{lineno}: {line.strip()}")
            if path.suffix == ".py":
                # parents[k] of a file at depth d (tests/sim/x.py: d = 3) stays inside for k <= d - 1.
                for m in PARENTS.finditer(line):
                    if int(m.group(1)) > len(rel.parts) - 1:
                        offenders.append(f"{rel}:{lineno}: {line.strip()}")
    assert offenders == []


def test_the_shipped_traces_are_in_the_checkout_with_their_sources():
    traces = ROOT / "examples" / "traces"
    names = {p.name for p in traces.glob("*.swf")}
    assert names >= {"NASA-iPSC-1993-3.1-cln.swf", "lublin_256.swf", "LANL-CM5-1994-4.1-cln.first155.swf"}
    readme = (traces / "README.md").read_text()
    assert "Experience with using the Parallel Workloads Archive" in readme
    for name in names:
        assert name in readme, f"{name} has no source in examples/traces/README.md"


def test_the_guard_catches_an_escape(tmp_path):
    """The patterns above must match what they are meant to catch, or the first test proves nothing."""
    assert OUTSIDE.search('TRACES = Path(__file__).parents[1] / "shared" / "traces"')
    assert OUTSIDE.search("see ../" + "shared/traces/lublin_256.swf")
    assert OUTSIDE.search("TRACES = REPO.parent / 'x'")
    assert [int(m.group(1)) for m in PARENTS.finditer("Path(__file__).resolve().parents[3]")] == [3]
