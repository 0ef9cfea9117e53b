"""The tree is formatted and lint-clean as `ruff format` and `ruff check` see it, and no
module has grown past the line budget."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(exe).exists():
        pytest.fail("ruff is a test dependency: pip install -e '.[test]'")
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_ruff_format_check() -> None:
    proc = _ruff("format", "--check", ".")
    assert proc.returncode == 0, f"run `ruff format .`:\n{proc.stdout}{proc.stderr}"


def test_ruff_check() -> None:
    proc = _ruff("check", ".")
    assert proc.returncode == 0, f"run `ruff check .`:\n{proc.stdout}{proc.stderr}"


#: a module past this many lines usually hides a seam to split along (docs/contributing.md)
MAX_LINES = 400


def test_every_module_is_under_the_line_budget() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in sorted((ROOT / "marketframe").rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) >= MAX_LINES
    }
    assert not long, f"split along a seam whose imports run one way: {long}"
