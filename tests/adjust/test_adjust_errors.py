"""``adjust=`` and ``adjusted=``: checked before any request, typed errors naming the fix, and
the sandbox's own ``adjusted=true`` candles (sdk-parity section 4)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
import requests

from marketframe import Client, Store
from marketframe.exceptions import AdjustmentUnavailable, BatchError, InvalidParams, PlanError

CANDLES = "stock.historical.candles"


@pytest.fixture
def no_request(sandbox):  # type: ignore[no-untyped-def]
    """Asserts that the test body sent nothing to the sandbox."""
    before = sandbox.requests_served
    yield
    assert sandbox.requests_served == before


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"adjust": "yes"}, ["'yes'", "'splits'", "'all'"]),
        ({"adjust": True}, ["True", "'splits'"]),
        ({"adjust": "all", "adjusted": True}, ["adjusted=True", "cannot be combined"]),
        ({"adjust": "splits", "timeframe": "W"}, ["W candles", "resample", "adjusted=True"]),
        ({"adjust": "all", "timeframe": "M"}, ["M candles"]),
        ({"adjust": "all", "from_": "2009-01-01", "to": "2009-02-01"}, ["earliest"]),
        ({"adjusted": True, "timeframe": "5"}, ["timeframes D, W", "adjusted"]),
        ({"adjusted": "true"}, ["must be a bool"]),
    ],
)
def test_bad_adjust_parameters_raise_before_any_request(client, no_request, params, words):
    with pytest.raises(InvalidParams) as err:
        client.stock.historical.candles(["0050", "2330"], **params)
    for w in words:
        assert w in str(err.value)


def test_adjust_is_refused_on_other_endpoints(client, no_request):
    with pytest.raises(InvalidParams, match="only a parameter of stock.historical.candles"):
        client.load("stock.intraday.quote", symbol="0050", adjust="all")


def test_store_read_checks_adjust_before_reading(client, no_request, tmp_path: Path):
    st = Store(tmp_path / "s", client)
    with pytest.raises(InvalidParams, match="'splits'"):
        st.read(CANDLES, "0050", adjust="none")
    with pytest.raises(InvalidParams, match="W candles"):
        st.read(CANDLES, "0050", timeframe="W", adjust="all")
    with pytest.raises(InvalidParams, match="does not apply"):
        st.read("stock.technical.sma", "0050", period=5, adjust="all")


def test_store_refuses_to_keep_the_services_adjusted_prices(client, no_request, tmp_path: Path):
    st = Store(tmp_path / "s", client)
    with pytest.raises(InvalidParams, match="adjust="):
        st.sync(CANDLES, "0050", "2025-01-01", "2025-02-01", adjusted=True)


def test_a_plan_without_corporate_actions_names_the_alternative(sandbox):  # type: ignore[no-untyped-def]
    with Client(sandbox.keys["basic"], base_url=sandbox.base_url, cache=False) as basic:
        with pytest.raises(AdjustmentUnavailable) as err:
            basic.stock.historical.candles(
                "0050", from_="2025-06-01", to="2025-06-30", adjust="splits"
            )
        assert isinstance(err.value, PlanError) and err.value.status == 403
        assert "adjusted=True" in str(err.value) and "upgrade" in str(err.value)
        assert sandbox.keys["basic"] not in str(err.value)
        # and the alternative it names works on that plan
        served = basic.stock.historical.candles(
            "0050", from_="2025-06-01", to="2025-06-30", adjusted=True
        )
        assert len(served) > 0


def test_a_batch_with_a_bad_symbol_keeps_the_others_adjusted(client):
    with pytest.raises(BatchError) as err:
        client.stock.historical.candles(
            ["0050", "ZZZZ"], from_="2025-06-02", to="2025-06-10", adjust="splits"
        )
    assert set(err.value.errors) == {"ZZZZ"}
    raw = client.stock.historical.candles("0050", from_="2025-06-02", to="2025-06-10")
    # 0050 before its 1:4 split, divided by four
    assert len(raw) > 0
    assert list(err.value.frame.close) == pytest.approx(list(raw.close / 4), abs=0.01)


def test_the_sandbox_echoes_adjusted_and_refuses_minute_timeframes(sandbox):  # type: ignore[no-untyped-def]
    url = sandbox.base_url + "/stock/historical/candles/0050"
    head = {"X-API-KEY": sandbox.api_key}
    body = requests.get(
        url,
        {"from": "2025-06-01", "to": "2025-06-30", "adjusted": "True"},
        headers=head,
        timeout=30,
    ).json()  # the official SDK sends True
    assert body["adjusted"] is True
    plain = requests.get(
        url, {"from": "2025-06-01", "to": "2025-06-30"}, headers=head, timeout=30
    ).json()
    assert "adjusted" not in plain
    assert [r["date"] for r in body["data"]] == [r["date"] for r in plain["data"]]
    assert all(r["volume"] == p["volume"] for r, p in zip(body["data"], plain["data"], strict=True))
    minute = requests.get(url, {"timeframe": "5", "adjusted": "true"}, headers=head, timeout=30)
    assert minute.status_code == 400
    assert "D, W and M" in minute.json()["message"]


@pytest.mark.parametrize("tf", ["W", "M"])
def test_service_adjusted_weeks_and_months_aggregate_its_adjusted_days(client, tf):
    # a W/M bar aggregates its whole week or month, so the days run on past the bars' range
    days = client.stock.historical.candles(
        "0050", from_="2025-05-01", to="2025-08-31", adjusted=True, sort="asc"
    )
    bars = client.stock.historical.candles(
        "0050", from_="2025-05-01", to="2025-07-31", timeframe=tf, adjusted=True, sort="asc"
    )
    stamp = [dt.date.fromisoformat(str(d)[:10]) for d in days.date]
    labels = [dt.date.fromisoformat(str(d)[:10]) for d in bars.date]
    for i, label in enumerate(labels):
        if tf == "W":
            stop = label - dt.timedelta(days=label.weekday() - 7)  # the next Monday
        else:
            stop = (label.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
        inside = days[[label <= d < stop for d in stamp]]
        assert bars.open.iloc[i] == inside.open.iloc[0]
        assert bars.close.iloc[i] == inside.close.iloc[-1]
        assert bars.high.iloc[i] == inside.high.max()
        assert bars.low.iloc[i] == inside.low.min()


def test_adjusted_candles_without_type_exchange_market_still_load():
    """sdk-parity section 4: with ``adjusted`` the official SDK made ``type``, ``exchange``,
    ``market`` and ``timeframe`` optional, so the service may leave them out."""
    from marketframe.convert import to_table

    body = {
        "symbol": "0050",
        "adjusted": True,
        "data": [
            {
                "date": "2025-06-02",
                "open": 12.95,
                "high": 12.96,
                "low": 12.7,
                "close": 12.7,
                "volume": 16288000,
                "change": -0.22,
            }
        ],
    }
    table = to_table(
        {**body, "symbol": None}, CANDLES, {"symbol": "0050", "timeframe": "D", "adjusted": True}
    )
    row = table.to_pylist()[0]
    assert row["symbol"] == "0050" and row["timeframe"] == "D"  # from the request
    assert row["close"] == 12.7 and row["type"] is None and row["exchange"] is None
    assert "adjusted" not in table.column_names  # the echo of the parameter is not a column
