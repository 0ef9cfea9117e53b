"""The docs are executable: every Python block of README.md and docs/*.md runs against the
sandbox, and so does every `marketframe ...` command of their bash blocks.

The blocks of one page run in document order, Python blocks in one namespace like the cells
of a notebook, commands as subprocesses, in one scratch directory, with
``MARKETFRAME_API_KEY`` / ``MARKETFRAME_BASE_URL`` pointing at the session sandbox. A block
that cannot run says why in an HTML comment on the line before its fence, exactly
``<!-- not run: REASON -->``; nothing else skips a block.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # end to end: `pytest -m 'not slow'` skips it

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NOT_RUN = re.compile(r"^<!-- not run: (?P<why>\S.*?) -->$")
FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
SHELL = ("bash", "sh", "console", "shell")
COMMAND_TIMEOUT = 240  # seconds; a command that hangs fails instead of stalling the suite


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    not_run: str | None  # the reason given by the marker, if any


def blocks(path: Path) -> Iterator[Block]:
    """The fenced code blocks of a Markdown page, with their not-run markers."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, fence = i, m["fence"]
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(fence)), len(lines))
        prev = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        marker = NOT_RUN.match(prev)
        yield Block(
            path.name,
            start + 1,
            m["lang"].lower(),
            "\n".join(lines[i + 1 : end]) + "\n",
            marker["why"] if marker else None,
        )
        i = end + 1


def commands(code: str) -> list[str]:
    """The `marketframe ...` commands of a shell block (prompts, comments and \\-continuations
    handled); other commands (pip, export, curl) are not ours to run."""
    out = []
    for logical in re.sub(r"\\\n\s*", " ", code).splitlines():
        text = logical.strip().removeprefix("$ ")
        words = shlex.split(text, comments=True) if text else []
        if words and words[0] == "marketframe":
            out.append(shlex.join(words))
    return out


def _page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_markers_are_well_formed() -> None:
    """A marker that the pattern does not match would silently run nothing else: refuse it."""
    for page in PAGES:
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if "not run" in line and line.strip().startswith("<!--"):
                assert NOT_RUN.match(line.strip()), f"{page.name}:{n}: malformed marker {line!r}"


def test_the_pages_have_blocks_to_run() -> None:
    runnable = [
        b
        for p in PAGES
        for b in blocks(p)
        if b.not_run is None and (b.lang == "python" or (b.lang in SHELL and commands(b.code)))
    ]
    assert len(runnable) >= 15, runnable


@pytest.fixture
def docs_env(
    sandbox: Any, api_key: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> dict[str, str]:
    """Run in a scratch directory with the MARKETFRAME_* variables naming the session sandbox."""
    monkeypatch.chdir(tmp_path)
    for key in list(os.environ):
        if key.startswith("MARKETFRAME_"):
            monkeypatch.delenv(key)
    env = {
        "MARKETFRAME_API_KEY": api_key,
        "MARKETFRAME_BASE_URL": sandbox.base_url,
        "MARKETFRAME_HOME": str(tmp_path / "home"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MPLBACKEND", "agg")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # `~/...` in the docs stays in here
    return env


def _run_python(block: Block, namespace: dict[str, Any]) -> None:
    code = compile(
        block.code, f"{block.page}:{block.line}", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    )
    if code.co_flags & inspect.CO_COROUTINE:  # a block with top-level `await` / `async with`
        asyncio.run(eval(code, namespace))  # noqa: S307 - the docs' own code
    else:
        exec(code, namespace)  # noqa: S102 - the docs' own code


def _runnable(page: Path) -> list[Block]:
    return [
        b
        for b in blocks(page)
        if b.not_run is None and (b.lang == "python" or (b.lang in SHELL and commands(b.code)))
    ]


@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p)], ids=_page_id)
def test_page_runs(page: Path, docs_env: dict[str, str]) -> None:
    """Every runnable block of the page, in document order, in one scratch directory: Python
    blocks share one namespace, and a command may use what an earlier block made (a store)."""
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    namespace: dict[str, Any] = {"__name__": f"docs:{page.name}"}
    try:
        for block in _runnable(page):
            if block.lang == "python":
                try:
                    _run_python(block, namespace)
                except Exception as exc:
                    raise AssertionError(
                        f"{block.page}:{block.line}: the block fails: "
                        f"{type(exc).__name__}: {exc}\n{block.code}"
                    ) from exc
                continue
            for command in commands(block.code):
                done = run_command(command)
                assert done.returncode == 0, f"{block.page}:{block.line}: {command}\n{done.stderr}"
                assert "Traceback" not in done.stderr, done.stderr
    finally:
        plt.close("all")


def run_command(
    command: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a documented command with this checkout's package (``marketframe`` is run as
    ``python -m marketframe``, ``python``/``python3`` as this interpreter)."""
    words = shlex.split(command)
    if words[0] == "marketframe":
        words = [sys.executable, "-m", "marketframe", *words[1:]]
    elif words[0] in ("python", "python3"):
        words = [sys.executable, *words[1:]]
    full = dict(os.environ if env is None else env)
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), full.get("PYTHONPATH")]))
    return subprocess.run(
        words, capture_output=True, text=True, env=full, cwd=cwd, timeout=COMMAND_TIMEOUT
    )


def _installed_by_the_set_up() -> set[str]:
    """The import names of what README's set-up installs: marketframe's requirements and
    those of the extras ``[all]`` names."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    reqs = list(project["dependencies"])
    for req in extras["all"]:  # "marketframe[polars,academy,...]"
        for extra in req.partition("[")[2].rstrip("]").split(","):
            reqs += extras[extra.strip()]
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower().replace("-", "_") for r in reqs}


def test_a_page_says_how_to_install_what_its_blocks_import_beyond_the_set_up() -> None:
    """A reader who ran README's set-up (``.[all]``) and copied docs/compute.md's DuckDB block
    got a bare ModuleNotFoundError: a package none of marketframe's requirements installs is
    named with ``pip install`` on the page that imports it."""
    installed = _installed_by_the_set_up() | set(sys.stdlib_module_names) | {"marketframe"}
    missing = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for b in blocks(page):
            if b.lang != "python" or b.not_run is not None:
                continue
            flags = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            tree = compile(b.code, f"{b.page}:{b.line}", "exec", flags=flags)
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    names = [node.module]
                else:
                    continue
                for name in (n.split(".")[0] for n in names):
                    if name not in installed and f"pip install {name}" not in text:
                        missing.append(f"{b.page}:{b.line}: {name}")
    assert not missing, missing
