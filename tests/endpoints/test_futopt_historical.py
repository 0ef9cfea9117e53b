"""futopt.historical.daily and .candles: the real payloads convert exactly, parameters are
checked before any request, and the loaders answer typed frames from the sandbox."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pytest

from marketframe import Client, InvalidParams
from marketframe.convert import to_pandas, to_polars, to_table

SAMPLES = Path(__file__).parents[1] / "data" / "samples"
TZ = "Asia/Taipei"
NAN = float("nan")


def _load(name: str, endpoint: str, params: dict[str, Any] | None = None) -> Any:
    return to_table((SAMPLES / f"{name}.json").read_bytes(), endpoint, params)


def _same(got: list[Any], want: list[Any]) -> bool:
    """Equal lists where NaN/None/NA stand for one missing value."""

    def norm(v: Any) -> Any:
        return None if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) else v

    return [norm(v) for v in got] == [norm(v) for v in want]


DAILY_TXF = {
    "date": [pd.Timestamp("2026-09-16")] * 3,
    "product": ["TXF"] * 3,
    "session": ["REGULAR"] * 3,
    "exchange": ["TAIFEX"] * 3,
    "contract_month": ["202609", "202609/202610", "202609"],
    "call_put": [None, None, "CALL"],
    "strike_price": [NAN, NAN, 45000.0],
    "open_price": [45534.0, 155.0, NAN],
    "high_price": [46093.0, 272.0, NAN],
    "low_price": [45518.0, 144.0, NAN],
    "close_price": [45759.0, 231.0, NAN],
    "change": [167.0, NAN, NAN],
    "change_percent": [0.37, NAN, NAN],
    "volume": [28491, 1946, 0],
    "volume_spread": [None, 6980, None],
    "open_interest": [9684, None, 12],
    "settlement_price": [0.0, NAN, 820.0],
}
DAILY_DTYPES = {
    "date": "datetime64[us]",
    "product": "str",
    "session": "category",
    "exchange": "category",
    "contract_month": "str",
    "call_put": "category",
    "strike_price": "float64",
    **{
        c: "float64"
        for c in (
            "open_price",
            "high_price",
            "low_price",
            "close_price",
            "change",
            "change_percent",
            "settlement_price",
        )
    },
    **{c: "Int64" for c in ("volume", "volume_spread", "open_interest")},
}


def test_the_real_txf_daily_payload_converts_exactly() -> None:
    """Integers on the wire become float64 prices; explicit nulls and the option row's
    missing volumeSpread key become nulls; the envelope's date/product/session on each row."""
    df = to_pandas(_load("futopt_historical_daily_TXF_20260916", "futopt.historical.daily"))
    assert list(df.columns) == list(DAILY_TXF)
    assert {c: str(df[c].dtype) for c in df.columns} == DAILY_DTYPES
    for col, want in DAILY_TXF.items():
        assert _same(df[col].tolist(), want), col
    assert df.attrs["units"]["open_interest"] == "contracts"


def test_the_real_weekly_option_daily_payload_converts_exactly() -> None:
    t = _load("futopt_historical_daily_TXO_20261002", "futopt.historical.daily")
    df = to_pandas(t)
    assert {c: str(df[c].dtype) for c in df.columns} == DAILY_DTYPES
    row = df.iloc[0]
    assert row["date"] == pd.Timestamp("2026-10-02") and row["product"] == "TXO"
    assert row["contract_month"] == "202610W1" and row["call_put"] == "CALL"
    assert row["strike_price"] == 42800.0 and row["settlement_price"] == 5560.0
    assert row["volume"] == 0 and row["open_interest"] == 0
    assert df[["open_price", "close_price", "change"]].isna().all(axis=None)
    assert row["volume_spread"] is pd.NA
    pl_df = to_polars(t)
    assert pl_df.schema["date"] == pl.Date and pl_df.schema["strike_price"] == pl.Float64
    assert pl_df.schema["volume_spread"] == pl.Int64 and pl_df["volume_spread"][0] is None


@pytest.mark.parametrize("params", [{"timeframe": "5"}, {}])
def test_the_real_minute_candles_payload_converts_exactly(params: dict[str, Any]) -> None:
    """Each bar keeps its own contract month (the envelope's 1! is the request's echo); a
    minute bar's date is a Taipei timestamp (from the request's timeframe, or the echo);
    fields not selected are null."""
    t = _load("futopt_historical_candles_TXF_tf5_20260916", "futopt.historical.candles", params)
    df = to_pandas(t)
    row = df.iloc[0]
    assert str(df["date"].dtype) == "datetime64[us, Asia/Taipei]"
    assert row["date"] == pd.Timestamp("2026-09-16 13:25", tz=TZ)
    assert row["contract_month"] == "202609" and row["product"] == "TXF"
    assert row["timeframe"] == "5" and row["session"] == "REGULAR"
    assert row["open"] == row["close"] == 45759.0 and str(df["open"].dtype) == "float64"
    assert row["volume"] == 610 and row["transaction"] == 249 and row["average"] == 45759.21
    assert str(df["volume"].dtype) == str(df["transaction"].dtype) == "Int64"
    assert df[["high", "low", "change", "strike_price"]].isna().all(axis=None)
    assert "sort" not in df.columns and list(df["contract_month"]) == ["202609"]
    pl_df = to_polars(t)
    assert pl_df.schema["date"] == pl.Datetime("us", TZ)
    assert pl_df.schema["close"] == pl.Float64 and pl_df.schema["volume"] == pl.Int64


# --- parameters, before any request -----------------------------------------------------------


@pytest.fixture(scope="module")
def offline() -> Iterator[Client]:
    with Client("key", base_url="http://127.0.0.1:9/marketdata/v1.0", cache=False) as c:
        yield c


@pytest.mark.parametrize(
    ("code", "fix"),
    [
        ("TXFK6", "product='TXF', contractMonth='202611'"),
        ("MXFA7/C7", "product='MXF', contractMonth='202701/202703'"),
        (
            "TXO22400X6",
            "product='TXO', contractMonth='202612' (candles also take "
            "strikePrice=22400, callPut='PUT')",
        ),
    ],
)
def test_a_contract_code_instead_of_a_product_names_the_product_and_month(
    offline: Client, code: str, fix: str
) -> None:
    for call in (offline.futopt.historical.daily, offline.futopt.historical.candles):
        with pytest.raises(InvalidParams) as info:
            call(product=code)
        assert info.value.param == "product" and fix in str(info.value)


@pytest.mark.parametrize(
    "month", ["2026", "202613", "2026-11", "4!", "1", "202611W6", "202611/2026", "202611X1"]
)
def test_contract_month_forms_are_checked(offline: Client, month: str) -> None:
    with pytest.raises(InvalidParams, match="YYYYMMWn") as info:
        offline.futopt.historical.candles(product="TXF", contractMonth=month)
    assert info.value.param == "contractMonth"


@pytest.mark.parametrize(
    ("params", "param"),
    [
        ({"timeframe": "3"}, "timeframe"),  # stocks have 3-minute candles, futures do not
        ({"fields": ["open", "turnover"]}, "fields"),
        ({"callPut": "both"}, "callPut"),
        ({"session": "night"}, "session"),
        ({"strikePrice": "22400"}, "strikePrice"),
    ],
)
def test_other_parameters_name_their_allowed_values(
    offline: Client, params: dict[str, Any], param: str
) -> None:
    with pytest.raises(InvalidParams) as info:
        offline.futopt.historical.candles(product="TXO", **params)
    assert info.value.param == param


# --- over real sockets ---------------------------------------------------------------------


@pytest.fixture(scope="module", params=["pandas", "polars"])
def client_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _rows(df: Any) -> list[dict[str, Any]]:
    return df.to_dicts() if isinstance(df, pl.DataFrame) else df.to_dict("records")


def test_continuous_front_month_rolls_at_expiry_and_each_bar_says_its_month(client: Client) -> None:
    """TXF 202611 expires on Wednesday 2026-11-18 (third Wednesday): 1! is 202611 until that
    day and 202612 from the next; 2! is always the month after."""
    front = _rows(
        client.futopt.historical.candles(
            product="TXF", contractMonth="1!", start="2026-11-16", end="2026-11-20"
        )
    )
    assert [(str(r["date"])[:10], r["contract_month"]) for r in front] == [
        ("2026-11-16", "202611"),
        ("2026-11-17", "202611"),
        ("2026-11-18", "202611"),
        ("2026-11-19", "202612"),
        ("2026-11-20", "202612"),
    ]
    second = client.futopt.historical.candles(
        product="TXF", contractMonth="2!", start="2026-11-16", end="2026-11-20"
    )
    assert [r["contract_month"] for r in _rows(second)] == ["202612"] * 3 + ["202701"] * 2
    dec = _rows(
        client.futopt.historical.candles(
            product="TXF", contractMonth="202612", start="2026-11-16", end="2026-11-20"
        )
    )
    assert [r["close"] for r in dec[3:]] == [r["close"] for r in front[3:]]
    assert [r["close"] for r in dec[:3]] == [r["close"] for r in _rows(second)[:3]]


def test_daily_frames_have_the_documented_columns_and_dtypes(client: Client) -> None:
    df = client.futopt.historical.daily(product="TXF", date="2026-11-19")
    rows = _rows(df)
    options = [r for r in rows if r["call_put"] in ("CALL", "PUT")]
    assert len(options) == 20 and {r["contract_month"] for r in options} == {"202612"}
    assert rows[-20:] == options  # the nearest month's TXO rows at the money come last
    rows = rows[:-20]
    assert [r["contract_month"] for r in rows] == [
        "202612",
        "202701",
        "202702",
        "202703",
        "202706",
        "202612/202701",
        "202612/202702",
        "202612/202703",
        "202612/202706",
    ]  # the 3 nearest months and the next 2 quarterly ones; spreads: nearest vs each later
    if client.backend == "pandas":
        assert {c: str(df[c].dtype) for c in df.columns} == DAILY_DTYPES
    else:
        assert df.schema["date"] == pl.Date and df.schema["volume_spread"] == pl.Int64
        assert df.schema["close_price"] == pl.Float64 and df.schema["call_put"] == pl.Categorical
    outright, spread = rows[0], rows[5]
    assert outright["volume_spread"] in (None, pd.NA) and spread["volume_spread"] > 0
    assert spread["close_price"] == rows[1]["close_price"] - rows[0]["close_price"]
    assert spread["settlement_price"] is None or np.isnan(spread["settlement_price"])
    assert outright["open_interest"] > 0 and outright["settlement_price"] > 0


def test_weekly_options_and_untraded_strikes(client: Client) -> None:
    """2026-11-19 lists the weekly series expiring Wednesday 2026-11-25 (W4) and 2026-12-02
    (W1); their outermost strikes have not traded: null prices, volume 0."""
    df = client.futopt.historical.daily(product="TXO", date="2026-11-19")
    rows = _rows(df)
    months = sorted({r["contract_month"] for r in rows})
    assert months == ["202611W4", "202612", "202612W1", "202701", "202702", "202703", "202706"]
    weekly = [r for r in rows if r["contract_month"] == "202611W4"]
    strikes = sorted({r["strike_price"] for r in weekly})
    untraded = [r for r in weekly if r["strike_price"] in (strikes[0], strikes[-1])]
    assert len(untraded) == 4 and all(r["volume"] == 0 for r in untraded)
    assert all(r["close_price"] is None or np.isnan(r["close_price"]) for r in untraded)
    assert all(r["volume"] > 0 for r in weekly if r not in untraded)
    assert {r["call_put"] for r in rows} == {"CALL", "PUT"}


def test_option_candles_take_strike_and_side(client: Client) -> None:
    strike = next(
        r["strike_price"]
        for r in _rows(
            client.futopt.historical.daily(product="TXO", date="2026-11-19", contractMonth="202612")
        )
    )
    df = client.futopt.historical.candles(
        product="TXO",
        contractMonth="202612",
        strikePrice=strike,
        callPut="call",  # any case
        start="2026-11-19",
        end="2026-11-19",
    )
    (row,) = _rows(df)
    assert row["strike_price"] == strike and row["call_put"] == "CALL"
    assert row["contract_month"] == "202612" and str(row["date"])[:10] == "2026-11-19"


def test_a_strike_taken_from_a_frame_is_a_plain_number(client: Client) -> None:
    """A numpy float64 strike (``df["strike_price"].iloc[0]``) is sent and echoed as a
    number, not refused by the conversion as an unknown JSON type."""
    day = client.futopt.historical.daily(
        product="TXO", date="2026-11-19", contractMonth="202612", backend="pandas"
    )
    strike = day["strike_price"].iloc[0]
    assert isinstance(strike, np.float64)
    df = client.futopt.historical.candles(
        product="TXO",
        contractMonth="202612",
        strikePrice=strike,
        callPut="PUT",
        start="2026-11-19",
        end="2026-11-19",
    )
    assert [r["strike_price"] for r in _rows(df)] == [float(strike)]


def test_minute_candles_are_taipei_timestamps_with_average_and_transactions(client: Client) -> None:
    df = client.futopt.historical.candles(
        product="MXF",
        timeframe="60",
        start="2026-11-19",
        end="2026-11-20",
        fields="open,close,transaction",
    )
    rows = _rows(df)
    assert len(rows) == 10 and all(r["transaction"] > 0 for r in rows)
    assert all(r["high"] is None or np.isnan(r["high"]) for r in rows)  # not selected
    first = pd.Timestamp(rows[0]["date"])
    assert first.tz is not None and first.tz_convert(TZ) == pd.Timestamp("2026-11-19 08:45", tz=TZ)
    if client.backend == "pandas":
        assert str(df["date"].dtype) == "datetime64[us, Asia/Taipei]"
    else:
        assert df.schema["date"] == pl.Datetime("us", TZ)


def test_weekly_and_monthly_candles_are_dated_by_their_first_trading_day(client: Client) -> None:
    weeks = _rows(
        client.futopt.historical.candles(
            product="TXF", timeframe="W", start="2026-11-02", end="2026-11-20"
        )
    )
    assert [str(r["date"])[:10] for r in weeks] == ["2026-11-02", "2026-11-09", "2026-11-16"]
    days = _rows(
        client.futopt.historical.candles(product="TXF", start="2026-11-16", end="2026-11-20")
    )
    last = weeks[-1]
    assert last["contract_month"] == "202612"  # the period's last day's month
    assert last["high"] == max(d["high"] for d in days)
    assert last["volume"] == sum(d["volume"] for d in days)
    assert last["open"] == days[0]["open"] and last["close"] == days[-1]["close"]


def test_after_hours_session(client: Client) -> None:
    night = _rows(
        client.futopt.historical.daily(product="TXF", date="2026-11-19", session="afterhours")
    )
    day = _rows(client.futopt.historical.daily(product="TXF", date="2026-11-19"))
    assert {r["session"] for r in night} == {"AFTERHOURS"}
    assert [r["close_price"] for r in night] != [r["close_price"] for r in day]
    assert all(r["open_interest"] in (None, pd.NA) for r in night)


def test_the_dates_of_a_range_are_calendar_dates(client: Client) -> None:
    df = client.futopt.historical.candles(
        product="TXF", start=dt.date(2026, 11, 2), end="2026-11-06", timeframe="D"
    )
    if client.backend == "pandas":
        assert str(df["date"].dtype) == "datetime64[us]"
        assert df["date"].tolist() == list(pd.date_range("2026-11-02", "2026-11-06"))
    else:
        assert df.schema["date"] == pl.Date


def test_bang_and_slash_of_a_contract_month_are_percent_encoded_on_the_wire() -> None:
    """``1!`` goes out as ``1%21`` and a spread's ``/`` as ``%2F`` (the service decodes both);
    a spread month on daily answers that spread's row only."""
    from marketframe.sandbox import Sandbox

    with Sandbox(seed=7, now="2026-11-20T14:00:00+08:00") as sb:
        sb.stats.record_paths = True
        with Client(sb.api_key, base_url=sb.base_url, cache=False) as c:
            c.futopt.historical.candles(product="TXF", contractMonth="1!")
            spread = c.futopt.historical.daily(
                product="TXF", date="2026-11-19", contractMonth="202612/202701"
            )
        assert sb.stats.paths == [
            "/marketdata/v1.0/futopt/historical/candles/TXF?contractMonth=1%21",
            "/marketdata/v1.0/futopt/historical/daily/TXF?date=2026-11-19"
            "&contractMonth=202612%2F202701",
        ]
    assert spread["contract_month"].tolist() == ["202612/202701"]
    assert spread["volume_spread"].iloc[0] > 0


def test_todays_daily_rows_are_cached_for_a_minute_not_until_tomorrow() -> None:
    """During the session a daily row grows with every trade: its answer may be kept 60 s
    (like today's candles), never until the next morning like reference data."""
    from marketframe._http.transport import expire_after
    from marketframe.endpoints import ENDPOINTS

    now = dt.datetime(2026, 11, 20, 10, 30, tzinfo=dt.timezone(dt.timedelta(hours=8)))
    for values in ({"product": "TXF"}, {"product": "TXF", "date": now.date()}):
        assert 0 < expire_after(ENDPOINTS["futopt.historical.daily"], values, now) <= 60
