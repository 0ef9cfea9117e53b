"""A store given no client finds its service by the rule ``download()`` and the commands
follow: the credential variables at ``MARKETFRAME_BASE_URL``; no key: a sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from marketframe.sandbox import Sandbox
from marketframe.store import Store

CANDLES = "stock.historical.candles"


def _synced(st: Store, sb: Sandbox) -> int:
    served = sb.requests_served
    st.sync(CANDLES, "2330", "2024-01-02", "2024-01-05")
    return sb.requests_served - served


def test_the_key_variable_goes_to_the_base_url_variable(
    tmp_path: Path, sb: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MARKETFRAME_API_KEY", sb.api_key)
    monkeypatch.setenv("MARKETFRAME_BASE_URL", sb.base_url)
    with Store(tmp_path / "s") as st:
        assert st.client.base_url.startswith(sb.base_url.rstrip("/"))
        assert _synced(st, sb) > 0


def test_a_key_given_goes_to_the_base_url_variable_quietly(
    tmp_path: Path, sb: Sandbox, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for var in ("MARKETFRAME_API_KEY", "MARKETFRAME_BEARER_TOKEN", "MARKETFRAME_SDK_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MARKETFRAME_BASE_URL", sb.base_url)
    with Store(tmp_path / "s", api_key=sb.api_key) as st:
        assert st.client.base_url.startswith(sb.base_url.rstrip("/"))
        assert _synced(st, sb) > 0
    assert capsys.readouterr().err == ""  # the caller chose the key: nothing to announce


def test_a_base_url_without_a_key_is_that_sandbox(
    tmp_path: Path, sb: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("MARKETFRAME_API_KEY", "MARKETFRAME_BEARER_TOKEN", "MARKETFRAME_SDK_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    with Store(tmp_path / "s", base_url=sb.base_url) as st:
        assert _synced(st, sb) > 0
