"""The sandbox's internal heatmap agrees with its other snapshots and with itself."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
import requests

from marketframe import Client, InvalidParams, SymbolNotFound


@pytest.mark.parametrize("index,board", [("IX0001", "TSE"), ("IX0043", "OTC")])
def test_index_first_then_its_boards_equities_weights_sum_to_100(
    client: Client, index: str, board: str
) -> None:
    heat = client.stock.snapshot.heatmap(index)
    assert heat["type"].iloc[0] == "INDEX" and heat["symbol"].iloc[0] == index
    members = heat.iloc[1:]
    assert (members["type"] == "EQUITY").all() and len(members) > 1
    board_rows = client.stock.snapshot.quotes(board)
    assert set(members["symbol"]) == set(board_rows["symbol"])
    assert members["trade_value_weight"].sum() == pytest.approx(100, abs=1e-9)
    assert members["market_value_weight"].sum() == pytest.approx(100, abs=0.01)
    assert members["market_value_weight"].is_monotonic_decreasing
    assert heat["trade_volume"].iloc[0] == members["trade_volume"].sum()
    assert heat["trade_value"].iloc[0] == members["trade_value"].sum()


def test_constituents_agree_with_the_board_snapshot_and_the_index_quote(client: Client) -> None:
    heat = client.stock.snapshot.heatmap("IX0001").set_index("symbol")
    board = client.stock.snapshot.quotes("TSE").set_index("symbol")
    cols = [
        "open_price",
        "high_price",
        "low_price",
        "close_price",
        "change",
        "trade_volume",
        "trade_value",
    ]
    pd.testing.assert_frame_equal(heat.loc[board.index, cols], board[cols], check_names=False)
    quote = client.stock.intraday.quote("IX0001").iloc[0]
    assert heat.loc["IX0001", "close_price"] == quote["close_price"]
    assert heat.loc["IX0001", "previous_close"] == quote["previous_close"]


def test_time_takes_an_earlier_snapshot(client: Client) -> None:
    late = client.stock.snapshot.heatmap("IX0001").set_index("symbol")
    early = client.stock.snapshot.heatmap("IX0001", time="093000").set_index("symbol")
    assert early["time"].iloc[0] == pd.Timestamp("2026-11-20 09:30:00", tz="Asia/Taipei")
    assert (early["last_updated"] <= early["time"].iloc[0]).all()
    assert (early["trade_volume"] <= late["trade_volume"].reindex(early.index)).all()
    assert early["trade_volume"].sum() < late["trade_volume"].sum()


def test_period_change_is_since_the_close_before_the_period(client: Client) -> None:
    heat = client.stock.snapshot.heatmap("IX0001", period="1m").set_index("symbol")
    assert heat["period"].iloc[0] == "1m" and heat["row_date"].isna().all()
    assert heat["time"].isna().all()
    assert (heat["change"] == (heat["close_price"] - heat["previous_close"]).round(2)).all()
    bars = client.stock.historical.candles("2330", start="2026-10-01", end="2026-10-20")
    base = bars[bars["date"] <= "2026-10-20"]["close"].iloc[-1]
    assert heat.loc["2330", "previous_close"] == base


def test_mistakes_fail_before_any_request(client: Client) -> None:
    before = client.stats().requests
    with pytest.raises(InvalidParams, match="1w, 1m, 3m, 6m, 1y, ytd"):
        client.stock.snapshot.heatmap("IX0001", period="1M")
    with pytest.raises(InvalidParams, match="an index code such as 'IX0001'"):
        client.stock.snapshot.heatmap("2330")
    with pytest.raises(InvalidParams, match="HHmmss"):
        client.stock.snapshot.heatmap("IX0001", time="9:30")
    assert client.stats().requests == before


def test_the_service_answers_a_stock_code_or_a_bad_time_as_the_real_one(
    sandbox: Any, api_key: str
) -> None:
    url = f"{sandbox.base_url}/stock/snapshot/heatmap"
    head = {"X-API-KEY": api_key}
    assert requests.get(f"{url}/2330", headers=head, timeout=30).status_code == 404
    assert requests.get(f"{url}/TSE", headers=head, timeout=30).status_code == 404
    got = requests.get(f"{url}/IX0001", params={"time": "9:30"}, headers=head, timeout=30)
    assert got.status_code == 400 and "HHmmss" in got.json()["message"]
    with (
        Client(api_key, base_url=sandbox.base_url, cache=False) as c,
        pytest.raises(SymbolNotFound),
    ):  # an index code the service does not have
        c.stock.snapshot.heatmap("IX9999")
