"""The committed endpoint reference is generated from ENDPOINTS and is up to date."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from marketframe._gen.docs import DOC_PATH, ERRORS_PATH, render, render_errors
from marketframe.endpoints import ENDPOINTS


def test_endpoints_md_is_current() -> None:
    assert DOC_PATH.read_text(encoding="utf-8") == render(), (
        "docs/endpoints.md is stale: run python3 -m marketframe._gen"
    )


def test_every_endpoint_is_documented() -> None:
    text = DOC_PATH.read_text(encoding="utf-8")
    assert f"{len(ENDPOINTS)} endpoints." in text
    for name in ENDPOINTS:
        assert f"### `{name}`" in text


def test_errors_md_is_current_and_lists_the_status_errors() -> None:
    text = ERRORS_PATH.read_text(encoding="utf-8")
    assert text == render_errors(), "docs/errors.md is stale: run python3 -m marketframe._gen"
    for name in (
        "InvalidParams",
        "AuthenticationError",
        "PlanError",
        "SymbolNotFound",
        "RateLimited",
        "ServerError",
        "SchemaError",
        "BatchError",
        "StateMismatch",
    ):
        assert f".{name}`" in text


ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_build_strictly_and_every_page_is_in_the_nav(tmp_path) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    in_nav = {next(iter(item.values())) for item in config["nav"]}
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert pages == in_nav, f"pages missing from mkdocs.yml nav: {sorted(pages - in_nav)}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-q",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "endpoints" / "index.html").exists()
