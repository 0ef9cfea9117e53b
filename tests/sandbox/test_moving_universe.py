"""The sandbox's universe moves: a listing, a delisting, a suspension, an ETF that lists and a
board change, each seen alike by every endpoint as of the sandbox's ``now``
(``marketframe/sandbox/_universe.py``, ``LIFECYCLE``)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from marketframe.exceptions import SymbolNotFound


def at(day: str) -> str:
    return f"{day}T14:00:00+08:00"  # after the close: the day's bars are final


def listed(client: Any, exchange: str = "TWSE", **flags: Any) -> set[str]:
    return set(client.stock.intraday.tickers("EQUITY", exchange=exchange, **flags).symbol)


def bar_days(client: Any, symbol: str, start: str, end: str) -> list[dt.date]:
    got = client.stock.historical.candles(symbol, start=start, end=end)
    return [d.date() for d in got.date]


def status(client: Any, symbol: str) -> str:
    return str(client.stock.intraday.ticker(symbol).security_status.iloc[0])


def test_a_stock_is_unknown_before_its_listing_and_trades_from_its_listing_day(
    make_sandbox: Any,
) -> None:
    with make_sandbox(now=at("2024-03-15")) as (sb, client):
        assert "6901" not in listed(client)
        with pytest.raises(SymbolNotFound):
            client.stock.intraday.ticker("6901")
        with pytest.raises(SymbolNotFound):
            client.stock.historical.candles("6901")
        sb.set_now(at("2024-03-18"))
        assert "6901" in listed(client)
        assert status(client, "6901") == "NORMAL"
        assert bar_days(client, "6901", "2024-01-02", "2024-03-20")[0] == dt.date(2024, 3, 18)
        assert len(client.stock.intraday.trades("6901", limit=5)) == 5


def test_a_delisted_stock_is_terminated_its_candles_end_and_it_leaves_the_list(
    make_sandbox: Any,
) -> None:
    with make_sandbox(now=at("2025-08-29")) as (sb, client):
        assert "1907" in listed(client)
        assert status(client, "1907") == "NORMAL"
        sb.set_now(at("2025-09-01"))
        assert "1907" not in listed(client)
        assert status(client, "1907") == "TERMINATED"
        assert bar_days(client, "1907", "2025-08-01", "2025-09-30")[-1] == dt.date(2025, 8, 29)
        assert client.stock.intraday.candles("1907").empty
        assert client.stock.intraday.trades("1907").empty
        assert client.stock.intraday.quote("1907").close_price.isna().all()
        sb.set_now(at("2026-11-20"))  # long after: still terminated, history still served
        assert status(client, "1907") == "TERMINATED"
        days = bar_days(client, "1907", "2025-06-01", "2025-12-31")
        assert days and days[-1] == dt.date(2025, 8, 29)


def test_a_suspended_stock_stays_listed_without_trades_until_it_resumes(
    make_sandbox: Any,
) -> None:
    with make_sandbox(now=at("2025-03-05")) as (sb, client):
        assert "2908" in listed(client)
        assert "2908" in listed(client, isHalted=True)
        assert status(client, "2908") == "SUSPENDED"
        assert client.stock.intraday.trades("2908").empty
        sb.set_now(at("2025-04-15"))
        assert status(client, "2908") == "NORMAL"
        assert "2908" not in listed(client, isHalted=True)
        days = bar_days(client, "2908", "2025-02-20", "2025-04-20")
        assert dt.date(2025, 2, 27) in days and dt.date(2025, 4, 15) in days
        assert not [d for d in days if dt.date(2025, 3, 3) <= d <= dt.date(2025, 4, 14)]


def test_an_etf_lists_mid_history(make_sandbox: Any) -> None:
    with make_sandbox(now=at("2025-02-07")) as (sb, client):
        assert "00991" not in listed(client)
        sb.set_now(at("2025-02-10"))
        assert "00991" in listed(client)
        ticker = client.stock.intraday.ticker("00991")
        assert ticker.security_type.iloc[0] == "24"
        assert bar_days(client, "00991", "2025-01-01", "2025-02-28") == [dt.date(2025, 2, 10)]


def test_a_board_change_moves_the_symbol_between_the_exchanges_lists(make_sandbox: Any) -> None:
    with make_sandbox(now=at("2024-09-20")) as (sb, client):
        assert "6905" in listed(client, "TPEx") and "6905" not in listed(client, "TWSE")
        before = client.stock.intraday.ticker("6905")
        assert (before.exchange.iloc[0], before.market.iloc[0]) == ("TPEx", "OTC")
        sb.set_now(at("2024-09-23"))
        assert "6905" in listed(client, "TWSE") and "6905" not in listed(client, "TPEx")
        after = client.stock.intraday.quote("6905")
        assert (after.exchange.iloc[0], after.market.iloc[0]) == ("TWSE", "TSE")
        # the same symbol, one unbroken history across the move
        days = bar_days(client, "6905", "2024-09-16", "2024-09-27")
        assert dt.date(2024, 9, 20) in days and dt.date(2024, 9, 23) in days
