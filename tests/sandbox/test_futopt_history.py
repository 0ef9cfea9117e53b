"""The sandbox's futures/options history agrees with its intraday market (over real HTTP)."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from marketframe.sandbox import Sandbox

TODAY = "2026-11-20"  # the session sandbox's day (tests/conftest.py), after the close
CONTRACTS = {"TXFL6": ("TXF", "202612"), "MXFA7": ("MXF", "202701")}


def get(sb: Any, path: str, **query: str) -> requests.Response:
    return requests.get(
        f"{sb.base_url}/{path}", params=query, headers={"X-API-KEY": sb.api_key}, timeout=30
    )


def ok(sb: Any, path: str, **query: str) -> dict[str, Any]:
    r = get(sb, path, **query)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _daily_row(sb: Any, product: str, month: str, **query: str) -> dict[str, Any]:
    body = ok(sb, f"futopt/historical/daily/{product}", contractMonth=month, **query)
    (row,) = [r for r in body["data"] if r["contractMonth"] == month and r["callPut"] is None]
    return row


def _assert_agrees(sb: Any, symbol: str, product: str, month: str, **session: str) -> None:
    trades = ok(sb, f"futopt/intraday/trades/{symbol}", limit="100000", **session)["data"]
    trades.reverse()  # newest first on the wire
    candles = ok(sb, f"futopt/intraday/candles/{symbol}", **session)["data"]
    body = ok(sb, f"futopt/historical/daily/{product}", contractMonth=month, **session)
    (row,) = [r for r in body["data"] if r["contractMonth"] == month and r["callPut"] is None]
    prices = [t["price"] for t in trades]
    assert row["openPrice"] == prices[0] == candles[0]["open"]
    assert row["closePrice"] == prices[-1] == candles[-1]["close"]
    assert row["highPrice"] == max(prices) == max(c["high"] for c in candles)
    assert row["lowPrice"] == min(prices) == min(c["low"] for c in candles)
    assert row["volume"] == sum(t["size"] for t in trades) == sum(c["volume"] for c in candles)
    bars = ok(
        sb,
        f"futopt/historical/candles/{product}",
        contractMonth=month,
        timeframe="1",
        sort="asc",
        **({"session": session["session"]} if session else {}),
        **{"from": body["date"], "to": body["date"]},
    )["data"]
    assert [(b["date"], b["open"], b["close"], b["volume"]) for b in bars] == [
        (c["date"], c["open"], c["close"], c["volume"]) for c in candles
    ]


@pytest.mark.parametrize("symbol", sorted(CONTRACTS))
def test_daily_rows_agree_with_the_days_trades_and_candles(sandbox: Any, symbol: str) -> None:
    _assert_agrees(sandbox, symbol, *CONTRACTS[symbol])


def test_the_night_session_agrees_with_its_trades_too(sandbox: Any) -> None:
    _assert_agrees(sandbox, "TXFL6", "TXF", "202612", session="afterhours")


@pytest.mark.parametrize("session", [{}, {"session": "afterhours"}])
def test_a_spread_row_agrees_with_the_spreads_own_trades(
    sandbox: Any, session: dict[str, str]
) -> None:
    """The history's spreads are the intraday routes' spreads (TXFL6/A7: December against
    January), with the same trades: one market, whichever route asks."""
    trades = ok(sandbox, "futopt/intraday/trades/TXFL6%2FA7", limit="100000", **session)["data"]
    trades.reverse()
    prices = [t["price"] for t in trades]
    body = ok(sandbox, "futopt/historical/daily/TXF", **session)
    spreads = {r["contractMonth"]: r for r in body["data"] if "/" in r["contractMonth"]}
    months = sorted({r["contractMonth"] for r in body["data"] if "/" not in r["contractMonth"]})
    assert set(spreads) == {f"{months[0]}/{m}" for m in months[1:]}  # nearest vs each later
    row = spreads["202612/202701"]
    assert (row["openPrice"], row["closePrice"]) == (prices[0], prices[-1])
    assert (row["highPrice"], row["lowPrice"]) == (max(prices), min(prices))
    assert row["volume"] == sum(t["size"] for t in trades)
    assert row["volumeSpread"] >= 2 * row["volume"]


def test_an_option_row_agrees_with_its_trades(sandbox: Any) -> None:
    body = ok(sandbox, "futopt/historical/daily/TXO", contractMonth="202612")
    row = body["data"][0]
    letter = "ABCDEFGHIJKL"[11] if row["callPut"] == "CALL" else "MNOPQRSTUVWX"[11]
    symbol = f"TXO{row['strikePrice']}{letter}6"
    trades = ok(sandbox, f"futopt/intraday/trades/{symbol}", limit="100000")["data"]
    assert row["volume"] == sum(t["size"] for t in trades)
    assert row["openPrice"] == trades[-1]["price"] and row["closePrice"] == trades[0]["price"]
    assert "volumeSpread" not in row  # option rows omit the key


def test_the_txf_answer_carries_option_rows_as_the_real_one(sandbox: Any) -> None:
    """The recorded TXF answer holds an option row (callPut, strikePrice): the sandbox's
    carries the nearest month's TXO rows at the money, the same rows the TXO answer has."""
    txf = ok(sandbox, "futopt/historical/daily/TXF")["data"]
    options = [r for r in txf if r["callPut"] is not None]
    assert {r["callPut"] for r in options} == {"CALL", "PUT"}
    assert all(isinstance(r["strikePrice"], int) and "volumeSpread" not in r for r in options)
    (month,) = {r["contractMonth"] for r in options}
    txo = ok(sandbox, "futopt/historical/daily/TXO", contractMonth=month)["data"]
    same = {(r["callPut"], r["strikePrice"]): r for r in txo}
    assert options == [same[r["callPut"], r["strikePrice"]] for r in options]
    assert txf[-1]["callPut"] is not None  # after the futures and the spreads, as recorded


def test_during_the_session_the_day_so_far_and_no_settlement_yet() -> None:
    with Sandbox(seed=7, now=f"{TODAY}T10:30:00+08:00") as sb:
        row = _daily_row(sb, "TXF", "202612")
        trades = ok(sb, "futopt/intraday/trades/TXFL6", limit="100000")["data"]
        assert row["volume"] == sum(t["size"] for t in trades) > 0
        assert row["settlementPrice"] is None and row["openInterest"] > 0
    with Sandbox(seed=7, now=f"{TODAY}T14:00:00+08:00") as sb:
        later = _daily_row(sb, "TXF", "202612")
        assert later["volume"] > row["volume"] and later["openPrice"] == row["openPrice"]


def test_settlement_is_the_basis_of_the_next_days_change(sandbox: Any) -> None:
    """settlement(d) = the next day's reference: close(d+1) - change(d+1), and the intraday
    quote's previousClose of the same contract."""
    before = _daily_row(sandbox, "TXF", "202612", date="2026-11-19")
    today = _daily_row(sandbox, "TXF", "202612", date=TODAY)
    assert before["settlementPrice"] == today["closePrice"] - today["change"]
    quote = ok(sandbox, "futopt/intraday/quote/TXFL6")
    assert quote["previousClose"] == before["settlementPrice"]
    assert today["changePercent"] == round(today["change"] * 100 / before["settlementPrice"], 2)


def test_an_expiring_contract_settles_at_zero_on_its_expiry_day(sandbox: Any) -> None:
    """As the recorded api-dev payload shows for 202609 on its expiry day 2026-09-16."""
    row = _daily_row(sandbox, "TXF", "202611", date="2026-11-18")
    assert row["settlementPrice"] == 0 and row["volume"] > 0
    assert (
        ok(sandbox, "futopt/historical/daily/TXF", date="2026-11-19", contractMonth="202611")[
            "data"
        ]
        == []
    )  # delisted the day after


def test_continuous_month_on_daily_resolves_to_the_real_month(sandbox: Any) -> None:
    for day, month in (("2026-11-18", "202611"), ("2026-11-19", "202612")):
        body = ok(sandbox, "futopt/historical/daily/TXF", date=day, contractMonth="1!")
        assert body["contractMonth"] == month
        assert [r["contractMonth"] for r in body["data"] if r["callPut"] is None] == [month]
    candles = ok(sandbox, "futopt/historical/candles/TXF", contractMonth="1!")
    assert candles["contractMonth"] == "1!"  # echoed as requested, as the real sample shows


def test_past_days_are_deterministic_from_the_seed() -> None:
    calls = [
        ("futopt/historical/daily/TXO", {"date": "2026-10-14"}),
        (
            "futopt/historical/candles/MXF",
            {"from": "2026-03-02", "to": "2026-04-30", "timeframe": "W", "contractMonth": "2!"},
        ),
        (
            "futopt/historical/candles/TXF",
            {"from": "2026-10-14", "to": "2026-10-14", "timeframe": "15", "session": "afterhours"},
        ),
    ]
    bodies = []
    for seed, now in (
        (5, "2026-11-20T14:00:00+08:00"),
        (5, "2026-11-25T09:00:00+08:00"),
        (6, "2026-11-20T14:00:00+08:00"),
    ):
        with Sandbox(seed=seed, now=now) as sb:
            bodies.append([ok(sb, p, **q) for p, q in calls])
    assert bodies[0] == bodies[1]  # another day's clock: the past does not change
    assert bodies[0] != bodies[2]  # another seed: another market
    assert all(b["data"] for b in bodies[0])


@pytest.mark.parametrize("session", ["afterhours", "AFTERHOURS", "AfterHours"])
def test_session_is_case_insensitive_on_history(sandbox: Any, session: str) -> None:
    for path in ("futopt/historical/daily/TXF", "futopt/historical/candles/TXF"):
        assert ok(sandbox, path, session=session)["session"] == "AFTERHOURS"


@pytest.mark.parametrize(
    ("path", "query", "words"),
    [
        ("futopt/historical/daily/TXFL6", {}, "contract code"),
        ("futopt/historical/candles/TXO22400L6", {}, "contract code"),
        ("futopt/historical/daily/TXF", {"contractMonth": "2026-12"}, "YYYYMM"),
        ("futopt/historical/daily/TXF", {"session": "night"}, "afterhours"),
        ("futopt/historical/candles/TXO", {"contractMonth": "1!"}, "futures only"),
        ("futopt/historical/candles/TXO", {"contractMonth": "202612"}, "strikePrice and callPut"),
        ("futopt/historical/candles/TXF", {"contractMonth": "202612/202701"}, "not a spread"),
        ("futopt/historical/candles/TXF", {"timeframe": "3"}, "allowed values"),
    ],
)
def test_bad_requests_are_400_with_a_hint(
    sandbox: Any, path: str, query: dict[str, str], words: str
) -> None:
    r = get(sandbox, path, **query)
    assert r.status_code == 400 and words in r.json()["message"]


def test_an_unknown_product_is_not_found(sandbox: Any) -> None:
    assert get(sandbox, "futopt/historical/daily/ZZZ").status_code == 404


@pytest.mark.parametrize(
    ("now", "query"),
    [
        (f"{TODAY}T08:00:00+08:00", {"date": TODAY}),  # before the open: not a row of nulls
        (f"{TODAY}T14:00:00+08:00", {"session": "afterhours", "date": TODAY}),  # opens at 15:00
        (f"{TODAY}T14:00:00+08:00", {"date": "2013-05-02"}),  # before the index history (2015)
        (f"{TODAY}T14:00:00+08:00", {"date": "2026-11-21"}),  # a Saturday
    ],
)
def test_no_rows_for_a_session_without_a_market(now: str, query: dict[str, str]) -> None:
    with Sandbox(seed=7, now=now) as sb:
        assert ok(sb, "futopt/historical/daily/TXO", **query)["data"] == []
        assert (
            ok(
                sb,
                "futopt/historical/candles/TXF",
                timeframe="5",
                **{
                    "from": query.get("date", TODAY),
                    "to": query.get("date", TODAY),
                    **({"session": "afterhours"} if "session" in query else {}),
                },
            )["data"]
            == []
        )
