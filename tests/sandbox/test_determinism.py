"""The same seed, symbol and date always give the same data; another seed gives other data."""

from __future__ import annotations

from datetime import date

import numpy as np
import requests

from marketframe.sandbox import Sandbox
from marketframe.sandbox._market import Market
from marketframe.sandbox._quote import BookSizes, book

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


def test_a_book_s_sizes_depend_on_its_update_alone() -> None:
    """A book's sizes are a function of the seed, symbol, date and update serial: the same
    for one update computed alone (a REST quote) as within a whole day's (a stream channel),
    in any order, in a fresh market; another seed gives others."""
    d = date(2026, 11, 20)
    market = Market(seed=5)
    day = market.day("2330", d)
    serials = np.concatenate((day.serial, day.book_serial))
    whole = BookSizes(day, market.rng).of(serials)
    assert whole.shape == (len(serials), 10)
    assert whole.min() >= 1 and whole.max() < max(2, int(day.mean_size * 4))
    assert (BookSizes(day, market.rng).of(serials[::-1])[::-1] == whole).all()
    fresh = Market(seed=5)
    alone = fresh.day("2330", d)
    for i in (0, 1, len(day.serial) - 1, len(day.serial), len(serials) - 1):
        assert list(BookSizes(alone, fresh.rng)(int(serials[i]))) == whole[i].tolist()
    # the quote's book (one update, no day's sizes given) has the day's sizes
    n = len(day.serial) // 2
    bids, asks = book(alone, n, fresh.rng)
    assert [lv["size"] for lv in bids + asks] == whole[n - 1].tolist()[: len(bids + asks)]
    other = Market(seed=6)
    assert (BookSizes(other.day("2330", d), other.rng).of(serials) != whole).mean() > 0.5
