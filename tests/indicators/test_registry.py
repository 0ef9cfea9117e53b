"""The indicator table: a row that contradicts itself fails when it is made, and what is
still written outside the rows (the typed signatures of the kernels, the ``md`` methods and
their functional form, the service's parameter names) agrees with them."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from marketframe import frames
from marketframe import indicators as ind
from marketframe.endpoints import ENDPOINTS
from marketframe.exceptions import DefinitionError
from marketframe.frames._methods import IndicatorMethods
from marketframe.indicators import Chart, Period, registry
from marketframe.indicators import stateful as sf


def _defaults(fn: Any, periods: list[str]) -> list[Any]:
    params = inspect.signature(fn).parameters
    return [params[name].default for name in periods]


@pytest.mark.parametrize("name", ind.INDICATORS)
def test_typed_signatures_have_the_rows_periods_and_defaults(name: str) -> None:
    row = registry.get(name)
    periods = [p.name for p in row.periods]
    want = list(row.defaults)
    for fn in (row.kernel, getattr(IndicatorMethods, name), getattr(frames, name)):
        assert _defaults(fn, periods) == want, fn
    assert sf.spec(name).params == row.defaults
    assert getattr(ind, name) is row.kernel


def test_technical_endpoints_take_their_defaults_from_the_rows() -> None:
    for ep in ENDPOINTS.values():
        if (t := ep.technical) is not None:
            row = registry.get(t.local)
            assert list(t.defaults.values()) == list(row.defaults[: len(t.params)]), ep.name
            assert set(t.results) <= set(getattr(row.result, "_fields", ()))


ROW = registry.get("macd")


@pytest.mark.parametrize(
    "change,problem",
    [
        ({"name": "Bad name"}, "name must be lower case"),
        ({"inputs": ("close", "turnover")}, "inputs must be some of"),
        ({"periods": (Period("fast", 12), Period("slow", 26))}, "the kernel's periods"),
        ({"periods": (Period("fast", 5), Period("slow", 26), Period("signal", 9))}, "fast=12"),
        ({"outputs": ("macd",)}, "does not match the outputs"),
        ({"default": "tradingview"}, "is not one of the variants"),
        ({"variants": {"talib": ind.EmaConvention()}}, "every variant must be a MacdConvention"),
        ({"kernel": lambda x, fast=12, slow=26, signal=9: x}, "takes no convention="),
    ],
)
def test_a_row_that_contradicts_itself_fails_when_made(
    change: dict[str, Any], problem: str
) -> None:
    with pytest.raises(DefinitionError, match=f"indicator row .*{problem}"):
        dataclasses.replace(ROW, **change)


def test_a_taken_name_is_not_registered_again() -> None:
    with pytest.raises(DefinitionError, match="'macd' is already registered"):
        registry.register(ROW)
    assert registry.get("macd") is ROW


def test_every_row_is_drawn_where_its_chart_says() -> None:
    from marketframe.plot import _artists

    below = _artists.panel_prefixes()
    assert set(below) == {"rsi", "macd", "kdj"}
    assert _artists.panel_chart("rsi") == Chart("rsi", levels=(30, 70), guides=True)
    assert {"sma", "ema", "bb_"} <= set(_artists.overlay_prefixes())
    assert below["kdj"] == ("kdj_k", "kdj_d", "kdj_j", "k", "d", "j")
