"""The package's import graph: no cycles, and no private name taken from another package.

Every ``import`` of the package's own modules counts, at module level, inside a function (a
function-local import is still a dependency) or under ``if TYPE_CHECKING:`` (a module that
needs another's types depends on it: a type-only import back closes a circle as surely as
any other). A private module or name (one starting with ``_``) belongs to the package that
holds it and may be imported only from inside that package."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import marketframe

PACKAGE = Path(marketframe.__file__).resolve().parent
ROOT_NAME = "marketframe"


def _module_name(path: Path) -> str:
    parts = [ROOT_NAME, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "__main__.py"}


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _resolve(importer: str, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".")
    if not _is_package(importer):
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements, wherever they stand (``if TYPE_CHECKING:`` bodies included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def edges() -> Iterator[tuple[str, str, str | None]]:
    """``(importer, imported module, imported name or None)`` for the package's own modules."""
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == ROOT_NAME:
                        yield name, alias.name, None
                continue
            target = _resolve(name, node.level, node.module)
            if target.split(".")[0] != ROOT_NAME:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in MODULES:
                    yield name, sub, None
                else:
                    yield name, target, alias.name


def _owner(module: str, name: str | None) -> str | None:
    """The package a private module or name belongs to, None when nothing private."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    if name is not None and name.startswith("_") and not name.startswith("__"):
        return module if _is_package(module) else ".".join(parts[:-1])
    return None


def test_no_private_name_is_imported_from_another_package() -> None:
    crossings = {
        f"{importer} imports {module}{'.' + name if name else ''}"
        for importer, module, name in edges()
        if (owner := _owner(module, name)) is not None
        and importer != owner
        and not importer.startswith(owner + ".")
    }
    assert sorted(crossings) == []


def cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for importer, module, _ in edges():
        if module in graph and module != importer:
            graph[importer].add(module)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles() == []


def test_the_graph_walker_sees_a_cycle_and_a_crossing() -> None:
    """The checks above can fail: a function-local or type-only import back is a cycle,
    and ``marketframe.store._sync`` is private to the store."""
    assert _owner("marketframe.store._sync", None) == "marketframe.store"
    assert _owner("marketframe.convert", "_hidden") == "marketframe.convert"
    assert _owner("marketframe.client", None) is None
    tree = ast.parse(
        "def f():\n    from marketframe import client\nif TYPE_CHECKING:\n    import x\n"
    )
    assert [type(n).__name__ for n in _imports(tree)] == ["ImportFrom", "Import"]
