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
import inspect
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar, cast

import pandas as pd

from marketframe.exceptions import MissingColumnsError

from .._lazy import when_imported
from ..exceptions import InvalidParamType
from . import _pandas
from ._methods import IndicatorMethods


def _register_polars() -> None:
    """Import the polars adapter, whose import registers the ``md`` namespaces."""
    importlib.import_module(f"{__name__}._polars")


# Runs now if polars is already imported, else right after the user's first `import polars`.
when_imported("polars", _register_polars)

if TYPE_CHECKING:
    import polars as pl

P = ParamSpec("P")
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


def _function(
    method: Callable[Concatenate[IndicatorMethods[Any], P], object],
) -> Callable[Concatenate[FrameT, P], FrameT]:
    """The functional form of an ``md`` method: ``f(df, ...)`` is ``df.md.f(...)``, with the
    method's parameters and defaults (its signature, ``df`` first) and the frame type it is
    given as its return type."""
    name = method.__name__

    def function(df: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(_methods(df), name)(*args, **kwargs)

    signature: inspect.Signature = inspect.signature(method)
    first = inspect.Parameter("df", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation="FrameT")
    # inspect reads __signature__; a function does not declare it to the stubs
    function.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[first, *list(signature.parameters.values())[1:]], return_annotation="FrameT"
    )
    function.__name__ = function.__qualname__ = name
    function.__module__ = __name__
    function.__doc__ = f"``df.md.{name}(...)`` as a function of ``df``. {method.__doc__}"
    # ``df`` is also accepted by name here, which Concatenate cannot say: the run-time
    # function takes more than the type promises, never less
    return cast("Callable[Concatenate[FrameT, P], FrameT]", function)


indicator = _function(IndicatorMethods.indicator)
sma = _function(IndicatorMethods.sma)
ema = _function(IndicatorMethods.ema)
rsi = _function(IndicatorMethods.rsi)
macd = _function(IndicatorMethods.macd)
bbands = _function(IndicatorMethods.bbands)
kdj = _function(IndicatorMethods.kdj)
