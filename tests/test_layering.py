"""The layers a reader sees in the folders are the layers the imports follow.

The core is at the bottom, shared modules and the client package (``xce.client``: how any process
finds and talks to a controller) above it, the services (controller, worker, scheduler) above those,
commands on top, and imports point down. Every import counts, including those inside functions (a
third of them were there to hide cycles); only ``if TYPE_CHECKING:`` blocks are left out, because
they never run. The graph has no cycle, so each module can be read knowing only what is below it.
"""

from __future__ import annotations

import ast
import pathlib

import xce

ROOT = pathlib.Path(xce.__file__).parent

#: Who may import the controller's own modules: the commands that run a controller or migrate its
#: database, and the in-process harness that tests one. Everyone else reaches it over HTTP through
#: ``xce.client``.
MAY_IMPORT_CONTROLLER = ("xce.controller", "xce.cli.controller", "xce.cli.db_cmd", "xce.testing.controller_harness")

#: (importer, imported): packages that must never import the other, whatever the path.
FORBIDDEN = [
    ("xce.core", "xce.client"), ("xce.core", "xce.controller"), ("xce.core", "xce.worker"),
    ("xce.core", "xce.scheduler"), ("xce.core", "xce.cli"),
    ("xce.client", "xce.controller"), ("xce.client", "xce.worker"), ("xce.client", "xce.scheduler"),
    ("xce.client", "xce.cli"),
    ("xce.worker", "xce.scheduler"), ("xce.scheduler", "xce.worker"),
    ("xce.worker", "xce.cli"), ("xce.scheduler", "xce.cli"), ("xce.controller", "xce.cli"),
    ("xce.controller", "xce.worker"), ("xce.controller", "xce.scheduler"),
]


def _modules(root: pathlib.Path, package: str) -> dict[str, pathlib.Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join([package, *parts])] = path
    return found


def import_graph(root: pathlib.Path = ROOT, package: str = "xce") -> dict[str, set[str]]:
    """Module -> the package's modules it imports, wherever in the file the import is."""
    mods = _modules(root, package)

    def known(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        here = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        targets: set[str] = set()
        todo = list(ast.parse(path.read_text(), filename=str(path)).body)
        while todo:
            node = todo.pop()
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                todo.extend(node.orelse)
                continue
            if isinstance(node, ast.Import):
                targets.update(known(a.name) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets.update(known(f"{base}.{a.name}") or known(base) for a in node.names)
            todo.extend(ast.iter_child_nodes(node))
        graph[mod] = {t for t in targets if t and t != mod}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(import_graph()) == []


def test_only_the_controllers_own_commands_import_the_controller():
    graph = import_graph()
    reaching_in = sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                         if _under(t, "xce.controller") and not any(_under(m, p) for p in MAY_IMPORT_CONTROLLER))
    assert reaching_in == []


def test_imports_point_down():
    graph = import_graph()
    upward = sorted(f"{m} -> {t}" for m, ts in graph.items() for t in ts
                    for low, high in FORBIDDEN if _under(m, low) and _under(t, high))
    assert upward == []


def test_the_checks_see_a_cycle_hidden_inside_a_function(tmp_path):
    """The checker itself can fail: two modules that import each other, one of them lazily."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def late():\n    from pkg.a import thing\n")
    (pkg / "c.py").write_text("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from pkg import a\n")
    graph = import_graph(pkg, "pkg")
    assert cycles(graph) == [["pkg.a", "pkg.b"]]
    assert graph["pkg.c"] == set()
