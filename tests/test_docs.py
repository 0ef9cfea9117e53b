"""The committed endpoint reference is generated from ENDPOINTS and is up to date."""

from __future__ import annotations

from marketframe._docgen import DOC_PATH, render
from marketframe.endpoints import ENDPOINTS


def test_endpoints_md_is_current() -> None:
    assert DOC_PATH.read_text(encoding="utf-8") == render(), (
        "docs/endpoints.md is stale: run python3 -m marketframe._docgen"
    )


def test_every_endpoint_is_documented() -> None:
    text = DOC_PATH.read_text(encoding="utf-8")
    assert len(ENDPOINTS) == 26
    for name in ENDPOINTS:
        assert f"### `{name}`" in text
