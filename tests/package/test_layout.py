"""The layers of the map in docs/contributing.md hold: a module of the package imports only
modules of the rows below its own row, or of its own folder (or root module). The rows are read
from the document, so the map and the code cannot drift apart. As in ``test_imports``, every
import counts: at module level, inside a function or under ``if TYPE_CHECKING:``.

Test folders follow the package, and one named like a standard-library module is no package
(it would be imported under that name and hide the standard library's)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest

from .test_import_light import run
from .test_imports import MODULES, ROOT_NAME, edges

ROOT = Path(__file__).resolve().parents[2]
MAP = ROOT / "docs" / "contributing.md"


def unit(module: str) -> str:
    """The folder or root module of ``marketframe.x.y``: ``x`` (``__init__`` for the root)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def rows(text: str) -> list[set[str]]:
    """The folders and root modules of each row of the map's table, from the top."""
    table = text[text.index("# The map of the package") :]
    out = []
    for line in table.splitlines():
        if line.startswith("| `"):
            where = line.split("|")[1]
            out.append(
                {
                    name.removesuffix("/").removesuffix(".py")
                    for name in re.findall(r"`([^`]+)`", where)
                }
            )
        elif out and not line.startswith("|"):
            break
    return out


def upward(layers: list[set[str]], graph: Iterable[tuple[str, str, str | None]]) -> list[str]:
    """The imports that do not run down the ``layers`` (one set of units per row)."""
    level = {name: i for i, row in enumerate(layers) for name in row}
    off_map = len(layers)  # a folder the map does not name: below nothing, above nothing
    return sorted(
        {
            f"{importer} imports {module} ({unit(importer)} is not above {unit(module)})"
            for importer, module, _ in graph
            if unit(importer) != unit(module)
            and level.get(unit(importer), off_map) >= level.get(unit(module), -1)
        }
    )


def test_every_folder_and_root_module_stands_in_one_row_of_the_map() -> None:
    layers = rows(MAP.read_text(encoding="utf-8"))
    placed = [name for row in layers for name in row]
    assert sorted(placed) == sorted(set(placed))  # in one row only
    assert set(placed) == {unit(m) for m in MODULES}


def test_each_folder_imports_only_the_rows_below_it() -> None:
    assert upward(rows(MAP.read_text(encoding="utf-8")), edges()) == []


def test_the_layer_check_sees_an_import_that_runs_up_or_across() -> None:
    """The check above can fail: an import up the table, or between two folders of one row."""
    layers = [{"client"}, {"endpoints", "schemas"}]
    down = ("marketframe.client._client", "marketframe.endpoints", "get")
    up = ("marketframe.endpoints._params", "marketframe.client", None)
    across = ("marketframe.endpoints._rows", "marketframe.schemas.stock", None)
    inside = ("marketframe.endpoints._params", "marketframe.endpoints._model", None)
    assert upward(layers, [down, inside]) == []
    assert len(upward(layers, [up, across])) == 2
    assert unit(ROOT_NAME) == "__init__" and unit("marketframe.client._client") == "client"


@pytest.mark.parametrize(
    "first", ["marketframe.download", "marketframe.download._yf", "marketframe.cli._download"]
)
def test_marketframe_download_is_the_function_whatever_is_imported_first(first: str) -> None:
    """``download/`` bears the name of the function it holds: importing any of its modules
    (by the package, a command or a user) never leaves ``marketframe.download`` the package."""
    out = run(f"""
        import importlib
        importlib.import_module({first!r})
        import marketframe
        marketframe.Ticker
        print(type(marketframe.download).__name__, marketframe.download.__name__)
    """)
    assert out == "function download"


def test_no_test_folder_is_a_package_named_like_a_standard_library_module() -> None:
    packages = {p.parent.name for p in (ROOT / "tests").glob("*/__init__.py")}
    assert sorted(packages & set(sys.stdlib_module_names)) == []
