"""Everything agrees with everything: trades, candles, quotes, volumes, snapshots and historical
candles of many symbols and days, and Taiwan's market rules. All over real HTTP."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
import requests

from marketframe.sandbox import Sandbox

TPE = ZoneInfo("Asia/Taipei")
SYMBOLS = ["2330", "2317", "0050", "6488", "7705", "3008", "2603"]
DAYS = [
    date(2026, 11, 20),
    date(2025, 4, 7),
    date(2024, 3, 14),
    date(2019, 7, 2),
    date(2012, 9, 10),
]
LISTED = {"7705": date(2021, 5, 3)}  # the emerging-board stock starts later
CASES = [(s, d) for s in SYMBOLS for d in DAYS if d >= LISTED.get(s, d)]


def ticks_ok(price: float, etf: bool) -> bool:
    cents = round(price * 100)
    if etf:
        tick = 1 if cents < 5000 else 5
    else:
        tick = next(
            t
            for bound, t in (
                (1000, 1),
                (5000, 5),
                (10000, 10),
                (50000, 50),
                (100000, 100),
                (float("inf"), 500),
            )
            if cents < bound
        )
    return cents % tick == 0


@pytest.fixture(scope="module")
def sb():
    with Sandbox(seed=11, now="2026-11-20T14:45:00+08:00", rate_limit=None) as s:
        yield s


class Api:
    def __init__(self, sb: Sandbox) -> None:
        self.sb = sb
        self.s = requests.Session()
        self.s.headers["X-API-KEY"] = sb.api_key

    def __call__(self, path: str, **params) -> dict:
        r = self.s.get(f"{self.sb.base_url}/{path}", params=params, timeout=30)
        assert r.status_code == 200, (path, r.text)
        return r.json()


@pytest.fixture(scope="module")
def api(sb):
    return Api(sb)


def at(d: date, hh: int, mm: int) -> datetime:
    return datetime(d.year, d.month, d.day, hh, mm, tzinfo=TPE)


def listed_on(api, symbol: str, d: date) -> bool:
    rows = api(
        f"stock/historical/candles/{symbol}", **{"from": d.isoformat(), "to": d.isoformat()}
    )["data"]
    return bool(rows)


@pytest.mark.parametrize("symbol,d", CASES)
def test_a_closed_day_agrees_everywhere(sb, api, symbol: str, d: date) -> None:
    sb.set_now(at(d, 14, 45))
    assert listed_on(api, symbol, d)
    ticker = api(f"stock/intraday/ticker/{symbol}")
    quote = api(f"stock/intraday/quote/{symbol}")
    trades = api(f"stock/intraday/trades/{symbol}", sort="asc", limit=100000)["data"]
    regular = [t for t in trades if t["serial"] != 99999999]
    fixed = [t for t in trades if t["serial"] == 99999999]
    total = quote["total"]
    assert quote["date"] == d.isoformat()
    # trades and quote totals
    assert sum(t["size"] for t in regular) == total["tradeVolume"]
    assert len(regular) == total["transaction"]
    assert regular[-1]["volume"] == total["tradeVolume"]
    assert [t["time"] for t in regular] == sorted(t["time"] for t in regular)
    assert all(a["serial"] < b["serial"] for a, b in zip(regular, regular[1:], strict=False))
    assert all("volume" not in t and "bid" not in t for t in fixed)
    prices = [t["price"] for t in regular]
    assert quote["openPrice"] == prices[0] and quote["closePrice"] == prices[-1]
    assert quote["highPrice"] == max(prices) and quote["lowPrice"] == min(prices)
    assert quote["change"] == pytest.approx(quote["closePrice"] - quote["referencePrice"])
    assert quote.get("isClose") is True
    # session hours, microseconds
    first = datetime.fromtimestamp(regular[0]["time"] / 1e6, TPE)
    last = datetime.fromtimestamp(regular[-1]["time"] / 1e6, TPE)
    assert first.date() == d and first.time() >= at(d, 9, 0).time()
    assert last.time() == at(d, 13, 30).time()
    # ticks and limits
    etf = symbol in ("0050", "0056")
    assert all(ticks_ok(p, etf) for p in prices)
    if "limitUpPrice" in ticker:
        assert all(ticker["limitDownPrice"] <= p <= ticker["limitUpPrice"] for p in prices)
        assert ticker["limitUpPrice"] <= ticker["referencePrice"] * 1.1 + 1e-9
        assert ticker["limitDownPrice"] >= ticker["referencePrice"] * 0.9 - 1e-9
    # start-labelled 1-minute candles aggregate the trades
    buckets: dict[str, list[dict]] = defaultdict(list)
    for t in regular:
        start = datetime.fromtimestamp(t["time"] / 1e6, TPE).replace(second=0, microsecond=0)
        buckets[start.strftime("%Y-%m-%dT%H:%M:00.000+08:00")].append(t)
    candles = api(f"stock/intraday/candles/{symbol}", timeframe="1")["data"]
    assert [c["date"] for c in candles] == sorted(buckets)
    for c in candles:
        group = buckets[c["date"]]
        assert c["open"] == group[0]["price"] and c["close"] == group[-1]["price"]
        assert c["high"] == max(g["price"] for g in group)
        assert c["low"] == min(g["price"] for g in group)
        assert c["volume"] == sum(g["size"] for g in group)
    # the price-volume distribution sums to the traded volume, less the opening auction
    vols = api(f"stock/intraday/volumes/{symbol}")["data"]
    assert sum(v["volume"] for v in vols) == total["tradeVolume"]
    split = sum(v["volumeAtBid"] + v["volumeAtAsk"] for v in vols)
    assert split == total["tradeVolume"] - regular[0]["size"]
    assert split == total["tradeVolumeAtBid"] + total["tradeVolumeAtAsk"]
    # the historical daily candle is the intraday day (volume in shares, turnover in TWD)
    hist = api(
        f"stock/historical/candles/{symbol}",
        **{
            "from": d.isoformat(),
            "to": d.isoformat(),
            "fields": "open,high,low,close,volume,turnover,change",
        },
    )["data"]
    assert len(hist) == 1
    h = hist[0]
    lots = symbol != "7705"
    assert (h["open"], h["high"], h["low"], h["close"]) == (
        quote["openPrice"],
        quote["highPrice"],
        quote["lowPrice"],
        quote["closePrice"],
    )
    assert h["volume"] == total["tradeVolume"] * (1000 if lots else 1)
    assert h["turnover"] == total["tradeValue"]
    assert h["change"] == pytest.approx(quote["change"])
    avg = total["tradeValue"] / (total["tradeVolume"] * (1000 if lots else 1))
    assert quote["avgPrice"] == pytest.approx(avg, abs=0.006)


@pytest.mark.parametrize("symbol", ["2330", "6488"])
def test_snapshot_rows_agree_with_quotes(sb, api, symbol: str) -> None:
    sb.set_now(at(date(2026, 11, 19), 11, 7))
    market = api(f"stock/intraday/ticker/{symbol}")["market"]
    rows = {r["symbol"]: r for r in api(f"stock/snapshot/quotes/{market}")["data"]}
    q = api(f"stock/intraday/quote/{symbol}")
    r = rows[symbol]
    assert (r["openPrice"], r["highPrice"], r["lowPrice"], r["closePrice"]) == (
        q["openPrice"],
        q["highPrice"],
        q["lowPrice"],
        q["closePrice"],
    )
    assert r["tradeVolume"] == q["total"]["tradeVolume"]
    assert r["tradeValue"] == q["total"]["tradeValue"]
    assert r["lastUpdated"] <= datetime(2026, 11, 19, 11, 7, tzinfo=TPE).timestamp() * 1e6


def test_mid_session_shows_only_the_past_and_the_open_candle(sb, api) -> None:
    now = at(date(2026, 11, 18), 10, 30)
    sb.set_now(now)
    limit_us = now.timestamp() * 1e6
    trades = api("stock/intraday/trades/2330", limit=100000)["data"]
    assert trades and all(t["time"] <= limit_us for t in trades)
    assert trades[0]["time"] >= trades[-1]["time"], "default order is newest first"
    q = api("stock/intraday/quote/2330")
    assert "isClose" not in q and q["lastUpdated"] <= limit_us
    h = api("stock/historical/candles/2330", **{"from": "2026-11-18", "to": "2026-11-18"})
    assert h["data"][0]["close"] == q["closePrice"]
    assert h["data"][0]["volume"] == q["total"]["tradeVolume"] * 1000


def test_before_the_trial_session_the_previous_day_is_shown(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 23), 8, 0))  # a Monday morning
    assert api("stock/intraday/quote/2330")["date"] == "2026-11-20"
    sb.set_now(at(date(2026, 11, 22), 12, 0))  # Sunday
    assert api("stock/intraday/quote/2330")["date"] == "2026-11-20"
    sb.set_now(at(date(2026, 11, 23), 8, 45))  # trial matching only
    q = api("stock/intraday/quote/2330")
    assert q["date"] == "2026-11-23" and q["isTrial"] is True and "lastTrial" in q
    assert "total" not in q


def test_paging_and_sorting_of_trades(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 14, 0))
    full = api("stock/intraday/trades/2317", limit=100000)["data"]
    pages = []
    for offset in range(0, len(full), 97):
        pages += api("stock/intraday/trades/2317", offset=offset, limit=97)["data"]
    assert pages == full
    asc = api("stock/intraday/trades/2317", limit=100000, sort="asc")["data"]
    assert asc == full[::-1]
    assert len(api("stock/intraday/trades/2317")["data"]) == 50  # the default page
    trial = api("stock/intraday/trades/2317", isTrial="true", limit=1000)["data"]
    assert trial and all(set(t) == {"price", "size", "time", "serial"} for t in trial)


def test_weekends_and_history_start(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 14, 0))
    rows = api(
        "stock/historical/candles/2330", **{"from": "2010-01-01", "to": "2010-12-31", "sort": "asc"}
    )["data"]
    assert rows[0]["date"] == "2010-01-04"
    # no weekend rows but the make-up Saturday TWSE traded that year (marketframe.calendar)
    weekend = [r["date"] for r in rows if date.fromisoformat(r["date"]).weekday() >= 5]
    assert weekend == ["2010-02-06"]
    assert "2010-02-19" not in {r["date"] for r in rows}  # its bridge holiday
    ix = api(
        "stock/historical/candles/IX0001",
        **{"from": "2015-01-01", "to": "2015-03-01", "sort": "asc"},
    )["data"]
    assert ix[0]["date"] == "2015-01-05"
    before = api("stock/historical/candles/6669", **{"from": "2018-06-01", "to": "2019-03-26"})
    assert before["data"] == []  # listed 2019-03-27: confirmed empty, not an error
    after = api(
        "stock/historical/candles/6669", **{"from": "2019-03-01", "to": "2019-04-30", "sort": "asc"}
    )["data"]
    assert after[0]["date"] == "2019-03-27"
    halted = api(
        "stock/historical/candles/0050", **{"from": "2025-06-09", "to": "2025-06-20", "sort": "asc"}
    )["data"]
    assert [r["date"] for r in halted] == [
        "2025-06-09",
        "2025-06-10",
        "2025-06-18",
        "2025-06-19",
        "2025-06-20",
    ]


def test_weekly_and_monthly_candles_aggregate_days(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 14, 0))
    days = api(
        "stock/historical/candles/2454", **{"from": "2026-03-01", "to": "2026-04-30", "sort": "asc"}
    )["data"]
    months = api(
        "stock/historical/candles/2454",
        **{"from": "2026-03-01", "to": "2026-04-30", "timeframe": "M", "sort": "asc"},
    )["data"]
    assert [m["date"] for m in months] == ["2026-03-02", "2026-04-01"]
    march = [r for r in days if r["date"].startswith("2026-03")]
    m = months[0]
    assert m["open"] == march[0]["open"] and m["close"] == march[-1]["close"]
    assert m["high"] == max(r["high"] for r in march)
    assert m["volume"] == sum(r["volume"] for r in march)
    weeks = api(
        "stock/historical/candles/2454",
        **{"from": "2026-03-01", "to": "2026-04-30", "timeframe": "W", "sort": "asc"},
    )["data"]
    # a week is labelled by its first trading day: a Monday, or Tuesday 04-07 after the
    # Tomb Sweeping holiday of Monday 04-06
    firsts = {}
    for r in days:
        firsts.setdefault(date.fromisoformat(r["date"]).isocalendar()[:2], r["date"])
    assert [w["date"] for w in weeks] == list(firsts.values())
    assert "2026-04-07" in firsts.values()


def test_oddlot_is_in_shares_and_agrees_with_its_trades(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 14, 0))
    q = api("stock/intraday/quote/2330", type="oddlot")
    trades = api("stock/intraday/trades/2330", type="oddlot", limit=100000)["data"]
    assert sum(t["size"] for t in trades) == q["total"]["tradeVolume"]
    lot = api("stock/intraday/quote/2330")
    assert q["total"]["tradeVolume"] != lot["total"]["tradeVolume"]
    assert api("stock/intraday/ticker/2330", type="oddlot")["boardLot"] == 1


def test_flags_are_sent_only_when_true(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 12, 0))
    bodies = [
        api("stock/intraday/quote/2330"),
        api("stock/intraday/quote/0050"),
        api("stock/snapshot/quotes/TSE"),
    ]

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if isinstance(v, bool):
                    assert v is True, f"{k} sent as false"
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for b in bodies:
        walk(b)


def test_announced_dividends_have_null_prices_and_ex_dates_move_the_reference(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 14, 0))
    rows = api("stock/corporate-actions/dividends", start_date="2026-09-01", end_date="2027-01-15")[
        "data"
    ]
    future = [r for r in rows if r["date"] > "2026-11-20"]
    past = [r for r in rows if r["date"] <= "2026-11-20"]
    assert future and past
    assert all(r["referencePrice"] is None and r["previousClose"] is None for r in future)
    assert all(isinstance(r["referencePrice"], (int, float)) for r in past)
    ex = past[0]
    sb.set_now(at(date.fromisoformat(ex["date"]), 14, 0))
    q = api(f"stock/intraday/quote/{ex['symbol']}")
    assert q["referencePrice"] == ex["referencePrice"]
    assert q["previousClose"] == ex["previousClose"]
    assert q["referencePrice"] < q["previousClose"]


def test_futures_and_options_wire_facts(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 20, 0))
    ah = api("futopt/intraday/trades/TXFL6", session="afterhours", limit=100000)
    assert ah["type"] == "FUTURE_AH"
    assert all(
        isinstance(t["serial"], str) and len(t["serial"]) == 8 and t["serial"].isdigit()
        for t in ah["data"]
    )
    times = [datetime.fromtimestamp(t["time"] / 1e6, TPE) for t in ah["data"]]
    assert min(times) >= at(date(2026, 11, 20), 15, 0)
    assert max(times) <= at(date(2026, 11, 21), 5, 0)
    q = api("futopt/intraday/quote/TXFL6", session="afterhours")
    assert q["total"]["tradeVolume"] == sum(t["size"] for t in ah["data"])
    options = api("futopt/intraday/tickers", type="OPTION", product="TXO")["data"]
    calls = [o for o in options if o["symbol"][-2] in "ABCDEFGHIJKL"]
    puts = [o for o in options if o["symbol"][-2] in "MNOPQRSTUVWX"]
    assert calls and len(calls) == len(puts)
    vols = api(f"futopt/intraday/volumes/{options[0]['symbol']}")["data"]
    assert (
        sum(v["volume"] for v in vols)
        == api(f"futopt/intraday/quote/{options[0]['symbol']}")["total"]["tradeVolume"]
    )


def test_technical_values_agree_with_the_candles(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 14, 0))
    rng = {"from": "2026-01-05", "to": "2026-11-20", "timeframe": "D"}
    closes = [
        r["close"]
        for r in api(
            "stock/historical/candles/2454", sort="asc", **{"from": rng["from"], "to": rng["to"]}
        )["data"]
    ]
    sma = api("stock/technical/sma/2454", period=10, **rng)["data"]
    assert len(sma) == len(closes) - 9
    for k, row in enumerate(sma):
        assert row["sma"] == pytest.approx(sum(closes[k : k + 10]) / 10, rel=1e-12)
    bb = api("stock/technical/bb/2454", period=10, **rng)["data"]
    assert [b["middle"] for b in bb] == pytest.approx([s["sma"] for s in sma], rel=1e-12)
    kdj = api("stock/technical/kdj/2454", rPeriod=9, kPeriod=3, dPeriod=3, **rng)["data"]
    assert all(r["j"] == pytest.approx(3 * r["k"] - 2 * r["d"]) for r in kdj)
    assert all(0 <= r["k"] <= 100 and 0 <= r["d"] <= 100 for r in kdj)
    rsi = api("stock/technical/rsi/2454", period=14, **rng)["data"]
    assert len(rsi) == len(closes) - 14 and all(0 <= r["rsi"] <= 100 for r in rsi)
    minute = api("stock/technical/sma/2454", period=5, **{**rng, "timeframe": "5"})["data"]
    assert minute and "T" in minute[0]["date"]


def test_after_the_close_a_quote_is_closed_not_open(sb, api) -> None:
    sb.set_now(at(date(2026, 11, 20), 14, 0))
    for path in ("stock/intraday/quote/2330", "stock/intraday/quote/IX0001"):
        q = api(path)
        assert q.get("isClose") is True
        assert "isOpen" not in q and "isContinuous" not in q
    # mid-session the flags describe the last trade: isContinuous alone, as the real
    # mid-session quote (samples/stock_intraday_quote_20260916.json)
    sb.set_now(at(date(2026, 11, 20), 11, 0))
    q = api("stock/intraday/quote/2330")
    assert q.get("isContinuous") is True and "isOpen" not in q and "isClose" not in q


@pytest.mark.parametrize("symbol", ["2317", "2330", "0050"])
def test_one_serial_counter_orders_trials_and_trades_in_time(sb, api, symbol: str) -> None:
    sb.set_now(at(date(2026, 11, 20), 14, 0))
    trades = api(f"stock/intraday/trades/{symbol}", sort="asc", limit=100000)["data"]
    trials = api(f"stock/intraday/trades/{symbol}", isTrial="true", sort="asc", limit=1000)["data"]
    both = sorted((t["time"], t["serial"]) for t in trades + trials if t["serial"] != 99999999)
    serials = [s for _, s in both]
    assert serials == sorted(serials)
