"""The sandbox's four ownership routes over real HTTP: the consistency rules of their data, the
range/sort rules, the 400 body for bad parameters, and who may read etf-holdings."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from marketframe.sandbox import Sandbox
from marketframe.sandbox._calendar import is_trading_day

OWN = "stock/ownership"
YEAR = "from=2025-11-21&to=2026-11-20"


def get(sb: Any, path: str, key: str | None = None) -> requests.Response:
    return requests.get(
        f"{sb.base_url}/{OWN}/{path}", headers={"X-API-KEY": key or sb.api_key}, timeout=30
    )


def data(sb: Any, path: str) -> list[dict[str, Any]]:
    r = get(sb, path)
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"type", "exchange", "market", "symbol", "data"}
    return body["data"]


# --- institutional trades -------------------------------------------------------------------


@pytest.mark.parametrize("symbol", ["2330", "0050", "7705", "6446"])
def test_institutional_net_is_buy_minus_sell_and_total_the_sum_of_nets(
    sandbox: Any, symbol: str
) -> None:
    rows = data(sandbox, f"institutional-trades/{symbol}?{YEAR}")
    assert len(rows) > 200  # a trading year
    for row in rows:
        nets = []
        for who in ("foreign", "trust", "dealer"):
            part = row[who]
            assert set(part) == {"buy", "sell", "net"}
            assert all(type(v) is int and v is not True for v in part.values())
            assert part["buy"] >= 0 and part["sell"] >= 0
            assert part["net"] == part["buy"] - part["sell"]
            nets.append(part["net"])
        assert type(row["total"]) is int and row["total"] == sum(nets)
        assert is_trading_day(dt.date.fromisoformat(row["date"]))


def test_institutional_dates_are_the_stocks_trading_days(sandbox: Any) -> None:
    # 3293 was suspended 2018-03-01..20: no institutional trading then
    rows = data(sandbox, "institutional-trades/3293?from=2018-02-20&to=2018-03-31&sort=asc")
    dates = [r["date"] for r in rows]
    assert "2018-02-27" in dates and "2018-03-21" in dates
    assert not [d for d in dates if "2018-03-01" <= d <= "2018-03-20"]


# --- TDCC -----------------------------------------------------------------------------------


@pytest.mark.parametrize("symbol", ["2330", "0056", "7705"])
def test_tdcc_proportions_sum_to_100_and_counts_are_integers(sandbox: Any, symbol: str) -> None:
    rows = data(sandbox, f"tdcc-distribution/{symbol}?{YEAR}&sort=asc")
    assert 50 <= len(rows) <= 53  # weekly
    totals = set()
    weeks = set()
    for row in rows:
        day = dt.date.fromisoformat(row["date"])
        assert is_trading_day(day)
        # the last trading day of its week
        later = [day + dt.timedelta(days=k) for k in range(1, 7 - day.weekday())]
        assert not any(is_trading_day(d) for d in later)
        weeks.add(day.isocalendar()[:2])
        brackets = row["distributions"]
        assert [b["range"] for b in brackets][0] == "1-999" and len(brackets) == 15
        for b in brackets:
            assert type(b["holders"]) is int and b["holders"] >= 0
            assert type(b["shares"]) is int and b["shares"] >= 0
            assert round(b["proportion"], 2) == b["proportion"]  # hundredths of a percent
        # exactly 100.00: hundredths rounded by largest remainder
        assert sum(round(b["proportion"] * 100) for b in brackets) == 10000
        assert abs(sum(b["proportion"] for b in brackets) - 100) < 1e-9
        totals.add(sum(b["shares"] for b in brackets))
    assert len(weeks) == len(rows)  # one date a week
    assert len(totals) == 1  # the shares outstanding, all held in some bracket


# --- ETF holdings ---------------------------------------------------------------------------


@pytest.mark.parametrize("etf", ["0050", "0056"])
def test_etf_weights_sum_to_100_and_holdings_change_every_day(sandbox: Any, etf: str) -> None:
    rows = data(sandbox, f"etf-holdings/{etf}?{YEAR}&sort=asc")
    assert len(rows) > 200  # a disclosure every trading day
    prev: dict[str, dict[str, Any]] | None = None
    for row in rows:
        comps = {c["symbol"]: c for c in row["components"]}
        assert len(comps) == len(row["components"]) >= 8
        weights = [c["weight"] for c in comps.values()]
        assert sum(round(w * 100) for w in weights) == 10000
        assert weights == sorted(weights, reverse=True)  # largest holding first
        for c in comps.values():
            assert type(c["quantity"]) is int and c["quantity"] > 0
            assert c["quantity"] % 1000 == 0
        if prev is not None:
            assert any(comps[s]["quantity"] != prev[s]["quantity"] for s in comps)
            for s, c in comps.items():
                assert c["quantityChange"] == c["quantity"] - prev[s]["quantity"]
                assert round(c["weightChange"] * 100) == round(c["weight"] * 100) - round(
                    prev[s]["weight"] * 100
                )
        prev = comps


def test_etf_changes_are_absent_on_the_first_disclosure(sandbox: Any) -> None:
    first = data(sandbox, "etf-holdings/0050?from=2010-01-01&to=2010-01-31&sort=asc")[0]
    assert first["date"] == "2010-01-04"
    for c in first["components"]:
        assert "quantityChange" not in c and "weightChange" not in c
    # 0050 was suspended 2025-06-11..17: no disclosure then; the next compares with the last
    rows = data(sandbox, "etf-holdings/0050?from=2025-06-09&to=2025-06-20&sort=asc")
    assert [r["date"] for r in rows] == [
        "2025-06-09",
        "2025-06-10",
        "2025-06-18",
        "2025-06-19",
        "2025-06-20",
    ]
    assert all("quantityChange" in c for c in rows[2]["components"])


@pytest.mark.parametrize("etf", ["0050", "0056"])
def test_a_holding_enters_without_changes(sandbox: Any, etf: str) -> None:
    """A constituent listed later (6669, 2019-03-27) enters the basket with no previous
    disclosure to compare with: its changes are omitted that day, sent from the next."""
    rows = data(sandbox, f"etf-holdings/{etf}?from=2019-03-20&to=2019-04-10&sort=asc")
    held = [{c["symbol"]: c for c in r["components"]} for r in rows]
    entry = next(i for i, comps in enumerate(held) if "6669" in comps)
    assert entry > 0 and rows[entry]["date"] == "2019-03-27"
    assert "quantityChange" not in held[entry]["6669"]
    assert "weightChange" not in held[entry]["6669"]
    assert all("quantityChange" in c for s, c in held[entry].items() if s != "6669")
    assert held[entry + 1]["6669"]["quantityChange"] == (
        held[entry + 1]["6669"]["quantity"] - held[entry]["6669"]["quantity"]
    )


def test_etf_holdings_of_a_company_are_empty_and_of_an_unknown_symbol_404(sandbox: Any) -> None:
    assert data(sandbox, "etf-holdings/2330") == []
    r = get(sandbox, "etf-holdings/9999")
    assert r.status_code == 404 and r.json() == {"statusCode": 404, "message": "Resource Not Found"}


# --- director holdings ----------------------------------------------------------------------


def test_director_holdings_are_monthly_with_null_ratios_when_nothing_is_held(sandbox: Any) -> None:
    rows = data(sandbox, "director-holdings/2317?from=2025-12&to=2026-11&sort=asc")
    # published on the 15th of the next month: at 2026-11-20 October is the last
    assert [r["date"] for r in rows] == ["2025-12", *[f"2026-{m:02d}" for m in range(1, 11)]]
    nulls = 0
    for row in rows:
        assert re.fullmatch(r"\d{4}-\d{2}", row["date"])
        people = row["directors"]
        assert [p["order"] for p in people] == list(range(1, len(people) + 1))
        assert people[0]["title"] == "董事長"
        for p in people:
            held, pledged = p["heldShares"], p["pledgedShares"]
            assert 0 <= pledged <= held
            if held == 0:
                assert p["pledgeRatio"] is None
                nulls += 1
            else:
                assert p["pledgeRatio"] == round(pledged / held * 100, 2)
            rel = p["relatedHeldShares"]
            assert p["relatedPledgeRatio"] == (
                None if rel == 0 else round(p["relatedPledgedShares"] / rel * 100, 2)
            )
    assert nulls >= 3 * len(rows)  # independent directors hold nothing


def test_director_months_are_in_a_range_when_their_first_day_is(sandbox: Any) -> None:
    rows = data(sandbox, "director-holdings/2330?from=2026-01-02&to=2026-03-31&sort=asc")
    assert [r["date"] for r in rows] == ["2026-02", "2026-03"]
    assert data(sandbox, "director-holdings/0050") == []  # an ETF has no board


# --- from / to / sort and the 400 body ------------------------------------------------------


@pytest.mark.parametrize(
    "route",
    [
        "etf-holdings/0050",
        "institutional-trades/2330",
        "tdcc-distribution/2330",
        "director-holdings/2330",
    ],
)
def test_from_to_and_sort_are_honoured(sandbox: Any, route: str) -> None:
    lo, hi = "2026-02-01", "2026-06-30"
    asc = [r["date"] for r in data(sandbox, f"{route}?from={lo}&to={hi}&sort=asc")]
    desc = [r["date"] for r in data(sandbox, f"{route}?from={lo}&to={hi}&sort=desc")]
    default = [r["date"] for r in data(sandbox, f"{route}?from={lo}&to={hi}")]
    assert asc and asc == sorted(asc) and len(set(asc)) == len(asc)
    assert desc == asc[::-1] == default  # newest first unless asked
    assert lo[: len(asc[0])] <= asc[0] and asc[-1] <= hi[: len(asc[-1])]
    # without from/to: the year up to today, newest first
    latest = data(sandbox, route)
    assert latest[0]["date"] >= asc[-1] and latest[-1]["date"] > "2025-11"


@pytest.mark.parametrize(
    ("query", "word"),
    [
        ("code=2330", "code"),
        ("sort=up", "sort"),
        ("from=2026-13-01", "from"),
        ("from=26-01-01", "from"),
        ("from=2026-06-01&to=2026-01-01", "from"),
        ("from=2025-01-01&to=2026-01-01", "one year"),
        ("from=2009-06-01&to=2009-12-31", "2010"),
    ],
)
def test_bad_parameters_get_the_services_400_body(sandbox: Any, query: str, word: str) -> None:
    r = get(sandbox, f"institutional-trades/2330?{query}")
    assert r.status_code == 400
    body = r.json()
    assert set(body) == {"statusCode", "message"} and body["statusCode"] == 400
    assert word in body["message"]


# --- access and publication -----------------------------------------------------------------


def test_etf_holdings_need_the_advanced_plan(sandbox: Any) -> None:
    keys = sandbox.keys
    for plan in ("basic", "developer"):
        r = get(sandbox, "etf-holdings/0050", keys[plan])
        assert r.status_code == 403 and "advanced" in r.json()["message"]
        assert get(sandbox, "institutional-trades/2330", keys[plan]).status_code == 200
    assert get(sandbox, "etf-holdings/0050", keys["advanced"]).status_code == 200


def test_etf_holdings_are_granted_to_an_sdk_token_of_any_plan(sandbox: Any) -> None:
    """A broker-issued SDK token reads etf-holdings whatever its plan; a bearer token is held
    to the plan like an API key; the SDK token's plan still rules elsewhere (snapshots)."""
    url = f"{sandbox.base_url}/stock/ownership/etf-holdings/0050"
    creds = sandbox.credentials
    for plan in ("basic", "developer"):
        sdk = {"X-SDK-TOKEN": creds["sdk_token"][plan]}
        assert requests.get(url, headers=sdk, timeout=30).status_code == 200
        bearer = {"Authorization": f"Bearer {creds['bearer_token'][plan]}"}
        assert requests.get(url, headers=bearer, timeout=30).status_code == 403
    basic_sdk = {"X-SDK-TOKEN": creds["sdk_token"]["basic"]}
    snap = requests.get(
        f"{sandbox.base_url}/stock/snapshot/quotes/TSE", headers=basic_sdk, timeout=30
    )
    assert snap.status_code == 403


@pytest.fixture
def late_sb() -> Iterator[Sandbox]:
    with Sandbox(seed=7, now="2026-11-20T15:30:00+08:00") as sb:
        yield sb


def test_a_days_rows_are_published_at_15_00_and_deterministic(
    sandbox: Any, late_sb: Sandbox
) -> None:
    for route in ("etf-holdings/0050", "institutional-trades/2330", "tdcc-distribution/2330"):
        q = f"{route}?from=2026-11-01&to=2026-11-20&sort=asc"
        before, after = data(sandbox, q), data(late_sb, q)
        assert before[-1]["date"] < "2026-11-20" and after[-1]["date"] == "2026-11-20"
        assert after[:-1] == before  # the same seed: the same data
