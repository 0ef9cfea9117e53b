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
