"""Generated payloads: valid ones give the schema's dtypes, invalid ones raise SchemaError."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from marketframe.convert import to_pandas, to_polars, to_table
from marketframe.endpoints import ENDPOINTS, Endpoint
from marketframe.exceptions import SchemaError
from marketframe.schemas import Col

TZ8 = dt.timezone(dt.timedelta(hours=8))
text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=8)

VALID: dict[str, st.SearchStrategy[Any]] = {
    "float": st.one_of(
        st.integers(-(10**12), 10**12), st.floats(allow_nan=False, allow_infinity=False)
    ),
    "int": st.integers(-(2**53), 2**53),
    "int_str": st.one_of(st.integers(0, 10**8), st.integers(0, 10**8).map(lambda i: f"{i:08d}")),
    "time_us": st.integers(0, 4 * 10**15),
    "iso_time": st.datetimes(dt.datetime(2000, 1, 1), dt.datetime(2099, 1, 1)).map(
        lambda d: d.replace(tzinfo=TZ8).isoformat(timespec="milliseconds")
    ),
    "date": st.dates(dt.date(2000, 1, 1), dt.date(2099, 1, 1)).map(dt.date.isoformat),
    "date_or_time": st.dates(dt.date(2000, 1, 1), dt.date(2099, 1, 1)).map(dt.date.isoformat),
    "month": st.dates(dt.date(2000, 1, 1), dt.date(2099, 1, 1)).flatmap(
        lambda d: st.sampled_from([d.isoformat()[:7], d.isoformat()])
    ),
    "hhmmss": st.times().map(lambda t: t.strftime("%H%M%S")),
    "str": text,
    "cat": st.sampled_from(["TSE", "OTC", "EQUITY", "24", "01"]),
    "flag": st.booleans(),
}
ints = st.integers(-(2**63), 2**63 - 1)  # what orjson can write
_other = st.one_of(st.lists(ints, max_size=2), st.dictionaries(text, ints, max_size=1))
INVALID: dict[str, st.SearchStrategy[Any]] = {
    "float": st.one_of(text, st.booleans(), _other),
    "int": st.one_of(text, st.booleans(), _other, st.floats(0.1, 0.9).map(lambda f: f + 3)),
    "int_str": st.one_of(st.just("12a"), st.just(""), st.booleans(), _other),
    "time_us": st.one_of(text, st.booleans(), _other, st.just(1.5)),
    "iso_time": st.one_of(ints, st.booleans(), st.just("not a time"), _other),
    "date": st.one_of(ints, st.booleans(), st.just("2024-13-45"), _other),
    "date_or_time": st.one_of(ints, st.just("31/12/2024"), _other),
    "month": st.one_of(ints, st.booleans(), st.just("2024-13"), st.just("2024/01"), _other),
    "hhmmss": st.one_of(ints, st.just("25:61"), st.just("9999999"), _other),
    "str": st.one_of(ints, st.booleans(), st.floats(allow_nan=False, allow_infinity=False), _other),
    "cat": st.one_of(ints, st.booleans(), _other),
    "flag": st.one_of(ints, text, _other),
}


def _put(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    obj: Any = doc
    for i, key in enumerate(path[:-1]):
        nxt = path[i + 1]
        if isinstance(key, int):
            while len(obj) <= key:
                obj.append({})
            obj = obj[key]
        else:
            obj = obj.setdefault(key, [] if isinstance(nxt, int) else {})
    obj[path[-1]] = value


ABSENT = object()  # a field left out (a string sentinel could be drawn as a value: it was)


def _value(draw: Any, col: Col, keep: bool) -> Any:
    if not col.required and not keep:
        return draw(st.sampled_from([ABSENT, None]))
    return draw(VALID[col.kind])


@st.composite
def payloads(draw: Any, ep: Endpoint, bad: bool = False) -> tuple[dict[str, Any], str]:
    schema = ep.schema
    doc: dict[str, Any] = {}
    rows: list[dict[str, Any]] = [{} for _ in range(draw(st.integers(1, 4)))]
    broken = draw(st.sampled_from(schema.columns)) if bad else None
    for col in schema.columns:
        targets = [doc] if col.envelope or not schema.rows else rows
        for target in targets:
            if col is broken:
                value = draw(INVALID[col.kind])
            else:
                value = _value(draw, col, draw(st.booleans()))
            if value is not ABSENT or col is broken:
                _put(target, col.path, value)
    if schema.explode is not None:  # the items of each row's list: one here, wrapped
        for row in rows:
            if schema.explode in row:
                row[schema.explode] = [row[schema.explode]]
    if schema.rows:
        doc["data"] = rows
    return doc, (broken.wire_name if broken else "")


NAMES = sorted(ENDPOINTS)
FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", NAMES)
def test_valid_payloads_give_the_schema_dtypes(name: str) -> None:
    ep = ENDPOINTS[name]
    expected = ep.schema.arrow()

    @FAST
    @given(payloads(ep))
    def check(case: tuple[dict[str, Any], str]) -> None:
        doc, _ = case
        t = to_table(orjson.dumps(doc), ep)
        assert t.schema.names[: len(expected)] == expected.names
        for f in expected:
            assert t.schema.field(f.name).type == f.type, f.name
        df = to_pandas(t)
        pl = to_polars(t)
        assert len(df) == len(pl) == t.num_rows
        # the Arrow-reader fast path gives the same table as the orjson path
        assert to_table(orjson.dumps(doc), ep, engine="arrow").equals(t)

    check()


@pytest.mark.parametrize("name", NAMES)
def test_invalid_payloads_raise_schema_error(name: str) -> None:
    ep = ENDPOINTS[name]

    @FAST
    @given(payloads(ep, bad=True))
    def check(case: tuple[dict[str, Any], str]) -> None:
        doc, field = case
        for engine in ("python", "arrow"):
            with pytest.raises(SchemaError) as info:
                to_table(orjson.dumps(doc), ep, engine=engine)
            assert info.value.endpoint == name
            assert info.value.field == field

    check()


@pytest.mark.parametrize("engine", ["python", "arrow"])
@pytest.mark.parametrize("name", ["stock.snapshot.quotes", "stock.snapshot.movers"])
def test_the_first_bad_envelope_field_is_the_one_named(name: str, engine: str) -> None:
    """A snapshot's ``time`` is built on its ``date``: a bad date is the date's error (the
    envelope's fields are typed together, and the error still follows the schema's order)."""
    doc = {"date": "2024-13-45", "time": "133000", "symbol": "", "data": [{"symbol": ""}]}
    with pytest.raises(SchemaError) as info:
        to_table(orjson.dumps(doc), name, engine=engine)
    assert info.value.field == "date"
