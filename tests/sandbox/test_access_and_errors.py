"""Keys, plans, error bodies, parameter rules, rate limits, latency and faults."""

from __future__ import annotations

import datetime as dt
import time
from email.utils import parsedate_to_datetime

import pytest
import requests

from marketframe.sandbox import Sandbox


def get(sb, path: str, key: str | None = "sandbox-advanced", **params) -> requests.Response:
    headers = {"X-API-KEY": key} if key is not None else {}
    return requests.get(f"{sb.base_url}/{path}", headers=headers, params=params, timeout=30)


def assert_error(r: requests.Response, status: int) -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"statusCode", "message"} and body["statusCode"] == status
    return body["message"]


@pytest.mark.parametrize("key", [None, "", "not-a-key", "SANDBOX-ADVANCED"])
def test_401_without_a_valid_key(sandbox, key) -> None:
    assert_error(get(sandbox, "stock/intraday/quote/2330", key=key), 401)


@pytest.mark.parametrize(
    "path",
    [
        "stock/snapshot/quotes/TSE",
        "stock/snapshot/movers/TSE?direction=up&change=percent",
        "stock/snapshot/actives/TSE?trade=volume",
        "stock/corporate-actions/capital-changes",
        "stock/corporate-actions/diviends",
        "stock/corporate-actions/dividends/",
        "stock/corporate-actions/listing-applicants",
    ],
)
def test_basic_plan_gets_403_on_snapshot_and_corporate_actions(sandbox, path) -> None:
    message = assert_error(get(sandbox, path, key="sandbox-basic"), 403)
    assert "plan" in message
    assert get(sandbox, path, key="sandbox-developer").status_code == 200


def test_basic_plan_reaches_the_rest(sandbox) -> None:
    for path in (
        "stock/intraday/quote/2330",
        "stock/historical/stats/2330",
        "futopt/intraday/products?type=OPTION",
    ):
        assert get(sandbox, path, key="sandbox-basic").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "stock/intraday/quote/0000",
        "stock/historical/stats/ABC",
        "futopt/intraday/quote/TXFZ9",
        "stock/nothing/here",
    ],
)
def test_404_for_unknown_symbols_and_paths(sandbox, path) -> None:
    assert_error(get(sandbox, path), 404)


@pytest.mark.parametrize(
    "path,params,needle",
    [
        ("stock/historical/candles/2330", {"from": "2024-01-01", "to": "2025-01-01"}, "one year"),
        ("stock/historical/candles/2330", {"from": "2024-02-29", "to": "2025-02-28"}, "one year"),
        ("stock/historical/candles/2330", {"from": "2009-12-01", "to": "2010-03-01"}, "2010"),
        ("stock/historical/candles/IX0001", {"from": "2014-12-01", "to": "2015-03-01"}, "2015"),
        ("stock/historical/candles/2330", {"from": "2024-03-01", "to": "2024-02-01"}, "after"),
        ("stock/historical/candles/2330", {"timeframe": "2"}, "1, 3, 5, 10, 15, 30, 60, D, W, M"),
        ("stock/historical/candles/2330", {"from": "2024/01/01"}, "yyyy-MM-dd"),
        ("stock/historical/candles/2330", {"from": "2024-02-30"}, "calendar"),
        ("stock/historical/candles/2330", {"fields": "open,vwap"}, "allowed values"),
        (
            "stock/historical/candles/2330",
            {"timeframe": "1", "fields": "close,turnover"},
            "allowed values",
        ),
        (
            "stock/technical/sma/2330",
            {"from": "2026-01-01", "to": "2026-03-01", "timeframe": "D"},
            "period",
        ),
        (
            "stock/technical/kdj/2330",
            {
                "from": "2025-01-01",
                "to": "2026-01-01",
                "timeframe": "D",
                "rPeriod": 9,
                "kPeriod": 3,
                "dPeriod": 3,
            },
            "one year",
        ),
        ("stock/intraday/candles/2330", {"timeframe": "D"}, "1, 3, 5, 10, 15, 30, 60"),
        ("stock/intraday/tickers", {}, "EQUITY, INDEX, WARRANT, ODDLOT"),
        ("stock/intraday/trades/2330", {"limit": "many"}, "whole number"),
        ("stock/snapshot/quotes/NYSE", {}, "TSE, OTC, ESB, TIB, PSB"),
        ("stock/snapshot/movers/TSE", {"direction": "sideways", "change": "value"}, "up, down"),
        ("futopt/intraday/products", {}, "FUTURE, OPTION"),
        ("futopt/intraday/candles/TXFL6", {"timeframe": "3"}, "1, 5, 10, 15, 30, 60"),
    ],
)
def test_400_for_invalid_parameters(sandbox, path, params, needle) -> None:
    assert needle in assert_error(get(sandbox, path, **params), 400)


def test_a_range_just_under_one_year_is_accepted(sandbox) -> None:
    r = get(sandbox, "stock/historical/candles/2330", **{"from": "2024-01-01", "to": "2024-12-31"})
    assert r.status_code == 200 and len(r.json()["data"]) > 240


def test_booleans_are_accepted_in_both_spellings(make_sandbox) -> None:
    with make_sandbox() as (sb, _):
        # the latest day some stock is on the attention list, as the sandbox's market has it
        equities = [s for s, i in sb.market.universe.instruments.items() if i.type == "EQUITY"]
        day = sb.now().date()
        while not any(sb.market.status(s, day)[0] for s in equities if day.weekday() < 5):
            day -= dt.timedelta(days=1)
        sb.set_now(f"{day.isoformat()}T14:00:00+08:00")
        sym = next(s for s in equities if sb.market.status(s, day)[0])
        ex = {"market": sb.market.universe[sym].market}  # the list names one exchange
        a = get(sb, "stock/intraday/tickers", type="EQUITY", isAttention="True", **ex).json()
        b = get(sb, "stock/intraday/tickers", type="EQUITY", isAttention="true", **ex).json()
        every = get(sb, "stock/intraday/tickers", type="EQUITY", **ex).json()
    assert a["data"] == b["data"] and a["data"] and len(a["data"]) < len(every["data"])


def test_rate_limit_headers_and_429() -> None:
    with Sandbox(seed=1, now="2026-11-20T14:00:00+08:00", rate_limit=5) as sb:
        remaining = []
        for _ in range(5):
            r = get(sb, "stock/intraday/ticker/2330")
            assert r.status_code == 200
            assert r.headers["X-RateLimit-Limit"] == "5"
            remaining.append(int(r.headers["X-RateLimit-Remaining"]))
            reset_ms = int(r.headers["X-RateLimit-Reset"])
            # epoch milliseconds, a minute ahead of the rate limiter's (real) clock; the Date
            # header is the sandbox's market clock, frozen here at 2026-11-20 14:00
            sent = time.time()
            assert 0 < reset_ms / 1000 - sent <= 61
            assert parsedate_to_datetime(r.headers["Date"]).timestamp() == 1795154400.0
        assert remaining == [4, 3, 2, 1, 0]
        r = get(sb, "stock/intraday/ticker/2330")
        assert assert_error(r, 429) == "Rate limit exceeded"
        assert 1 <= int(r.headers["Retry-After"]) <= 60
        assert r.headers["X-RateLimit-Remaining"] == "0"
        # the limit is per key
        assert get(sb, "stock/intraday/ticker/2330", key="sandbox-basic").status_code == 200
        # and it can be lifted at run time
        sb.configure(rate_limit=None)
        assert get(sb, "stock/intraday/ticker/2330").status_code == 200


def test_every_response_carries_rate_limit_headers(sandbox) -> None:
    for r in (
        get(sandbox, "stock/intraday/quote/2330"),
        get(sandbox, "x", key=None),
        get(sandbox, "stock/intraday/quote/0000"),
    ):
        assert {"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} <= set(
            r.headers
        ), r.status_code


def test_latency_and_faults_can_be_injected() -> None:
    with Sandbox(seed=3, now="2026-11-20T14:00:00+08:00", rate_limit=None) as sb:
        sb.configure(latency=0.05)
        t = time.perf_counter()
        get(sb, "stock/intraday/ticker/2330")
        assert time.perf_counter() - t >= 0.05
        sb.configure(latency=0.0, fault_rate=1.0)
        assert get(sb, "stock/intraday/ticker/2330").status_code in (500, 502, 503)
        sb.configure(fault_rate=0.25, fault_seed=42)
        codes = [get(sb, "stock/intraday/ticker/2330").status_code for _ in range(200)]
        faults = sum(c >= 500 for c in codes)
        assert 20 <= faults <= 80 and set(codes) <= {200, 500, 502, 503}
        sb.configure(fault_rate=0.0, reset_rate=1.0)
        with pytest.raises(requests.ConnectionError):
            get(sb, "stock/intraday/ticker/2330")
        sb.configure(reset_rate=0.0)
        assert get(sb, "stock/intraday/ticker/2330").status_code == 200


def test_unknown_setting_is_refused_with_the_allowed_names() -> None:
    sb = Sandbox()
    with pytest.raises(TypeError, match="rate_limit"):
        sb.configure(ratelimit=3)


def test_the_server_keeps_connections_alive(sandbox) -> None:
    with requests.Session() as s:
        s.headers["X-API-KEY"] = sandbox.api_key
        r1 = s.get(f"{sandbox.base_url}/stock/intraday/ticker/2330")
        sock1 = r1.raw._connection.sock if r1.raw._connection else None
        r2 = s.get(f"{sandbox.base_url}/stock/intraday/ticker/2317")
        assert r1.headers.get("Connection", "keep-alive").lower() != "close"
        assert r2.status_code == 200
        pool = s.get_adapter(sandbox.base_url).poolmanager
        conns = [p.num_connections for p in pool.pools._container.values()]
        assert conns == [1], "both requests must reuse one connection"
        del sock1


def test_a_short_rate_window_resets_the_count() -> None:
    # The limiter's clock is the test's, so the window cannot pass while the machine is busy.
    now = [1_000.0]
    with Sandbox(seed=1, now="2026-11-20T14:00:00+08:00", rate_limit=2, rate_window=0.5) as sb:
        sb.rest.clock = lambda: now[0]
        assert [get(sb, "stock/intraday/ticker/2330").status_code for _ in range(3)] == [
            200,
            200,
            429,
        ]
        now[0] += 0.49
        assert get(sb, "stock/intraday/ticker/2330").status_code == 429
        now[0] += 0.02
        assert get(sb, "stock/intraday/ticker/2330").status_code == 200


def test_tickers_envelope_names_the_exchange_of_the_selection(sandbox) -> None:
    assert (
        get(sandbox, "stock/intraday/tickers", type="EQUITY", market="OTC").json()["exchange"]
        == "TPEx"
    )
    assert (
        get(sandbox, "stock/intraday/tickers", type="EQUITY", exchange="TPEx").json()["exchange"]
        == "TPEx"
    )
