"""Indicators on frames: the ``md`` accessor and its typed functional form.

Importing this package registers ``df.md`` on pandas DataFrames at once, and on polars
DataFrames and LazyFrames when polars is imported (before or after marketframe: a
post-import hook, ``marketframe._lazy``, registers it, so ``import marketframe`` never loads
polars itself). For type checkers that cannot see
accessors, the same operations are functions here that return the frame type they are
given::

    from marketframe import frames
    out = frames.rsi(df, 14)          # == df.md.rsi(14)
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd

from marketframe.exceptions import MissingColumnsError

from .._lazy import when_imported
from ..exceptions import InvalidParamType
from ..indicators import (
    BBandsConvention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
)
from . import _pandas
from ._methods import IndicatorMethods


def _register_polars() -> None:
    """Import the polars adapter, whose import registers the ``md`` namespaces."""
    importlib.import_module(f"{__name__}._polars")


# Runs now if polars is already imported, else right after the user's first `import polars`.
when_imported("polars", _register_polars)

if TYPE_CHECKING:
    import polars as pl

FrameT = TypeVar("FrameT", "pd.DataFrame", "pl.DataFrame", "pl.LazyFrame")

__all__ = [
    "MissingColumnsError",
    "bbands",
    "ema",
    "indicator",
    "kdj",
    "macd",
    "rsi",
    "sma",
]


def _methods(df: Any) -> IndicatorMethods[Any]:
    if isinstance(df, pd.DataFrame):
        return _pandas.PandasIndicators(df)
    if "polars" in sys.modules:  # a polars frame implies polars is imported
        import polars as pl

        from . import _polars

        if isinstance(df, pl.LazyFrame):
            return _polars.PolarsLazyIndicators(df)
        if isinstance(df, pl.DataFrame):
            return _polars.PolarsIndicators(df)
    raise InvalidParamType(
        "marketframe.frames",
        "df",
        f"is a {type(df).__name__}: expected a pandas DataFrame or a polars DataFrame/LazyFrame",
    )


def indicator(
    df: FrameT,
    name: str,
    *periods: float,
    symbol: str | None = "symbol",
    date: str | None = "date",
    convention: Any = None,
    **columns: Any,
) -> FrameT:
    """``df.md.indicator(name, *periods)``: any indicator of the table by its name
    (``marketframe.indicators.registry``), its output columns appended."""
    return _methods(df).indicator(  # type: ignore[no-any-return]
        name, *periods, symbol=symbol, date=date, convention=convention, **columns
    )


def sma(
    df: FrameT,
    n: int = 20,
    *,
    column: str = "close",
    symbol: str | None = "symbol",
    date: str | None = "date",
) -> FrameT:
    """``df.md.sma(n)``: ``df`` with ``sma_{n}`` appended, computed per symbol."""
    return _methods(df).sma(n, column=column, symbol=symbol, date=date)  # type: ignore[no-any-return]


def ema(
    df: FrameT,
    n: int = 20,
    *,
    column: str = "close",
    symbol: str | None = "symbol",
    date: str | None = "date",
    convention: EmaConvention | str | None = None,
) -> FrameT:
    """``df.md.ema(n)``: ``df`` with ``ema_{n}`` appended."""
    return _methods(df).ema(  # type: ignore[no-any-return]
        n, column=column, symbol=symbol, date=date, convention=convention
    )


def rsi(
    df: FrameT,
    n: int = 14,
    *,
    column: str = "close",
    symbol: str | None = "symbol",
    date: str | None = "date",
    convention: RsiConvention | str | None = None,
) -> FrameT:
    """``df.md.rsi(n)``: ``df`` with ``rsi_{n}`` appended."""
    return _methods(df).rsi(  # type: ignore[no-any-return]
        n, column=column, symbol=symbol, date=date, convention=convention
    )


def macd(
    df: FrameT,
    fast: int = 12,
    slow: int = 26,
    signal: int = 9,
    *,
    column: str = "close",
    symbol: str | None = "symbol",
    date: str | None = "date",
    convention: MacdConvention | str | None = None,
) -> FrameT:
    """``df.md.macd()``: ``macd_12_26_9``, ``macd_signal_12_26_9``, ``macd_hist_12_26_9``."""
    return _methods(df).macd(  # type: ignore[no-any-return]
        fast, slow, signal, column=column, symbol=symbol, date=date, convention=convention
    )


def bbands(
    df: FrameT,
    n: int = 20,
    mult: float = 2.0,
    *,
    column: str = "close",
    symbol: str | None = "symbol",
    date: str | None = "date",
    convention: BBandsConvention | str | None = None,
) -> FrameT:
    """``df.md.bbands()``: ``bb_upper_20_2``, ``bb_middle_20_2``, ``bb_lower_20_2``."""
    return _methods(df).bbands(  # type: ignore[no-any-return]
        n, mult, column=column, symbol=symbol, date=date, convention=convention
    )


def kdj(
    df: FrameT,
    n: int = 9,
    m1: int = 3,
    m2: int = 3,
    *,
    high: str = "high",
    low: str = "low",
    close: str = "close",
    symbol: str | None = "symbol",
    date: str | None = "date",
    convention: KdjConvention | str | None = None,
) -> FrameT:
    """``df.md.kdj()``: ``kdj_k_9_3_3``, ``kdj_d_9_3_3``, ``kdj_j_9_3_3``."""
    return _methods(df).kdj(  # type: ignore[no-any-return]
        n,
        m1,
        m2,
        high=high,
        low=low,
        close=close,
        symbol=symbol,
        date=date,
        convention=convention,
    )
