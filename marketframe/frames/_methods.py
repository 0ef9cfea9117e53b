"""The indicator methods shared by every ``md`` accessor; each backend supplies ``_apply``.

Every row of the indicator table (``marketframe.indicators.registry``) is a method:
``df.md.indicator(name, *periods, ...)``, also spelled ``df.md.<name>(...)``. The built-in
ones are also written out below, for their signatures (typed, with their defaults).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, cast

from ..exceptions import InvalidParams, InvalidParamType, did_you_mean
from ..indicators import (
    BBandsConvention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
    registry,
)
from . import _core

if TYPE_CHECKING:  # matplotlib is the optional ``plot`` extra
    from matplotlib.figure import Figure

F = TypeVar("F")
P = ParamSpec("P")
R = TypeVar("R")

#: other libraries' keywords (pandas-ta, TA-Lib, pandas' rolling) for a parameter here:
#: ``0`` the indicator's first period (``rsi``'s ``n``), else the parameter of that name
FOREIGN: Mapping[str, int | str] = {
    **dict.fromkeys(("period", "length", "timeperiod", "window", "lookback", "span"), 0),
    **dict.fromkeys(("fastperiod", "fast_period"), "fast"),
    **dict.fromkeys(("slowperiod", "slow_period"), "slow"),
    **dict.fromkeys(("signalperiod", "signal_period"), "signal"),
    **dict.fromkeys(("std", "nbdev", "nbdevup", "nbdevdn", "num_std", "stddev"), "mult"),
    **dict.fromkeys(("price", "source", "src", "real"), "column"),
}


def unknown_keyword(where: str, key: str, value: object, names: Sequence[str]) -> InvalidParamType:
    """The error of a keyword ``where`` does not take (``names``: those it does), naming
    the right one for another library's word (``rsi(period=14)``: ``n=14``)."""
    right = FOREIGN.get(key)
    right = names[0] if right == 0 and names else right
    if isinstance(right, str) and right in names:
        problem = f"is not a parameter of {where} (another library's word): write {right}={value!r}"
    else:
        problem = f"is not a parameter of {where}{did_you_mean(key, names)}"
    return InvalidParamType(where, key, problem, ", ".join(names))


def check_call(where: str, sig: inspect.Signature, args: tuple[Any, ...], kwargs: Any) -> None:
    """``args``/``kwargs`` bound to ``sig`` (its first parameter, the frame, in ``args``),
    else an :class:`InvalidParamType` naming what ``where`` takes, not Python's TypeError
    naming an internal function."""
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        params = list(sig.parameters.values())[1:]
        names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        for key, value in kwargs.items():
            if key not in names:
                raise unknown_keyword(where, key, value, names) from None
        positional = [p.name for p in params if p.kind == p.POSITIONAL_OR_KEYWORD]
        given = len(args) - 1
        if given > len(positional):
            raise InvalidParamType(
                where,
                "args",
                f"takes {len(positional)} value(s) by position, got {given}",
                f"{', '.join(positional) or 'none'} by position; the others by name: "
                + ", ".join(n for n in names if n not in positional),
            ) from None
        twice = next(k for k in kwargs if k in positional[:given])
        raise InvalidParamType(
            where, twice, "is given twice, by position and by name", "one of them"
        ) from None


def checked(method: Callable[P, R]) -> Callable[P, R]:
    """An ``md`` method whose arguments that do not fit its signature are refused by
    :func:`check_call` (``df.md.rsi(period=14)`` names ``n=14``): checked only when the call
    raises a ``TypeError``, so a call that fits costs nothing more (arguments that do not
    fit fail before the method's body runs)."""
    sig = inspect.signature(method)
    where = f"md.{method.__name__}"

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except TypeError:
            check_call(where, sig, args, kwargs)  # the call's own arguments: ours
            raise  # raised inside, with arguments that fit

    return call


class IndicatorMethods(Generic[F]):
    """Each method returns the frame with new columns appended, computed per symbol.

    ``symbol``/``date``: the columns that identify a symbol and order its bars. At their
    defaults they are used if present (a frame without ``symbol`` is one series; without
    ``date`` the row order is the time order); pass None to ignore them.
    """

    def __init__(self, frame: F) -> None:
        self._frame = frame  # the accessor's frame (a Series accessor holds its own Series)

    def _apply(self, request: _core.Request, symbol: str | None, date: str | None) -> F:
        raise NotImplementedError

    def _takes(self, row: registry.Indicator) -> None:
        """Raises if the accessor cannot give the indicator its inputs (one Series)."""

    def indicator(
        self,
        /,
        name: str,
        *periods: float,
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: object = None,
        **columns: Any,
    ) -> F:
        """Any indicator of the table by its name: ``df.md.indicator("rsi", 14)`` is
        ``df.md.rsi(14)``. ``periods`` in the row's order (missing ones: its defaults), or by
        name (``slow=30``); the input columns by the row's input names (``close="adj"``,
        ``high="High"``), or ``column=`` for an indicator of one input."""
        row = registry.get(name)
        self._takes(row)
        values = dict(zip((p.name for p in row.periods), row.defaults, strict=True))
        if len(periods) > len(row.periods):
            raise InvalidParams(
                f"md.{name}", "periods", f"takes {len(row.periods)} values, got {len(periods)}"
            )
        values.update(zip(list(values), periods, strict=False))
        inputs = dict(zip(row.inputs, row.inputs, strict=True))
        for key, value in columns.items():
            if key in values:
                values[key] = value
            elif key in inputs or (key == "column" and len(inputs) == 1):
                inputs[row.inputs[0] if key == "column" else key] = value
            else:
                allowed = [*values, *inputs] + (["column"] if len(inputs) == 1 else [])
                raise unknown_keyword(f"md.{name}", key, value, allowed)
        request = _core.request(name, tuple(values.values()), tuple(inputs.values()), convention)
        return self._apply(request, symbol, date)

    def __getattr__(self, name: str) -> Callable[..., F]:
        """``df.md.<name>(...)`` for a row of the indicator table without a method here."""
        if name.startswith("_") or name not in registry.names():
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return functools.partial(self.indicator, name)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *registry.names()})

    def plot(self, **options: Any) -> Figure:
        """A candlestick chart with volume and the indicator columns already on the frame
        (``df.md.sma(20).md.rsi(14).md.plot()``); returns the matplotlib ``Figure``. Options
        as :func:`marketframe.plot.candles` (``title``, ``volume``, ``columns``, ``last``,
        ``symbol``); a frame of several symbols gets one block of panels per symbol."""
        from marketframe.plot import candles

        check_call("md.plot", inspect.signature(candles), (self._frame,), options)
        return candles(cast(Any, self._frame), **options)  # F: a frame of candles' kinds

    @checked
    def sma(
        self,
        n: int = 20,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
    ) -> F:
        """Simple moving average -> ``sma_{n}`` (``{column}_sma_{n}`` if column != close)."""
        return self._apply(_core.sma_request(n, column, None), symbol, date)

    @checked
    def ema(
        self,
        n: int = 20,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: EmaConvention | str | None = None,
    ) -> F:
        """Exponential moving average -> ``ema_{n}``."""
        return self._apply(_core.ema_request(n, column, convention), symbol, date)

    @checked
    def rsi(
        self,
        n: int = 14,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: RsiConvention | str | None = None,
    ) -> F:
        """Wilder RSI -> ``rsi_{n}``."""
        return self._apply(_core.rsi_request(n, column, convention), symbol, date)

    @checked
    def macd(
        self,
        fast: int = 12,
        slow: int = 26,
        signal: int = 9,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: MacdConvention | str | None = None,
    ) -> F:
        """MACD -> ``macd_{f}_{s}_{g}``, ``macd_signal_{f}_{s}_{g}``, ``macd_hist_{f}_{s}_{g}``."""
        request = _core.macd_request(fast, slow, signal, column, convention)
        return self._apply(request, symbol, date)

    @checked
    def bbands(
        self,
        n: int = 20,
        mult: float = 2.0,
        *,
        column: str = "close",
        symbol: str | None = "symbol",
        date: str | None = "date",
        convention: BBandsConvention | str | None = None,
    ) -> F:
        """Bollinger bands -> ``bb_upper_{n}_{mult}``, ``bb_middle_...``, ``bb_lower_...``."""
        request = _core.bbands_request(n, mult, column, convention)
        return self._apply(request, symbol, date)

    @checked
    def kdj(
        self,
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
    ) -> F:
        """KDJ -> ``kdj_k_{n}_{m1}_{m2}``, ``kdj_d_...``, ``kdj_j_...``."""
        request = _core.kdj_request(n, m1, m2, high, low, close, convention)
        return self._apply(request, symbol, date)


class SeriesMethods(IndicatorMethods[F]):
    """The methods on one Series (``close.md.rsi(14)``): an indicator of several inputs
    (KDJ: high, low and close) is a clear error there."""

    def _takes(self, row: registry.Indicator) -> None:
        if len(row.inputs) > 1:
            fields = f"{', '.join(row.inputs[:-1])} and {row.inputs[-1]}"
            raise InvalidParams(
                "md",
                row.name,
                f"needs {fields}, not one Series",
                f"df.md.{row.name}() on a frame with {fields} columns",
            )

    def kdj(self, *args: Any, **kwargs: Any) -> F:
        """KDJ needs high, low and close: call it on a frame (``df.md.kdj()``)."""
        return self.indicator("kdj", *args, **kwargs)
