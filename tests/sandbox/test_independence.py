"""The sandbox is an independent oracle: it imports nothing from the rest of marketframe, so a
shared mistake cannot make a wrong client and a wrong server agree (issue 14, item 5)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import marketframe.sandbox

SANDBOX = Path(marketframe.sandbox.__file__).parent


def _imports(path: Path) -> list[tuple[int, str]]:
    """(level, module) of every import in a file, at any depth (lazy imports too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(0, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or ""))
    return found


def test_no_sandbox_module_imports_the_package() -> None:
    files = sorted(SANDBOX.glob("*.py"))
    assert len(files) > 10
    for path in files:
        for level, module in _imports(path):
            assert level <= 1, f"{path.name} imports from outside the sandbox ({module})"
            assert level == 1 or module.split(".")[0] != "marketframe", (
                f"{path.name} imports {module}"
            )


def test_the_sandbox_runs_with_marketframe_unimportable(tmp_path: Path) -> None:
    """A copy of the sandbox under another name imports and answers a route while every
    ``marketframe`` import is made to fail."""
    shutil.copytree(SANDBOX, tmp_path / "oracle", ignore=shutil.ignore_patterns("__pycache__"))
    script = (
        "import sys, datetime as dt\n"
        "sys.modules['marketframe'] = None  # any import of it now fails\n"
        "from oracle import Query, Service\n"
        "from oracle._market import Market\n"
        "from oracle._routes import ROUTES\n"
        "now = dt.datetime(2026, 11, 20, 14, tzinfo=dt.timezone(dt.timedelta(hours=8)))\n"
        "svc = Service(Market(0), lambda: now)\n"
        "route = next(r for r in ROUTES if r.path == '/stock/intraday/quote/{symbol}')\n"
        "print(route.handler(svc, {'symbol': '2330'}, Query({}))['symbol'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('marketframe')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["2330", "['marketframe']"]
