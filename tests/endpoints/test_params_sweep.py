"""Property sweep (issue 17.15): for every endpoint and every parameter, bad values raise
``InvalidParams`` and no request reaches the server; any value at all gives either canonical
values or ``InvalidParams``, never another exception or a path that leaves the endpoint."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marketframe import Client, InvalidParams
from marketframe.endpoints import (
    DATE_SPAN,
    ENDPOINTS,
    Endpoint,
    Param,
    encode,
    is_request_value,
    validate,
)
from marketframe.sandbox import Sandbox

PAIRS = [(ep.name, p.name) for ep in ENDPOINTS.values() for p in ep.params]
_YMD = re.compile(r"\d{4}-\d{2}-\d{2}")


def _base(ep: Endpoint) -> dict[str, Any]:
    return dict(ep.example)  # the row's example call


class _Thing:
    def __str__(self) -> str:
        return "D"  # even an object that prints as an allowed value is refused


_OTHERS = st.one_of(
    st.binary(max_size=4),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
    st.builds(_Thing),
    st.builds(object),
    st.just(float("nan")),
    st.just(10**5000),
)


def bad_values(p: Param) -> st.SearchStrategy[Any]:
    """Values that break ``p``'s rules (never ``None``, which means 'omitted')."""
    allowed = set(p.allowed or ())
    if p.type == "enum":
        return st.one_of(
            st.text(max_size=8).filter(lambda s: s not in allowed),
            st.integers().filter(lambda i: str(i) not in allowed),
            st.floats(),
            st.booleans(),
            _OTHERS,
        )
    if p.type == "date":
        return st.one_of(
            st.text(max_size=12).filter(lambda s: not _YMD.fullmatch(s)),
            st.dates(max_value=DATE_SPAN[0] - dt.timedelta(days=1)),
            st.dates(min_value=DATE_SPAN[1] + dt.timedelta(days=1)),
            st.integers(),
            st.floats(),
            st.booleans(),
            _OTHERS,
        )
    if p.type == "bool":
        return st.one_of(st.integers(), st.text(max_size=5), st.floats(), _OTHERS)
    if p.type == "int":
        return st.one_of(
            st.integers(max_value=p.minimum - 1),
            st.integers(min_value=2**31),
            st.floats(),
            st.booleans(),
            st.text(max_size=4),
            _OTHERS,
        )
    if p.type == "float":
        return st.one_of(
            st.sampled_from([math.nan, math.inf, -math.inf]),
            st.booleans(),
            st.text(max_size=4),
            _OTHERS,
        )
    if p.type == "fields":
        return st.one_of(
            st.text(max_size=12).filter(
                lambda s: any(f.strip() not in allowed for f in s.split(","))
            ),
            st.lists(st.one_of(st.integers(), st.booleans()), min_size=1, max_size=3),
            st.integers(),
            st.booleans(),
            st.floats(),
            st.builds(object),
        )
    text = st.text(max_size=40)
    if p.in_path:
        # the package's own rule (a spread's '/' and a continuous month's '!' are valid)
        text = text.filter(lambda s: not is_request_value(s))
    else:
        text = st.text(alphabet=" \t\r\n", max_size=3)
    return st.one_of(text, st.integers(), st.floats(), st.booleans(), _OTHERS)


@pytest.fixture(scope="module")
def served(make_sandbox: Any) -> Iterator[tuple[Client, Sandbox]]:
    with make_sandbox() as (sb, c):
        yield c, sb


def test_the_path_value_rule_the_sweep_generates_against() -> None:
    """Spreads and continuous months are valid path values (CI once generated '0/0' as a
    "bad" symbol from the older rule and the package rightly sent it)."""
    for ok in ("2330", "0/0", "TXFL6/A7", "TXF1!", "MXFA6/C6"):
        assert is_request_value(ok), ok
    for bad in ("", "/x", "x/", "a//b", "./x", "x/..", "-x", "a b", "x" * 33, 2330):
        assert not is_request_value(bad), bad


@pytest.mark.parametrize(("name", "param"), PAIRS)
def test_bad_values_are_refused_before_any_request(
    served: tuple[Client, Sandbox], name: str, param: str
) -> None:
    client, sb = served
    ep = ENDPOINTS[name]
    p = ep.param_map[param]

    @settings(max_examples=30, deadline=None, database=None)
    @given(bad=bad_values(p), as_list=st.booleans())
    def check(bad: Any, as_list: bool) -> None:
        params = _base(ep)
        if p.in_path and as_list:  # one bad symbol in a list: nothing of the list is sent
            params[param] = [params[param], bad]
        else:
            params[param] = bad
        with pytest.raises(InvalidParams):
            client.load(name, **params)

    check()
    assert sb.requests_served == 0 and client.stats().requests == 0


ANYTHING = st.one_of(
    st.none(),
    st.text(max_size=12),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.dates(),
    st.datetimes(timezones=st.sampled_from([None, dt.UTC])),
    st.lists(st.text(max_size=6), max_size=3),
    _OTHERS,
)


@pytest.mark.parametrize("name", sorted(ENDPOINTS))
@settings(max_examples=60, deadline=None, database=None)
@given(data=st.data())
def test_any_value_is_canonical_or_invalid_params(name: str, data: st.DataObject) -> None:
    ep = ENDPOINTS[name]
    params = _base(ep)
    for p in data.draw(st.lists(st.sampled_from(ep.params), max_size=3, unique=True)):
        params[p.name] = data.draw(ANYTHING)
    if data.draw(st.booleans()):
        params[data.draw(st.text(min_size=1, max_size=6))] = data.draw(ANYTHING)
    try:
        values = validate(ep, params)
    except InvalidParams:
        return
    path, query = encode(ep, values)
    segments = path.split("/")
    assert ".." not in segments and "." not in segments
    assert len(segments) == len(ep.path.split("/"))  # the path stays the endpoint's
    assert all(isinstance(v, str) for v in query.values())
