"""The public API as a type checker sees it: real types, not ``Any``.

One mypy run (``mypy.api``) checks the public modules listed in pyproject's ``[tool.mypy]``
with ``--strict`` and a user-style snippet: a pandas call is a ``pandas.DataFrame``, a polars
one a ``polars.DataFrame``, and a misspelt endpoint or a wrong enum value is an error. The
generated stub of the endpoint tree is current and matches the run-time signatures.
"""

from __future__ import annotations

import ast
import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

import marketframe
from marketframe import Client
from marketframe._gen.stubs import STUB_PATH, render_tree
from marketframe.endpoints import ENDPOINTS

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = """\
from typing import assert_type

import pandas as pd
import polars as pl
import pyarrow as pa

import marketframe as mf

c = mf.Client.sandbox()
assert_type(c, mf.Client[pd.DataFrame])
assert_type(c.stock.intraday.quote("2330"), pd.DataFrame)
reveal_type(c.load("stock.intraday.quote", symbol="2330", backend="pandas"))
reveal_type(c.load("stock.intraday.quote", symbol="2330", backend="polars"))
reveal_type(c.load("stock.intraday.quote", symbol="2330", backend="arrow"))
assert_type(c.stock.intraday.quote(["2330", "2317"], backend="arrow"), pa.Table)
p = mf.Client("key", backend="polars", cache=False, retries=2)
assert_type(p.stock.historical.candles("2330", from_="2024-01-01", timeframe="W"), pl.DataFrame)
assert_type(p.stock.technical.rsi("2330", from_="2024-01-01", to="2024-03-01",
                                  timeframe="D", period=14), pl.DataFrame)
store = mf.Store("store")
assert_type(store.read("stock.historical.candles", "2330"), pd.DataFrame)
assert_type(store.read("stock.historical.candles", "2330", backend="polars"), pl.DataFrame)
with c.stream() as s:
    assert_type(s.read("trades"), pd.DataFrame)
    assert_type(s.read("trades", backend="arrow"), pa.Table)
report = mf.crosscheck(c, "2330", "rsi")
c.stock.intraday.qoute("2330")  # line 27: a misspelt endpoint
c.stock.intraday.quote("2330", type="odd")  # line 28: not an allowed value
mf.Client("key", backend="spark")  # line 29: not a backend
assert_type(mf.download(["2330", "2317"]), pd.DataFrame)
assert_type(mf.download("2330", "2024-01-01", backend="polars"), pl.DataFrame)
assert_type(mf.download("TSE", backend="arrow", progress=False), pa.Table)
"""


@pytest.mark.slow
def test_public_api_is_strict_clean_and_typed_for_users(tmp_path: Path) -> None:
    from mypy import api

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    snippet = tmp_path / "user_snippet.py"
    snippet.write_text(SNIPPET, encoding="utf-8")
    out, err, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            "--hide-error-context",
            "--show-error-codes",
            *[str(ROOT / f) for f in config["files"]],
            str(snippet),
        ]
    )
    assert err == ""
    lines = out.splitlines()
    reveals = [ln.split("Revealed type is ")[1] for ln in lines if "Revealed type" in ln]
    assert reveals[:2] == ['"pandas.core.frame.DataFrame"', '"polars.dataframe.frame.DataFrame"']
    assert re.fullmatch(r'"pyarrow\.[\w.]*\bTable"', reveals[2])  # where the stubs define it
    errors = [ln for ln in lines if ": error:" in ln]
    where = sorted({(Path(ln.split(":")[0]).name, int(ln.split(":")[1])) for ln in errors})
    assert where == [("user_snippet.py", 27), ("user_snippet.py", 28), ("user_snippet.py", 29)], out
    assert re.search(r'has no attribute "qoute".*attr-defined', out)
    assert status == 1


def test_the_tree_stub_is_current() -> None:
    assert STUB_PATH.read_text(encoding="utf-8") == render_tree(), (
        "marketframe/client/_tree.pyi is stale: run python3 -m marketframe._gen"
    )


def _stub_methods() -> dict[str, ast.FunctionDef]:
    """``"StockIntradayQuote"``-style keys: class name + method name -> first overload."""
    tree = ast.parse(STUB_PATH.read_text(encoding="utf-8"))
    out: dict[str, ast.FunctionDef] = {}
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef):
                    out.setdefault(f"{cls.name}.{fn.name}", fn)
    return out


def test_the_stub_matches_the_run_time_tree() -> None:
    """Each endpoint's stub method takes the run-time leaf's parameters, in the same way
    (by position or by name), plus ``refresh`` and ``backend``."""
    methods = _stub_methods()
    with Client("key", cache=False) as c:
        for name in ENDPOINTS:
            group, leaf = name.rsplit(".", 1)
            cls = "".join(part.title().replace("_", "") for part in group.split("."))
            fn = methods[f"{cls}.{leaf}"]
            node: Any = c
            for part in name.split("."):
                node = getattr(node, part)
            runtime = [
                (p.name, p.kind == p.KEYWORD_ONLY)
                for p in inspect.signature(node).parameters.values()
            ]
            stub = [(a.arg, False) for a in fn.args.args[1:]] + [
                (a.arg, True) for a in fn.args.kwonlyargs
            ]
            assert stub == [*runtime, ("refresh", True), ("backend", True)], name


def test_init_exports_are_explicit_and_agree_with_the_lazy_table() -> None:
    """``__all__`` is a sorted literal; every lazy name is imported under TYPE_CHECKING from
    the module the run time imports it from, so mypy and pyright see the real objects."""
    source = Path(marketframe.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    typed: dict[str, str] = {}
    literal_all: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                for alias in imp.names:
                    assert alias.asname == alias.name  # an explicit re-export
                    typed[alias.name] = imp.module or ""
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            literal_all = ast.literal_eval(node.value)
    assert typed == marketframe._LAZY
    assert literal_all == sorted(literal_all) == marketframe.__all__
    eager = {"__version__", "crosscheck", "download", "frames", "indicators", "options"}
    assert set(literal_all) == set(typed) | eager
    for name in literal_all:
        assert getattr(marketframe, name) is not None


@pytest.mark.parametrize("backend", ["pandas", "polars", "arrow"])
def test_the_typed_backends_are_what_the_calls_return(backend: str) -> None:
    """The stub's promise checked at run time: backend= picks the frame library."""
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    expected = {"pandas": pd.DataFrame, "polars": pl.DataFrame, "arrow": pa.Table}[backend]
    with Client.sandbox(backend=backend) as c:  # type: ignore[call-overload]
        assert type(c.stock.intraday.quote("2330")) is expected
        assert type(c.load("stock.intraday.quote", symbol="2330")) is expected


@pytest.mark.slow
def test_the_readme_calls_type_check_as_written(tmp_path: Path) -> None:
    """Every Python block of the README passes ``mypy --strict``, with the glossary's words
    (``symbols=``, ``start=``, ``end=``) where the service's names would also do, and the
    README's tree call is typed as a pandas frame (not Any)."""
    from mypy import api

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks and any("symbols=" in b for b in blocks)
    snippet = tmp_path / "readme_blocks.py"
    code = "\n".join(blocks)
    code += (
        "\nfrom typing import assert_type\nimport pandas as pd\nassert_type(daily, pd.DataFrame)\n"
    )
    snippet.write_text(code, encoding="utf-8")
    out, err, status = api.run(
        [
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--strict",
            "--no-error-summary",
            "--show-error-codes",
            str(ROOT / "marketframe" / "__init__.py"),
            str(snippet),
        ]
    )
    assert (status, err) == (0, ""), out
