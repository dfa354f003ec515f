"""No import cycle anywhere in berth/: modules depend one way (issue 40). Every
``import`` and ``from ... import`` counts, those inside functions too: a deferred import
is still a dependency, and one that dodges a circle hides it. A cycle is a strongly
connected component of more than one module; the failure names its modules."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def modules_of(package: Path) -> dict[str, Path]:
    """Dotted name -> file, for every module under ``package`` (a package is its
    ``__init__``)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, tree: ast.AST) -> Iterator[str]:
    """What the module ``name`` imports, dotted, relative imports resolved:
    ``from a.b import c`` gives both ``a.b.c`` (a module or a name) and ``a.b``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                here = here[:len(here) - (node.level - 1)]
                base = ".".join(here + ([node.module] if node.module else []))
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    modules = modules_of(package)

    def owner(dotted: str) -> str | None:      # the module a dotted name lives in
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets = {owner(t) for t in _imported(name, path, tree)
                   if t.split(".")[0] == package.name}
        graph[name] = {t for t in targets if t is not None and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without
    recursion), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
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


def test_berth_has_no_import_cycle() -> None:
    graph = import_graph(ROOT / "berth")
    assert len(graph) > 300, "the walk missed berth's modules"
    found = cycles(graph)
    assert found == [], "import cycles in berth/ (break each by moving the shared helper " \
        "to a module both sides can import):\n" + "\n".join(
            f"  {len(c)} modules: {', '.join(c)}" for c in found)


def test_a_deferred_import_that_closes_a_circle_is_found(tmp_path: Path) -> None:
    """The check itself: a circle closed inside a function, through a relative import
    and through a package's ``__init__``, is reported; a one-way chain is not."""
    pkg = tmp_path / "demo"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from demo import b\n")
    (pkg / "b.py").write_text("def f():\n    from .c import g\n    return g\n")
    (pkg / "c.py").write_text("import demo.a\n\ndef g():\n    pass\n")
    (pkg / "sub" / "__init__.py").write_text("from demo.sub.x import X\n")
    (pkg / "sub" / "x.py").write_text("from demo.sub import y\nX = 1\n")
    (pkg / "sub" / "y.py").write_text("from demo.a import b\n")
    (pkg / "chain.py").write_text("import demo.sub.y\n")
    assert cycles(import_graph(pkg)) == [["demo.a", "demo.b", "demo.c"],
                                         ["demo.sub", "demo.sub.x"]]
