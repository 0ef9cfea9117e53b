"""One vocabulary (docs/glossary.md): the glossary's words work on every call, the wire's and
the SDK's names keep working, and an earlier marketframe-only name warns."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields
from typing import Any

import pytest

from marketframe import Client, InvalidParams
from marketframe.convert import BACKENDS
from marketframe.stream import StreamStats

NOW_RANGE = {"start": "2026-11-02", "end": "2026-11-06"}


@pytest.fixture(scope="module")
def client_backend() -> str:
    return "arrow"


def test_start_end_are_the_sdk_from_to_on_client(client: Client) -> None:
    new = client.stock.historical.candles(symbol="2330", **NOW_RANGE)
    old = client.stock.historical.candles(symbol="2330", from_="2026-11-02", to="2026-11-06")
    assert new.num_rows == 5 and new.equals(old)


def test_start_end_are_start_date_end_date_of_corporate_actions(client: Client) -> None:
    name = "stock.corporate_actions.dividends"
    new = client.load(name, start="2025-01-01", end="2025-06-30")
    old = client.load(name, start_date="2025-01-01", end_date="2025-06-30")
    assert new.equals(old)


def test_symbols_and_odd_lot_are_the_wire_symbol_list_and_type_oddlot(client: Client) -> None:
    new = client.load("stock.intraday.trades", symbols=["2330", "2317"], odd_lot=True, limit=3)
    old = client.load("stock.intraday.trades", symbol=["2330", "2317"], type="oddlot", limit=3)
    assert new.equals(old) and set(new.column("symbol").to_pylist()) == {"2330", "2317"}
    whole = client.load("stock.intraday.trades", symbol="2330", odd_lot=False, limit=3)
    assert whole.equals(client.load("stock.intraday.trades", symbol="2330", limit=3))


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"start": "2026-11-02", "from_": "2026-11-02"}, "start"),
        ({"symbols": "2330", "symbol": "2317"}, "symbols"),
    ],
)
def test_both_spellings_at_once_is_refused_before_any_request(
    sandbox: Any, client: Client, params: dict[str, Any], named: str
) -> None:
    served = sandbox.requests_served
    params.setdefault("symbol", "2330")
    with pytest.raises(InvalidParams, match=f"{named}.*given twice"):
        client.load("stock.historical.candles", **params)
    with pytest.raises(InvalidParams, match="odd_lot.*must be a bool"):
        client.load("stock.intraday.trades", symbol="2330", odd_lot="yes")
    with pytest.raises(InvalidParams, match="odd_lot.*not a parameter"):
        client.load("stock.historical.candles", symbol="2330", odd_lot=True)
    assert sandbox.requests_served == served


def test_client_and_stream_counters_have_one_shape(client: Client) -> None:
    client.stock.intraday.quote(symbol="2330")
    stats = client.stats()
    assert stats.requests >= 1 and stats.as_dict()["requests"] == stats.requests
    assert StreamStats().as_dict() == {f.name: 0 for f in fields(StreamStats)}
    with pytest.warns(DeprecationWarning, match=r"client\.stats\(\)\.requests"):
        assert stats["requests"] == stats.requests


def test_backends_are_declared_once() -> None:
    import marketframe.client
    import marketframe.store

    assert marketframe.client.BACKENDS is BACKENDS
    assert not hasattr(marketframe.store, "_BACKENDS")
    with pytest.raises(InvalidParams, match="backend.*pandas, polars, arrow"):
        Client(backend="numpy", api_key="k")


def test_load_command_takes_start_end_and_symbols(sandbox: Any, api_key: str) -> None:
    env = {"MARKETFRAME_API_KEY": api_key, "PATH": ""}
    cmd = [
        sys.executable,
        "-m",
        "marketframe",
        "load",
        "stock.historical.candles",
        "--symbols",
        "2330",
        "--start",
        "2026-11-02",
        "--end",
        "2026-11-06",
        "--fields",
        "close",
        "--base-url",
        sandbox.base_url,
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "[5 rows" in done.stdout
    assert "2026-11-02" in done.stdout and "2026-11-06" in done.stdout
