"""xce.core does no I/O and reads no wall clock: every module is scanned for forbidden imports
and calls. The one exemption is the monotonic read inside clock.py (Req 10 AC 3)."""

import ast
import pathlib

import xce.core

CORE = pathlib.Path(xce.core.__file__).parent

FORBIDDEN_MODULES = {
    "socket", "ssl", "http", "urllib", "requests", "httpx", "asyncio", "subprocess", "multiprocessing",
    "threading", "os", "io", "pathlib", "shutil", "tempfile", "glob", "sqlite3", "sqlalchemy", "datetime",
    "select", "selectors", "signal", "fastapi", "uvicorn", "psutil", "pickle", "shelve", "importlib",
}
FORBIDDEN_CALLS = {"open", "print", "input", "exec", "eval", "__import__"}
TIME_ALLOWED = {"clock.py": {"monotonic_ns"}}


def core_modules():
    return sorted(p for p in CORE.rglob("*.py"))


def test_core_modules_import_nothing_that_does_io_or_reads_the_wall_clock():
    problems = []
    for path in core_modules():
        tree = ast.parse(path.read_text(), filename=str(path))
        rel = path.relative_to(CORE)
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
                if node.module == "time":
                    allowed = TIME_ALLOWED.get(path.name, set())
                    bad = [a.name for a in node.names if a.name not in allowed]
                    if bad:
                        problems.append(f"{rel}: from time import {bad}")
                    continue
            for name in names:
                top = name.split(".")[0]
                if top in FORBIDDEN_MODULES:
                    problems.append(f"{rel}: imports {name}")
                if top == "time" and path.name not in TIME_ALLOWED:
                    problems.append(f"{rel}: imports time")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "time":
                if node.attr not in TIME_ALLOWED.get(path.name, set()):
                    problems.append(f"{rel}: uses time.{node.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
                problems.append(f"{rel}:{node.lineno}: calls {node.func.id}()")
    assert problems == []


def test_the_scan_finds_a_planted_violation(tmp_path):
    """The checker itself can fail: a module that opens a file is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import socket\nfrom time import time\nopen('x')\n")
    tree = ast.parse(bad.read_text())
    found = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom, ast.Call))]
    assert any(isinstance(n, ast.Import) and n.names[0].name == "socket" for n in found)
    assert any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "open" for n in found)


def test_importing_the_core_pulls_in_no_io_modules():
    import subprocess
    import sys

    code = (
        "import sys; before=set(sys.modules); import xce.core; "
        "after=set(sys.modules)-before; "
        "bad=sorted(m for m in after if m.split('.')[0] in {'socket','subprocess','sqlite3','httpx','asyncio','ssl'}); "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
