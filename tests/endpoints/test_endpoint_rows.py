"""Endpoint rows are keyword-only data that check themselves at import (issue 14, items 1, 7)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from marketframe import schemas
from marketframe.endpoints import ENDPOINTS, SYMBOL, Endpoint
from marketframe.schemas import Col
from marketframe.schemas.stock import STOCK_QUOTE as QUOTE

_OK: dict[str, Any] = {
    "name": "stock.x.y",
    "path": "/stock/x/y/{symbol}",
    "params": (SYMBOL,),
    "schema": QUOTE,
    "freshness": "intraday",
}


def test_a_row_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        Endpoint(
            "stock.x.y",
            "/stock/x/y/{symbol}",
            (SYMBOL,),  # type: ignore[misc]
            QUOTE,
            "intraday",
        )
    assert Endpoint(**_OK).schema is QUOTE


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"schema": "stock_quote"}, "schema is a str"),  # a string name fails at once
        ({"freshness": "live"}, "freshness 'live'"),
        ({"plan": "premium"}, "plan 'premium'"),
        ({"date_range": ("from_", "to")}, "date_range names 'from_'"),
        ({"example": {"symbl": "2330"}}, "example names 'symbl'"),
        ({"minute_range": "forbidden"}, "minute rules without a timeframe"),
        ({"path": "/stock/x/y/{symbl}"}, "path placeholders ['symbl']"),
        ({"keys": ("symbol", "dat")}, "keys ['dat'] are not columns"),
    ],
)
def test_a_row_that_contradicts_itself_fails_when_built(change: dict[str, Any], named: str) -> None:
    with pytest.raises(TypeError, match="stock.x.y") as info:
        Endpoint(**{**_OK, **change})
    assert named in str(info.value)


def test_every_row_carries_its_schema_object_and_is_hashable() -> None:
    known = {id(s) for s in schemas.SCHEMAS.values()}
    for ep in ENDPOINTS.values():
        assert id(ep.schema) in known, ep.name
    assert len({hash(ep) for ep in ENDPOINTS.values()}) == len(ENDPOINTS)


def test_technical_rows_carry_warmup_outputs_and_defaults() -> None:
    tech = {ep.short_name: ep for ep in ENDPOINTS.values() if ep.technical}
    assert set(tech) == {n.rsplit(".", 1)[1] for n in ENDPOINTS if ".technical." in n}
    assert tech["macd"].outputs == ("macd_line", "signal_line")
    assert tech["macd"].technical.warmup({"slow": 26, "signal": 9}) == 35  # type: ignore[union-attr]
    for ep in tech.values():
        assert ep.minute_range == "ignored" and set(ep.technical.defaults) <= set(ep.param_map)
    from marketframe.crosscheck import SPECS  # the cross-check reads the same rows

    assert {k: (v.endpoint, v.outputs) for k, v in SPECS.items()} == {
        k: (ep.name, ep.outputs) for k, ep in tech.items()
    }


def test_col_flags_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Col("time", ("time",), "time_us", None, False, True)  # type: ignore[misc]
    col = Col("time", ("time",), "time_us", required=True)
    assert col.required and not col.envelope
    assert [f.name for f in dataclasses.fields(Col) if f.kw_only] == [
        "envelope",
        "required",
        "param",
    ]


def test_a_schema_with_two_columns_of_one_name_fails_at_build() -> None:
    from marketframe.schemas._core import col, schema

    with pytest.raises(TypeError, match="duplicate columns"):
        schema([col("a", "int"), col("a", "float")], rows=True)
