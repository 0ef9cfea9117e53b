"""The same seed, symbol and date always give the same data; another seed gives other data."""

from __future__ import annotations

import requests

from marketframe.sandbox import Sandbox

PATHS = [
    "stock/intraday/trades/2330?limit=500",
    "stock/intraday/quote/7705",
    "stock/historical/candles/2454?from=2013-01-01&to=2013-12-31&fields=open,close,turnover",
    "stock/technical/macd/0050?from=2026-01-01&to=2026-11-20&timeframe=D&fast=12&slow=26&signal=9",
    "futopt/intraday/trades/TXO22500L6?limit=100",
    "stock/corporate-actions/diviends?start_date=2020-01-01&end_date=2020-12-31",
]


def bodies(seed: int, order: list[str]) -> dict[str, bytes]:
    with Sandbox(seed=seed, now="2026-11-20T14:00:00+08:00", rate_limit=None) as sb:
        return {
            p: requests.get(
                f"{sb.base_url}/{p}", headers={"X-API-KEY": sb.api_key}, timeout=30
            ).content
            for p in order
        }


def test_same_seed_same_bytes_in_any_order() -> None:
    a = bodies(5, PATHS)
    b = bodies(5, PATHS[::-1])
    assert a == b


def test_other_seed_other_market() -> None:
    a = bodies(5, PATHS[:3])
    c = bodies(6, PATHS[:3])
    assert all(a[p] != c[p] for p in PATHS[:3])
