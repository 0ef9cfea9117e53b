"""The sandbox honours the service's filters and sends what the service sends (over HTTP).

Each test states the fact it checks and where it comes from (spec/, samples/).
"""

from __future__ import annotations

import re

import pytest
import requests

from marketframe.sandbox import Sandbox

NOW = "2026-11-20T14:00:00+08:00"


@pytest.fixture(scope="module")
def sb():
    with Sandbox(seed=7, now=NOW, rate_limit=1_000_000) as s:
        yield s


def get(sb, path: str, plan: str = "advanced", **params) -> requests.Response:
    return requests.get(
        f"{sb.base_url}/{path}", params=params, headers={"X-API-KEY": sb.keys[plan]}, timeout=30
    )


def ok(sb, path: str, **params) -> dict:
    r = get(sb, path, **params)
    assert r.status_code == 200, r.text
    return r.json()


def raw(sb, path: str, **params) -> bytes:
    r = get(sb, path, **params)
    assert r.status_code == 200, r.text
    return r.content


# --- filters ------------------------------------------------------------------------------


def test_futopt_tickers_is_spread_lists_the_calendar_spreads(sb) -> None:
    """sdk-parity.md section 7: isSpread filters, items gain isSpread."""
    spreads = ok(sb, "futopt/intraday/tickers", type="FUTURE", isSpread="true")
    assert spreads["isSpread"] is True
    symbols = [r["symbol"] for r in spreads["data"]]
    assert symbols and all("/" in s for s in symbols)
    assert all(r["isSpread"] is True for r in spreads["data"])
    outright = ok(sb, "futopt/intraday/tickers", type="FUTURE")
    assert all("/" not in r["symbol"] and "isSpread" not in r for r in outright["data"])
    # a spread listed is served by the single-contract routes
    quote = ok(sb, f"futopt/intraday/quote/{symbols[0].replace('/', '%2F')}")
    assert quote["symbol"] == symbols[0]


def test_futopt_trades_is_trial_returns_the_trial_matches(sb) -> None:
    """rest-api.md/sdk-parity.md: isTrial returns trial-match ticks (no bid/ask/volume)."""
    sym = ok(sb, "futopt/intraday/tickers", type="FUTURE", product="TXF")["data"][0]["symbol"]
    trial = ok(sb, f"futopt/intraday/trades/{sym}", isTrial="true")["data"]
    regular = ok(sb, f"futopt/intraday/trades/{sym}")["data"]
    assert trial and all("bid" not in r and "ask" not in r for r in trial)
    first_regular = min(r["time"] for r in regular)
    assert max(r["time"] for r in trial) < first_regular  # before the open (08:30-08:45)
    assert all(re.fullmatch(r"\d{8}", r["serial"]) for r in trial)


@pytest.mark.parametrize(
    "path",
    ["stock/corporate-actions/capital-changes", "stock/corporate-actions/listing-applicants"],
)
def test_unknown_query_keys_are_400_on_whitelist_dtos(sb, path: str) -> None:
    """sdk-parity.md section 7: unknown keys -> 400 on capital-changes/listing-applicants;
    the body is the service's error shape (wire-facts.md, Errors)."""
    r = get(sb, path, date="2026-11-20")
    assert r.status_code == 400
    assert r.json() == {"statusCode": 400, "message": "property date should not exist"}
    assert get(sb, path, start_date="2026-01-01", end_date="2026-06-01").status_code == 200


def test_listing_applicants_filter_by_exchange(sb) -> None:
    rows = ok(
        sb,
        "stock/corporate-actions/listing-applicants",
        start_date="2026-01-01",
        end_date="2026-11-20",
        exchange="TPEx",
    )["data"]
    assert rows and {r["exchange"] for r in rows} == {"TPEx"}


# --- futopt products ------------------------------------------------------------------------


def test_products_end_session_is_a_string(sb) -> None:
    """sdk-parity.md section 7: prod sends endSession as the string "1" (after hours)."""
    for type_ in ("FUTURE", "OPTION"):
        after = ok(sb, "futopt/intraday/products", type=type_, session="AFTERHOURS")["data"]
        assert after and {r["endSession"] for r in after} == {"1"}
        regular = ok(sb, "futopt/intraday/products", type=type_, session="REGULAR")["data"]
        assert {r["endSession"] for r in regular} == {"0"}


# --- wire details ---------------------------------------------------------------------------


def test_integral_numbers_are_written_as_integers(sb) -> None:
    """The service writes 22530, not 22530.0 (samples/futopt_intraday_candles.json)."""
    bodies = [
        raw(sb, "stock/intraday/candles/2330"),
        raw(sb, "stock/intraday/ticker/030501"),
        raw(
            sb,
            "stock/technical/sma/2330",
            timeframe="D",
            period=5,
            **{"from": "2026-06-01"},
            to="2026-11-20",
        ),
        raw(
            sb,
            "stock/technical/bb/2330",
            timeframe="D",
            period=5,
            **{"from": "2026-06-01"},
            to="2026-11-20",
        ),
        raw(
            sb, "stock/corporate-actions/dividends", start_date="2012-01-01", end_date="2012-12-31"
        ),
        raw(sb, "stock/ownership/director-holdings/2330"),
        raw(sb, "stock/ownership/etf-holdings/0050"),
        raw(sb, "stock/ownership/tdcc-distribution/2330"),
    ]
    for body in bodies:
        assert not re.search(rb"[:\[,]-?\d+\.0[,}\]]", body), body[:300]


def test_ticker_and_envelopes_carry_no_invented_keys(sb) -> None:
    """samples: no nameEn on a common stock's ticker; intraday candles without a requested
    timeframe and historical candles carry no timeframe; the historical envelope no date."""
    assert "nameEn" not in ok(sb, "stock/intraday/ticker/2330")
    assert "timeframe" not in ok(sb, "stock/intraday/candles/2330")
    assert ok(sb, "stock/intraday/candles/2330", timeframe="5")["timeframe"] == "5"
    hist = ok(sb, "stock/historical/candles/0050", **{"from": "2026-02-06"}, to="2026-02-10")
    assert list(hist) == ["symbol", "type", "exchange", "market", "data"]


def test_ticker_list_envelope_names_the_exchange_of_its_rows(sb) -> None:
    # neither asked: the listed exchange's rows (the spec requires the envelope's exchange)
    plain = ok(sb, "stock/intraday/tickers", type="EQUITY")
    assert plain["exchange"] == "TWSE"
    assert plain["data"] == ok(sb, "stock/intraday/tickers", type="EQUITY", exchange="TWSE")["data"]
    for market, exchange in (("TSE", "TWSE"), ("OTC", "TPEx")):
        body = ok(sb, "stock/intraday/tickers", type="EQUITY", market=market)
        assert body["exchange"] == exchange
    tpex = ok(sb, "stock/intraday/tickers", type="EQUITY", exchange="TPEx")
    assert tpex["exchange"] == "TPEx" and "6488" in {r["symbol"] for r in tpex["data"]}


def test_minute_historical_candles_ignore_from_and_to(sb) -> None:
    """wire-facts.md: minute timeframes ignore from/to and return the latest 30 days."""
    plain = ok(sb, "stock/historical/candles/2330", timeframe="5")
    ranged = ok(
        sb,
        "stock/historical/candles/2330",
        timeframe="5",
        **{"from": "2026-01-02"},
        to="2026-01-05",
    )
    assert plain["data"] == ranged["data"] and plain["data"]


def test_basic_plan_has_trial_access_to_corporate_actions_until_2026_02_12() -> None:
    """rest-api.md: basic plan has trial access (to corporate actions) until 2026-02-12."""
    for now, status in (("2026-01-15T10:00:00+08:00", 200), ("2026-02-13T10:00:00+08:00", 403)):
        with Sandbox(seed=7, now=now) as s:
            r = get(s, "stock/corporate-actions/dividends", plan="basic")
            assert r.status_code == status, (now, r.text)
            assert get(s, "stock/snapshot/quotes/TSE", plan="basic").status_code == 403


def test_200_carries_the_rate_limit_headers_of_the_real_capture(sb) -> None:
    """samples/SOURCES.md (stock_intraday_volumes): a 200 carries X-RateLimit-*, Retry-After
    (the window, 60) and Access-Control-Expose-Headers naming them."""
    r = get(sb, "stock/intraday/volumes/2330")
    assert r.status_code == 200
    for h in ("X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"):
        assert r.headers[h].isdigit()
    assert r.headers["Retry-After"] == "60"
    exposed = r.headers["Access-Control-Expose-Headers"].split(",")
    assert {"Retry-After", "X-RateLimit-Limit", "X-RateLimit-Reset"} <= set(exposed)


# --- market structure -------------------------------------------------------------------------


def _tw(t_us: int):
    from datetime import datetime
    from zoneinfo import ZoneInfo

    return datetime.fromtimestamp(t_us / 1e6, ZoneInfo("Asia/Taipei"))


def test_quote_serial_and_last_updated_move_with_the_books() -> None:
    """Real mid-session quote: serial 6152257 > lastTrade.serial 6132837 and lastUpdated
    after the last trade (samples/stock_intraday_quote_20260916.json); after the close both
    are the closing trade's (samples/stock_intraday_quote.json)."""
    with Sandbox(seed=7, now="2026-11-20T11:00:00+08:00") as s:
        moved = 0
        for minute in range(0, 30, 3):
            s.set_now(f"2026-11-20T11:{minute:02d}:00+08:00")
            q = ok(s, "stock/intraday/quote/2330")
            assert q["serial"] >= q["lastTrade"]["serial"]
            assert q["lastUpdated"] >= q["lastTrade"]["time"]
            moved += q["serial"] > q["lastTrade"]["serial"]
        assert moved >= 5  # the books usually moved since the last trade
        s.set_now("2026-11-20T14:00:00+08:00")
        q = ok(s, "stock/intraday/quote/2330")
        assert q["serial"] == q["lastTrade"]["serial"] and q["lastUpdated"] == q["closeTime"]


def test_large_caps_trade_thousands_of_times_a_day(sb) -> None:
    """2330 had 7,915 transactions on 2026-01-30 (samples/stock_intraday_quote.json)."""
    assert 4000 <= ok(sb, "stock/intraday/quote/2330")["total"]["transaction"] <= 12000


def _odd_lot_times(sb) -> list:
    rows = ok(sb, "stock/intraday/trades/2330", type="oddlot", sort="asc", limit=100000)["data"]
    return [_tw(r["time"]) for r in rows]


def test_odd_lot_matches_every_5_seconds_from_0910(sb) -> None:
    """Intraday odd lots on 2026-11-20: first match at 09:10, call auctions every 5 seconds
    since 2024-12-02 (TWSE), the last at the 13:30 close; an auction is not continuous
    trading."""
    times = _odd_lot_times(sb)
    assert times[0].strftime("%H:%M:%S.%f") == "09:10:00.000000"
    steps = [(t - times[0]).total_seconds() for t in times]
    assert all(s % 5 == 0 for s in steps)
    assert min(b - a for a, b in zip(steps, steps[1:], strict=False)) == 5
    assert times[-1].strftime("%H:%M:%S") == "13:30:00"
    assert ok(sb, "stock/intraday/ticker/2330", type="oddlot")["matchingInterval"] == 5


#: sampled days of each rule (TWSE: 3 minutes from 2020-10-26, 1 minute from 2022-12-19,
#: 5 seconds from 2024-12-02)
ODD_LOT_DAYS = ["2020-10-26", "2021-06-01", "2022-12-16", "2022-12-19", "2024-11-29", "2024-12-02"]


def test_odd_lot_interval_follows_the_dated_rule_on_every_sampled_day() -> None:
    """Over HTTP, day by day: the ticker's matchingInterval and the spacing of the odd-lot
    trades are the interval of the calendar's dated rule; the first match stays at 09:10."""
    from marketframe import calendar

    with Sandbox(seed=7, now="2026-11-20T14:00:00+08:00", rate_limit=1_000_000) as s:
        for day in ODD_LOT_DAYS:
            s.set_now(f"{day}T14:00:00+08:00")
            every = calendar.oddlot_interval(day)
            ticker = ok(s, "stock/intraday/ticker/2330", type="oddlot")
            assert (ticker["date"], ticker["matchingInterval"]) == (day, every)
            times = _odd_lot_times(s)
            assert times[0].strftime("%H:%M:%S.%f") == "09:10:00.000000", day
            steps = [(t - times[0]).total_seconds() for t in times[:-1]]  # and the close
            assert all(x % every == 0 for x in steps), day
            assert min(b - a for a, b in zip(steps, steps[1:], strict=False)) == every, day
            assert times[-1].strftime("%H:%M:%S") == "13:30:00"
        s.set_now("2020-10-23T14:00:00+08:00")  # before intraday odd lots: none
        assert ok(s, "stock/intraday/trades/2330", type="oddlot")["data"] == []


def test_odd_lot_stream_trades_are_not_continuous(sb) -> None:
    import asyncio

    import aiohttp

    async def main() -> list[dict]:
        async with aiohttp.ClientSession() as http, http.ws_connect(sb.ws_url) as ws:
            await ws.send_json({"event": "auth", "data": {"apikey": sb.keys["advanced"]}})
            data = {"channel": "trades", "symbol": "2330", "intradayOddLot": True}
            await ws.send_json({"event": "subscribe", "data": data})
            got: list[dict] = []
            while len(got) < 20:
                msg = await asyncio.wait_for(ws.receive_json(), 30)
                if msg["event"] == "data":
                    got.append(msg["data"])
            return got

    trades = asyncio.run(main())
    assert trades and not any(t.get("isContinuous") for t in trades)


def test_warrant_limits_follow_the_underlying(sb) -> None:
    """A warrant's limit move is its underlying's limit move times the exercise ratio."""
    w = ok(sb, "stock/intraday/ticker/030501")
    u = ok(sb, "stock/intraday/ticker/2330")
    move = (u["limitUpPrice"] - u["referencePrice"]) * w["exerciseRatio"]
    assert w["limitUpPrice"] == pytest.approx(w["referencePrice"] + move, abs=0.011)
    assert w["limitUpPrice"] - w["referencePrice"] > 0.1 * w["referencePrice"]


def _daily(sb, symbol: str) -> list[dict]:
    return ok(
        sb,
        f"stock/historical/candles/{symbol}",
        **{"from": "2025-11-21"},
        to="2026-11-20",
        sort="asc",
    )["data"]


EQUITIES = ("2330", "2317", "2454", "2412", "2881", "2882", "1301", "2002", "2603", "2308")
EQUITIES += ("3008", "1101", "6669", "6488", "5483", "8069", "6446")


def test_daily_returns_are_correlated_like_a_market(sb) -> None:
    import itertools

    import numpy as np

    series = {}
    for sym in EQUITIES:
        rows = _daily(sb, sym)
        series[sym] = {r["date"]: r["change"] / (r["close"] - r["change"]) for r in rows}
    corr = []
    for a, b in itertools.combinations(EQUITIES, 2):
        days = sorted(set(series[a]) & set(series[b]))
        corr.append(np.corrcoef([series[a][d] for d in days], [series[b][d] for d in days])[0, 1])
    assert 0.2 <= float(np.median(corr)) <= 0.6


def test_some_days_close_locked_at_the_limit() -> None:
    """Limit days exist, and on one the quote is at the limit with the flags the spec names
    (isLimitUpPrice/isLimitUpBid or the Down ones) and nothing offered beyond it."""
    with Sandbox(seed=7, now=NOW) as s:
        hits = []
        for sym in EQUITIES:
            for r in _daily(s, sym):
                prev = r["close"] - r["change"]
                if abs(r["change"]) / prev > 0.095:
                    hits.append((sym, r["date"], r["change"] > 0))
        assert len(hits) >= 3
        sym, day, up = hits[0]
        s.set_now(f"{day}T14:00:00+08:00")
        q = ok(s, f"stock/intraday/quote/{sym}")
        ticker = ok(s, f"stock/intraday/ticker/{sym}")
        side = "Up" if up else "Down"
        assert q["closePrice"] == ticker[f"limit{side}Price"]
        assert (
            q[f"isLimit{side}Price"] is True
            and q[f"isLimit{side}Bid" if up else f"isLimit{side}Ask"] is True
        )
        assert (q["asks"] if up else q["bids"]) == []


def test_futures_months_and_option_strike_ladder(sb) -> None:
    """TAIFEX: the three nearest months and the next two quarterly months; TXO about 100
    strikes a month, 50 points apart in the near months and 100 in the quarterly ones."""
    txf = ok(sb, "futopt/intraday/tickers", type="FUTURE", product="TXF")["data"]
    months = sorted(r["settlementDate"][:7] for r in txf)
    assert months == ["2026-12", "2027-01", "2027-02", "2027-03", "2027-06"]
    txo = ok(sb, "futopt/intraday/tickers", type="OPTION", product="TXO")["data"]
    by_month: dict[str, set[int]] = {}
    for r in txo:
        strike = int(re.match(r"TXO(\d+)", r["symbol"])[1])
        by_month.setdefault(r["settlementDate"][:7], set()).add(strike)
    assert sorted(by_month) == months
    for k, month in enumerate(months):
        strikes = sorted(by_month[month])
        assert 90 <= len(strikes) <= 110
        steps = {b - a for a, b in itertools_pairwise(strikes)}
        assert steps == ({50} if k < 3 else {100})


def itertools_pairwise(xs):
    return zip(xs, xs[1:], strict=False)


def _last_trade(s, symbol: str, **params):
    rows = ok(s, f"futopt/intraday/trades/{symbol}", limit=1, **params)["data"]
    return _tw(rows[0]["time"])


def test_the_expiring_month_stops_at_1330_and_has_no_night_session() -> None:
    """TAIFEX's TX: 08:45-13:30 on the last trading day of the delivery month (the third
    Wednesday, 2026-11-18 for TXFK6), no after-hours session for it that day; it trades in
    the night session of the evening before. The next month is the front one that night."""
    with Sandbox(seed=7, now="2026-11-18T20:00:00+08:00", rate_limit=1_000_000) as s:
        assert _last_trade(s, "TXFK6").strftime("%H:%M") < "13:30"
        assert _last_trade(s, "TXFL6").strftime("%H:%M") >= "13:30"  # to 13:45
        night = ok(s, "futopt/intraday/tickers", type="FUTURE", product="TXF", session="AFTERHOURS")
        listed = [r["symbol"] for r in night["data"]]
        assert "TXFK6" not in listed and "TXFL6" in listed
        assert get(s, "futopt/intraday/quote/TXFK6", session="afterhours").status_code == 404
        assert ok(s, "futopt/intraday/quote/TXFL6", session="afterhours")["date"] == "2026-11-18"
        day = ok(s, "futopt/intraday/tickers", type="FUTURE", product="TXF")["data"]
        assert "TXFK6" in [r["symbol"] for r in day]  # the day session still lists it
        history = ok(
            s,
            "futopt/historical/candles/TXF",
            contractMonth="1!",
            session="afterhours",
            sort="asc",
            **{"from": "2026-11-16", "to": "2026-11-18"},
        )["data"]
        assert [r["date"] for r in history] == ["2026-11-16", "2026-11-17", "2026-11-18"]
        s.set_now("2026-11-17T20:00:00+08:00")
        assert ok(s, "futopt/intraday/quote/TXFK6", session="afterhours")["date"] == "2026-11-17"
