"""The first block of each page a new user opens runs with no key at all (the README
promises that everything runs without one): no MARKETFRAME_* variable, a fresh directory."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from .test_doc_blocks import ROOT, _run_python, _runnable

PAGES = ["README.md", "docs/loaders.md", "docs/streaming.md", "docs/store.md"]


@pytest.mark.parametrize("page", PAGES)
def test_the_first_block_runs_without_a_key(
    page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for key in list(os.environ):
        if key.startswith("MARKETFRAME_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("MPLBACKEND", "agg")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    first = next(b for b in _runnable(ROOT / page) if b.lang == "python")
    _run_python(first, {"__name__": "__doc__"})


def test_no_runnable_block_needs_a_key() -> None:
    """``Client()`` (or a literal key) in a block that runs would raise for a new user: the
    blocks use Client.sandbox() or download()'s fallback, and say how to use a real key in
    a comment."""
    bare = re.compile(r"^[^#]*\bClient\((\s*\)|\s*[\"'](?!.*base_url=))", re.M)
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in _runnable(page):
            if block.lang == "python":
                found = bare.search(block.code)
                assert not found, f"{block.page}:{block.line}: {found and found.group(0)}"


def test_the_growth_chart_of_notebook_02_uses_adjusted_prices(
    sandbox: object, api_key: str, tmp_path: Path
) -> None:
    """Raw closes show 0050's 4-for-1 split in 2025 as a 75% crash; the chart reads them
    adjusted, and adjusted they have no such day."""
    import json

    from marketframe import Client, Store

    nb = json.loads((ROOT / "notebooks" / "02_store_and_export.ipynb").read_text())
    cell = next("".join(c["source"]) for c in nb["cells"] if "Growth of 1" in "".join(c["source"]))
    assert 'adjust="all"' in cell
    with Client(api_key, base_url=sandbox.base_url, cache=False) as client:  # type: ignore[attr-defined]
        store = Store(tmp_path / "s", client)
        store.sync("stock.historical.candles", ["0050"], start="2024-06-01", end="2025-12-31")
        raw = store.read("stock.historical.candles", "0050", start="2024-06-01", end="2025-12-31")
        adj = store.read(
            "stock.historical.candles", "0050", start="2024-06-01", end="2025-12-31", adjust="all"
        )
    assert raw["close"].pct_change().min() < -0.7
    assert adj["close"].pct_change().min() > -0.15
