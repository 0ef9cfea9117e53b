"""Every real payload of ``samples/extra`` (copies in tests/data/samples) converts exactly.

"Exactly" is checked leaf by leaf: every value of the JSON payload is found, unchanged, in the
column the endpoint's schema names for its path (or in an extra column when the schema does
not know it), with the dtype its kind promises; nothing is dropped and nothing invented (a
column whose path is absent from the payload is all null / False). Expected values are
derived here from the JSON, independently of the conversion code.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest

from marketframe.convert import to_pandas, to_table
from marketframe.endpoints import ENDPOINTS
from marketframe.schemas import snake

SAMPLES = Path(__file__).parents[1] / "data" / "samples"
TAIPEI = "Asia/Taipei"

#: sample file -> (endpoint, request parameters the payload answers)
CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "stock_snapshot_heatmap": ("stock.snapshot.heatmap", {"symbol": "IX0001"}),
    "stock_intraday_quote_20260916": ("stock.intraday.quote", {"symbol": "2330"}),
    "futopt_historical_daily_TXF_20260916": ("futopt.historical.daily", {"product": "TXF"}),
    "futopt_historical_daily_TXO_20261002": ("futopt.historical.daily", {"product": "TXO"}),
    "futopt_historical_candles_TXF_tf5_20260916": (
        "futopt.historical.candles",
        {"product": "TXF", "contractMonth": "1!", "timeframe": "5"},
    ),
}

#: pandas dtype of each schema kind
DTYPES = {
    "float": "float64",
    "int": "Int64",
    "int_str": "Int64",
    "str": {"str", "string", "object"},
    "cat": "category",
    "flag": "bool",
    "date": "datetime64[us]",
    "time_us": f"datetime64[us, {TAIPEI}]",
    "iso_time": f"datetime64[us, {TAIPEI}]",
    "hhmmss": f"datetime64[us, {TAIPEI}]",
}


def _walk(obj: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        if isinstance(key, int):
            obj = obj[key] if isinstance(obj, list) and key < len(obj) else None
        else:
            obj = obj.get(key) if isinstance(obj, dict) else None
        if obj is None:
            return None
    return obj


def _leaves(obj: Any, prefix: tuple[str | int, ...] = ()) -> dict[tuple[str | int, ...], Any]:
    if isinstance(obj, dict):
        out: dict[tuple[str | int, ...], Any] = {}
        for k, v in obj.items():
            out.update(_leaves(v, (*prefix, k)))
        return out
    if isinstance(obj, list) and obj and all(isinstance(x, dict) for x in obj):
        out = {}
        for i, v in enumerate(obj):
            out.update(_leaves(v, (*prefix, i)))
        return out
    return {prefix: obj}


def _expected(kind: str, value: Any, envelope: dict[str, Any]) -> Any:
    """The frame value a JSON ``value`` of ``kind`` must become (None: missing)."""
    if value is None:
        return False if kind == "flag" else None
    if kind == "time_us":
        return pd.Timestamp(value, unit="us", tz="UTC").tz_convert(TAIPEI)
    if kind == "date":
        return pd.Timestamp(dt.date.fromisoformat(value))
    if kind == "iso_time":
        return pd.Timestamp(value).tz_convert(TAIPEI)
    if kind == "hhmmss":
        day = dt.date.fromisoformat(envelope["date"])
        return pd.Timestamp(
            dt.datetime.combine(day, dt.time(int(value[:2]), int(value[2:4]), int(value[4:]))),
            tz=TAIPEI,
        )
    if kind == "int_str":
        return int(value)
    return value


def _same(got: Any, want: Any) -> bool:
    if want is None:
        return (
            got is None
            or got is pd.NA
            or got is pd.NaT
            or (isinstance(got, float) and math.isnan(got))
        )
    if isinstance(want, float) or isinstance(got, float):
        return float(got) == float(want)
    return bool(got == want)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_leaf_arrives_unchanged_with_its_dtype(name: str) -> None:
    endpoint, params = CASES[name]
    schema = ENDPOINTS[endpoint].schema
    payload = orjson.loads((SAMPLES / f"{name}.json").read_bytes())
    df = to_pandas(to_table((SAMPLES / f"{name}.json").read_bytes(), endpoint, params))
    rows = payload.get("data", []) if schema.rows else [None]
    envelope = {k: v for k, v in payload.items() if not (schema.rows and k == "data")}
    assert len(df) == len(rows)
    covered: set[tuple[str, tuple[str | int, ...]]] = set()
    minute = str(params.get("timeframe", "D")) not in ("D", "W", "M")
    for col in schema.columns:
        kind = col.kind if col.kind != "date_or_time" else "iso_time" if minute else "date"
        want_dtype = DTYPES[kind]
        got_dtype = str(df[col.name].dtype)
        assert (
            got_dtype in want_dtype if isinstance(want_dtype, set) else got_dtype == want_dtype
        ), (col.name, got_dtype)
        for i, row in enumerate(rows):
            source = envelope if col.envelope else row
            value = _walk(source, col.path)
            if value is None and col.param and col.envelope:
                value = params.get(col.param)
            want = _expected(kind, value, envelope)
            got = df[col.name].iloc[i]
            assert _same(got, want), f"{name} row {i} {col.name}: {got!r} != {want!r}"
            covered.add(("env" if col.envelope else "row", col.path))
    # every leaf the schema does not name is kept as an extra column, value unchanged (but
    # the envelope's echoes of request parameters that the schema lists as ignored)
    for where, items in (("env", [envelope]), ("row", rows)):
        for i, item in enumerate(items):
            if item is None:
                continue
            for path, value in _leaves(item).items():
                if (where, path) in covered or (where == "env" and path[0] in schema.ignore):
                    continue  # (ignored: an echo of a request parameter, not data)
                extra = "_".join(snake(str(p)) for p in path if not isinstance(p, int))
                assert extra in df.columns, f"{name}: {'.'.join(map(str, path))} was dropped"
                got = df[extra].iloc[i if where == "row" else 0]
                assert _same(got, value), (name, path, got, value)


def test_heatmap_sample_values() -> None:
    """The real heatmap (two rows of a prod answer): the index row first, lots and TWD."""
    raw = (SAMPLES / "stock_snapshot_heatmap.json").read_bytes()
    df = to_pandas(to_table(raw, "stock.snapshot.heatmap", {"symbol": "IX0001"}))
    assert list(df["type"]) == ["INDEX", "EQUITY"]
    assert df["time"].iloc[0] == pd.Timestamp("2026-09-18 13:35:00", tz=TAIPEI)
    tsmc = df.iloc[1]
    assert tsmc["symbol"] == "2330" and tsmc["industry"] == "24"
    assert tsmc["trade_volume"] == 35250 and tsmc["trade_value"] == 86542720000
    assert tsmc["trade_value_weight"] == 8.049995082988904
    assert pd.isna(df["trade_value_weight"].iloc[0])  # the index row has no weights
    assert df.attrs["units"]["trade_volume"] == "lots"
    # tradeValueWeight is the constituent's share of the index row's trade value
    assert tsmc["trade_value"] / df["trade_value"].iloc[0] * 100 == pytest.approx(
        tsmc["trade_value_weight"], rel=1e-12
    )
