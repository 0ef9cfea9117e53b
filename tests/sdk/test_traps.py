"""The traps the spec records (sdk-parity.md, global facts and §6, §7), each tested both on the
sandbox (it behaves like the service) and on marketframe's client (it avoids the trap)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import requests

from marketframe import Client, InvalidParams, SymbolNotFound
from marketframe.endpoints import encode, get, validate

SPREAD = "TXFL6/A7"  # TXF December 2026 against January 2027 (the sandbox's now: 2026-11-20)


@pytest.fixture
def paths(sandbox: Any) -> Iterator[list[str]]:
    """The paths (with their queries) the sandbox receives during the test."""
    stats = sandbox.stats
    stats.paths.clear()
    stats.record_paths = True
    try:
        yield stats.paths
    finally:
        stats.record_paths = False
        stats.paths.clear()


def _get(sandbox: Any, path: str) -> requests.Response:
    return requests.get(sandbox.base_url + path, headers={"X-API-KEY": sandbox.api_key}, timeout=30)


# --- (a) symbols with '/' or '!' are percent-encoded in the one place paths are built --------


def test_path_values_are_percent_encoded() -> None:
    ep = get("futopt.intraday.quote")
    for symbol, wire in (("MXFA6/C6", "MXFA6%2FC6"), ("TXF1!", "TXF1%21")):
        assert encode(ep, validate(ep, {"symbol": symbol}))[0] == f"/futopt/intraday/quote/{wire}"
    for bad in ("../x", "TXF/../x", "TXF//A7", "TXF/", "TXF A7"):
        with pytest.raises(InvalidParams, match="not a valid symbol"):
            validate(ep, {"symbol": bad})


def test_the_sandbox_serves_a_spread_only_percent_encoded(sandbox: Any) -> None:
    ok = _get(sandbox, "/futopt/intraday/quote/TXFL6%2FA7")
    assert ok.status_code == 200 and ok.json()["symbol"] == SPREAD
    assert _get(sandbox, "/futopt/intraday/quote/TXFL6/A7").status_code == 404  # unencoded


def test_a_spread_contract_loads_on_futopt_intraday_endpoints(
    client: Client, sandbox: Any, paths: list[str]
) -> None:
    quote = client.futopt.intraday.quote(SPREAD)
    trades = client.futopt.intraday.trades(SPREAD)
    candles = client.futopt.intraday.candles(SPREAD)
    assert quote["symbol"][0] == SPREAD and len(trades) > 0 and len(candles) > 0
    assert any(p.startswith("/marketdata/v1.0/futopt/intraday/trades/TXFL6%2FA7") for p in paths)
    # the spread's prices are far minus near: its close is the legs' difference
    near = client.futopt.intraday.quote("TXFL6")["close_price"][0]
    far = client.futopt.intraday.quote("TXFA7")["close_price"][0]
    assert quote["close_price"][0] == pytest.approx(far - near)
    with pytest.raises(SymbolNotFound):
        client.futopt.intraday.quote("TXF1!")  # an alias the intraday endpoints do not know
    assert any(p.endswith("/futopt/intraday/quote/TXF1%21") for p in paths)


# --- (b) the futopt list endpoints want session=AFTERHOURS upper case -----------------------


@pytest.mark.parametrize(
    "path", ["/futopt/intraday/tickers?type=FUTURE", "/futopt/intraday/products?type=FUTURE"]
)
def test_the_sandbox_returns_no_rows_for_a_lower_case_session(sandbox: Any, path: str) -> None:
    upper = _get(sandbox, path + "&session=AFTERHOURS")
    lower = _get(sandbox, path + "&session=afterhours")
    assert upper.status_code == lower.status_code == 200
    assert len(upper.json()["data"]) > 0 and lower.json()["data"] == []  # silently empty
    assert _get(sandbox, path + "&session=night").status_code == 400


@pytest.mark.parametrize("name", ["futopt.intraday.tickers", "futopt.intraday.products"])
@pytest.mark.parametrize("written", ["afterhours", "AfterHours", "AFTERHOURS"])
def test_the_client_sends_the_list_session_upper_case(
    client: Client, paths: list[str], name: str, written: str
) -> None:
    df = client.load(name, type="FUTURE", session=written)
    assert len(df) > 0
    assert paths and all("session=AFTERHOURS" in p for p in paths)


def test_single_contract_endpoints_send_lower_case(client: Client, paths: list[str]) -> None:
    df = client.futopt.intraday.quote("TXFL6", session="AFTERHOURS")
    assert len(df) == 1 and paths[-1].endswith("?session=afterhours")
    with pytest.raises(InvalidParams, match="REGULAR, AFTERHOURS"):
        client.futopt.intraday.tickers(type="FUTURE", session="night")


# --- (c) a base_url that ends in a version segment -------------------------------------------


def test_base_url_with_or_without_the_version(sandbox: Any, paths: list[str]) -> None:
    origin = sandbox.origin
    for given in (
        origin + "/marketdata",
        origin + "/marketdata/",
        sandbox.base_url,
        sandbox.base_url + "/",
    ):
        with Client(sandbox.api_key, base_url=given, cache=False) as c:
            assert c.base_url == origin + "/marketdata/v1.0"
            assert c.stock.intraday.quote("2330")["symbol"][0] == "2330"
    assert paths and all(p.startswith("/marketdata/v1.0/stock/") for p in paths)
    assert not any("/v1.0/v1.0" in p for p in paths)


@pytest.mark.parametrize(
    ("given", "fix"),
    [
        ("https://api.fugle.tw/marketdata/v1.0/v1.0", "'https://api.fugle.tw/marketdata/v1.0'"),
        (
            "https://api.fugle.tw/marketdata/v1.0/stock/intraday/quote/2330",
            "'https://api.fugle.tw/marketdata/v1.0'",
        ),
        (
            "https://api.fugle.tw/marketdata/v1.1",
            "'https://api.fugle.tw/marketdata/v1.0' or 'https://api.fugle.tw/marketdata'",
        ),
    ],
)
def test_a_copied_url_is_refused_with_the_fix(given: str, fix: str) -> None:
    with pytest.raises(InvalidParams) as info:
        Client("k", base_url=given, cache=False)
    assert fix in str(info.value)
