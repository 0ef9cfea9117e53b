"""The synthetic market moves like Taiwan's, seen from outside over HTTP: an index made of its
stocks, an ETF made of its holdings, the real market-wide days, and disposition periods that
begin and end (docs/sandbox.md, "The synthetic market")."""

from __future__ import annotations

import itertools
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import pytest
import requests

from marketframe.sandbox import Sandbox

TPE = ZoneInfo("Asia/Taipei")
NOW = "2026-11-20T14:00:00+08:00"
#: five yearly windows (a request must span less than a year)
YEARS = [(date(y, 11, 21), date(y + 1, 11, 20)) for y in range(2021, 2026)]


class Api:
    def __init__(self, sb: Sandbox) -> None:
        self.sb = sb
        self.s = requests.Session()
        self.s.headers["X-API-KEY"] = sb.keys["advanced"]

    def __call__(self, path: str, **params) -> dict:
        r = self.s.get(f"{self.sb.base_url}/{path}", params=params, timeout=60)
        assert r.status_code == 200, (path, r.text)
        return r.json()

    def returns(self, symbol: str, windows=YEARS) -> dict[str, float]:
        """Daily returns from the reference price (historical candles' ``change``)."""
        out = {}
        for a, b in windows:
            rows = self(
                f"stock/historical/candles/{symbol}",
                **{"from": a.isoformat(), "to": b.isoformat(), "sort": "asc"},
            )["data"]
            out.update({r["date"]: r["change"] / (r["close"] - r["change"]) for r in rows})
        return out

    def at(self, d: date, hour: int = 14) -> None:
        self.sb.set_now(datetime(d.year, d.month, d.day, hour, tzinfo=TPE))


def corr(x: dict[str, float], y: dict[str, float]) -> float:
    days = sorted(set(x) & set(y))
    return float(np.corrcoef([x[d] for d in days], [y[d] for d in days])[0, 1])


@pytest.fixture(scope="module")
def api():
    with Sandbox(seed=7, now=NOW, rate_limit=None) as sb:
        yield Api(sb)


# --- an index made of its stocks, an ETF made of its holdings ------------------------------


def test_the_taiex_moves_with_its_largest_component_and_0050_with_the_taiex(api) -> None:
    """TSMC is about 43 % of the real TAIEX: its daily returns and the index's are
    correlated at 0.85 or more; 0050, which holds the index's large caps, at 0.95 or more."""
    taiex = api.returns("IX0001")
    assert len(taiex) > 1200
    assert 0.006 < float(np.std(list(taiex.values()))) < 0.016  # about 1 %, as the real one
    assert corr(api.returns("2330"), taiex) >= 0.85
    assert corr(api.returns("0050"), taiex) >= 0.95
    # and the index does not go its own way: no day on which 2330 falls 9 % and it is flat
    tsmc = api.returns("2330")
    assert not [d for d in tsmc if tsmc[d] < -0.09 and abs(taiex[d]) < 0.02]


def test_an_etf_moves_as_its_disclosed_holdings(api) -> None:
    """0050's return each day is its holdings' (the etf-holdings endpoint's share counts of
    the day before, valued at their closes) within a tracking error of a fund (daily
    deviation under 0.2 %); it closes at a limit only when its holdings move that much."""
    window = (date(2025, 11, 21), date(2026, 11, 20))
    held = api(
        "stock/ownership/etf-holdings/0050",
        **{"from": window[0].isoformat(), "to": window[1].isoformat(), "sort": "asc"},
    )["data"]
    fund = api.returns("0050", [window])
    members = {c["symbol"] for row in held for c in row["components"]}
    moves = {s: api.returns(s, [window]) for s in members}
    gaps = []
    for before, row in itertools.pairwise(held):
        value = {c["symbol"]: c["weight"] for c in before["components"]}
        implied = sum(w * moves[s].get(row["date"], 0.0) for s, w in value.items()) / 100
        gaps.append(fund[row["date"]] - implied)
    assert len(gaps) > 200
    assert float(np.std(gaps)) < 0.002 and max(map(abs, gaps)) < 0.01


# --- market-wide days ----------------------------------------------------------------------


@pytest.mark.parametrize("day,real", [(date(2024, 8, 5), -0.0835), (date(2025, 4, 7), -0.0970)])
def test_the_real_market_wide_falls_happen_with_limit_down_breadth(api, day, real) -> None:
    """2024-08-05 (TAIEX -8.35 %) and 2025-04-07 (-9.70 %, 1,702 stocks limit-down): the
    sandbox's TAIEX falls 7 % or more and 30 % or more of its stocks close limit-down."""
    api.at(day)
    quote = api("stock/intraday/quote/IX0001")
    fall = quote["closePrice"] / quote["previousClose"] - 1
    assert fall <= -0.07 and abs(fall - real) < 0.02
    symbols = [
        r["symbol"]
        for exchange in ("TWSE", "TPEx")
        for r in api("stock/intraday/tickers", type="EQUITY", exchange=exchange)["data"]
    ]
    down = 0
    for s in symbols:
        ticker, q = api(f"stock/intraday/ticker/{s}"), api(f"stock/intraday/quote/{s}")
        if "limitDownPrice" in ticker and q.get("closePrice") == ticker["limitDownPrice"]:
            down += 1
            assert q.get("isLimitDownPrice") is True
    assert len(symbols) >= 15 and down >= 0.3 * len(symbols)


def test_the_fifty_largest_stocks_are_correlated_like_a_market() -> None:
    """Median pairwise correlation of daily returns over the last year, among the 50 largest
    stocks by market value (the heatmap's), between 0.3 and 0.5."""
    with Sandbox(seed=7, now=NOW, rate_limit=None, extra_equities=45) as sb:
        api = Api(sb)
        rows = api("stock/snapshot/heatmap/IX0001")["data"][1:]
        stocks = [r["symbol"] for r in rows if not r["symbol"].startswith("00")][:50]
        assert len(stocks) == 50
        window = [(date(2025, 11, 21), date(2026, 11, 20))]
        series = {s: api.returns(s, window) for s in stocks}
    pairs = [corr(series[a], series[b]) for a, b in itertools.combinations(stocks, 2)]
    assert 0.3 <= float(np.median(pairs)) <= 0.5


# --- disposition ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dispositions(api) -> dict[str, list[tuple[date, int]]]:
    """Every (day, matching interval) a stock was under disposition, 2021-01-04..2026-11-20,
    from each day's ticker list and tickers."""
    out: dict[str, list[tuple[date, int]]] = {}
    d = date(2021, 1, 4)
    while d <= date(2026, 11, 20):
        api.at(d)
        for exchange in ("TWSE", "TPEx"):  # the list names one exchange
            listed = api(
                "stock/intraday/tickers", type="EQUITY", exchange=exchange, isDisposition="true"
            )
            if listed["date"] != d.isoformat():
                continue
            for r in listed["data"]:
                t = api(f"stock/intraday/ticker/{r['symbol']}")
                assert t["isDisposition"] is True and t["canDayTrade"] is False
                out.setdefault(r["symbol"], []).append((d, t["matchingInterval"]))
        d += timedelta(days=1)
    return out


def _periods(days: list[tuple[date, int]], trading: list[date]) -> list[list[tuple[date, int]]]:
    """Runs of consecutive trading days at one interval."""
    pos = {d: i for i, d in enumerate(trading)}
    runs: list[list[tuple[date, int]]] = []
    for d, interval in days:
        if runs and pos[d] == pos[runs[-1][-1][0]] + 1 and interval == runs[-1][-1][1]:
            runs[-1].append((d, interval))
        else:
            runs.append([(d, interval)])
    return runs


def test_disposition_periods_last_ten_trading_days_and_end(api, dispositions) -> None:
    """A disposition lasts 10 trading days (5-minute call auctions; 20 minutes for a second
    one), then ends; 3293 has some, but is not under disposition most of the time."""
    trading = [
        date.fromisoformat(r["date"])
        for a, b in [(date(y, 1, 1), date(y, 12, 31)) for y in range(2021, 2027)]
        for r in api(
            "stock/historical/candles/IX0001",
            **{"from": a.isoformat(), "to": b.isoformat(), "sort": "asc"},
        )["data"]
    ]
    trading = [d for d in trading if d <= date(2026, 11, 20)]
    assert "3293" in dispositions
    assert len(dispositions["3293"]) < 0.25 * len(trading)
    for symbol, days in dispositions.items():
        for run in _periods(days, trading):
            inside = date(2021, 1, 4) < run[0][0] and run[-1][0] < date(2026, 11, 20)
            assert len(run) == 10 or (not inside and len(run) < 10), (symbol, run)
            assert run[0][1] in (300, 1200)


def test_disposition_trades_in_call_auctions_on_its_grid_never_in_the_closing_call(
    api, dispositions
) -> None:
    """Under disposition the stock trades only in call auctions every 5 (or 20) minutes from
    09:00, none inside the closing call (13:25-13:30), and a closing auction at 13:30:00; the
    day before and the day after its period it trades continuously."""
    seen = set()
    for symbol, days in dispositions.items():
        for d, interval in days:
            if interval in seen:
                continue
            seen.add(interval)
            api.at(d)
            rows = api(f"stock/intraday/trades/{symbol}", sort="asc", limit=100000)["data"]
            times = [datetime.fromtimestamp(r["time"] / 1e6, TPE) for r in rows]
            regular = [t for t, r in zip(times, rows, strict=True) if r["serial"] != 99999999]
            assert regular[-1].time().isoformat() == "13:30:00"
            for t in regular[:-1]:
                minutes = (t.hour - 9) * 60 + t.minute
                assert t.second == 0 and minutes * 60 % interval == 0
                assert t.time() < datetime(2000, 1, 1, 13, 25).time()
            assert len(regular) == -(-(4 * 60 + 25) * 60 // interval) + 1  # and the close
            assert not any(r.get("isContinuous") for r in rows)
    assert seen == {300, 1200}
    symbol, days = next(iter(dispositions.items()))
    first, last = days[0][0], days[9][0]
    api.at(first - timedelta(days=1))  # a closed day shows the trading day before it
    before = api(f"stock/intraday/ticker/{symbol}")
    after, d = before, last
    while after["date"] <= last.isoformat():
        d += timedelta(days=1)
        api.at(d)
        after = api(f"stock/intraday/ticker/{symbol}")
    for ticker in (before, after):
        assert ticker["isDisposition"] is False and ticker["matchingInterval"] == 0
        api.at(date.fromisoformat(ticker["date"]))
        assert api(f"stock/intraday/quote/{symbol}")["total"]["transaction"] > 100
