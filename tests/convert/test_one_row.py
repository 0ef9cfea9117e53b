"""A one-row answer (a quote, a ticker) is typed whole: the same table as column by column."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import orjson
import pyarrow as pa
import pytest
import requests
from sandbox.spec_table import ENDPOINTS

from marketframe.convert import parse
from marketframe.convert._build import _envelope_values, _minute, _shape, build, by_column
from marketframe.endpoints import get
from marketframe.exceptions import SchemaError

from .test_convert_samples import CASES as SAMPLE_CASES
from .test_extra_samples import CASES as EXTRA_CASES

SAMPLES = Path(__file__).parents[1] / "data" / "samples"
QUOTE = (SAMPLES / "stock_intraday_quote.json").read_bytes()


def typed_whole(body: bytes, endpoint: str, params: dict[str, Any]) -> bool:
    """Whether ``build`` types this answer whole (its one-row path) rather than by column."""
    source = get(endpoint)
    parsed = parse(body, source)
    shape = _shape(source, _minute(parsed, params))
    if not shape.one_row_only:
        return False
    values = _envelope_values(shape, source, parsed.envelope, params)
    units = {c.name: "x" for c, _ in shape.envelope if c.unit}
    return shape.whole(source.name, values, units) is not None


def same_both_ways(body: bytes, endpoint: str, params: dict[str, Any]) -> pa.Table:
    source = get(endpoint)
    whole = build(parse(body, source), source, params)
    columns = by_column(parse(body, source), source, params)
    assert whole.schema.equals(columns.schema, check_metadata=True), (whole.schema, columns.schema)
    for f in whole.schema:  # field metadata (units, nullable booleans) too
        assert f.metadata == columns.schema.field(f.name).metadata, f.name
    assert whole.equals(columns)
    return whole


def test_the_quote_is_typed_whole_and_equals_the_column_by_column_table() -> None:
    assert typed_whole(QUOTE, "stock.intraday.quote", {})
    t = same_both_ways(QUOTE, "stock.intraday.quote", {})
    assert t.num_rows == 1 and t.num_columns > 80


@pytest.mark.parametrize("name", sorted({**SAMPLE_CASES, **EXTRA_CASES}))
def test_every_real_payload_is_the_same_both_ways(name: str) -> None:
    endpoint, params = {**SAMPLE_CASES, **EXTRA_CASES}[name]
    same_both_ways((SAMPLES / f"{name}.json").read_bytes(), endpoint, dict(params))


def test_every_one_row_endpoint_of_the_sandbox_is_the_same_both_ways(sandbox: Any) -> None:
    whole = []
    for name, (path, *_) in ENDPOINTS.items():
        r = requests.get(
            f"{sandbox.base_url}/{path}", headers={"X-API-KEY": sandbox.api_key}, timeout=30
        )
        assert r.status_code == 200, (name, r.text)
        params = dict(parse_qsl(path.partition("?")[2]))
        same_both_ways(r.content, name, params)
        if typed_whole(r.content, name, params):
            whole.append(name)
    # the one-row path is taken, for the quotes and tickers of both markets
    assert {"stock.intraday.quote", "stock.intraday.ticker"} <= set(whole), whole
    assert any(n.startswith("futopt.intraday.") for n in whole), whole


def edited(**changes: Any) -> bytes:
    doc = orjson.loads(QUOTE)
    for path, value in changes.items():
        *parents, last = path.split("__")
        obj = doc
        for key in parents:
            obj = obj.setdefault(key, {})
        if value is KeyError:
            obj.pop(last, None)
        else:
            obj[last] = value
    return orjson.dumps(doc)


@pytest.mark.parametrize(
    "changes",
    [
        {"isLimitUpPrice": KeyError, "isTrial": True},  # an absent flag is False
        {"type": "INDEX"},  # lots become TWD
        {"market": "ESB"},  # lots become shares
        {"brandNew": 3, "total__newCount": 7},  # unknown fields, top level and nested
        {"newObject": {"a": 1, "b": "x"}},  # an unknown object, flattened
        {"lastPrice": None},  # a missing value
        {"lastPrice": 1775},  # an integer where a float may be
    ],
    ids=["flag", "index", "esb", "extras", "object", "null", "int-float"],
)
def test_edited_quotes_are_the_same_both_ways(changes: dict[str, Any]) -> None:
    body = edited(**changes)
    assert typed_whole(body, "stock.intraday.quote", {})
    same_both_ways(body, "stock.intraday.quote", {})
    same_both_ways(body, "stock.intraday.quote", {"type": "oddlot"})  # odd lots: shares


@pytest.mark.parametrize(
    "changes",
    [
        {"lastPrice": "1775"},  # a string for a number
        {"total__tradeVolume": 2**63},  # past int64
        {"total__tradeVolume": 1.5},  # a fraction for an integer
        {"symbol": KeyError},  # a required field missing
        {"date": "2026-13-40"},  # not a date
    ],
    ids=["string", "int64", "fraction", "required", "date"],
)
def test_a_bad_value_gets_the_column_by_column_error(changes: dict[str, Any]) -> None:
    body = edited(**changes)
    source = get("stock.intraday.quote")
    with pytest.raises(SchemaError) as by_col:
        by_column(parse(body, source), source, {})
    with pytest.raises(SchemaError) as whole:
        build(parse(body, source), source, {})
    assert str(whole.value) == str(by_col.value)
