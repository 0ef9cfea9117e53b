"""What a stateful indicator is: ``IndicatorSpec`` (indicator, periods, resolved convention).

The bottom of ``marketframe.indicators.stateful``: the spec checks its periods and
convention, names its outputs and describes itself as JSON; the machines and the state are
built from it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields

import numpy as np

from marketframe.exceptions import InvalidParams

from ..conventions import (
    INDICATORS,
    BBandsConvention,
    Convention,
    EmaConvention,
    KdjConvention,
    MacdConvention,
    RsiConvention,
    SmaConvention,
)
from ..options import resolve

_DEFAULTS: dict[str, tuple[float, ...]] = {
    "sma": (20,),
    "ema": (20,),
    "rsi": (14,),
    "macd": (12, 26, 9),
    "bbands": (20, 2.0),
    "kdj": (9, 3, 3),
}
_TYPES: dict[str, type] = {
    "sma": SmaConvention,
    "ema": EmaConvention,
    "rsi": RsiConvention,
    "macd": MacdConvention,
    "bbands": BBandsConvention,
    "kdj": KdjConvention,
}
_PERIODS: dict[str, tuple[str, ...]] = {
    "sma": ("n",),
    "ema": ("n",),
    "rsi": ("n",),
    "macd": ("fast", "slow", "signal"),
    "bbands": ("n",),
    "kdj": ("n", "m1", "m2"),
}


def _int(v: float, name: str) -> int:
    ok = isinstance(v, int | float | np.integer) and not isinstance(v, bool)
    if not ok or int(v) != v or v < 1:
        raise InvalidParams("indicators", name, f"must be an integer >= 1, got {v!r}")
    return int(v)


@dataclass(frozen=True)
class IndicatorSpec:
    """One indicator with its periods and a resolved convention (build it with ``spec``).

    ``params``: ``sma``/``ema``/``rsi`` ``(n,)``; ``macd`` ``(fast, slow, signal)``;
    ``bbands`` ``(n, mult)``; ``kdj`` ``(n, m1, m2)``. ``convention`` is the dataclass (a
    variant name or None is resolved by ``spec``, None to ``marketframe.options`` at the
    time the spec is made, so a state never changes meaning later).
    """

    indicator: str
    params: tuple[float, ...]
    convention: Convention

    def __post_init__(self) -> None:
        if self.indicator not in _DEFAULTS:
            raise InvalidParams(
                "indicators", "indicator", f"is unknown: {self.indicator!r}", ", ".join(INDICATORS)
            )
        want = len(_DEFAULTS[self.indicator])
        if len(self.params) != want:
            raise InvalidParams(
                self.indicator, "params", f"takes {want} values, got {len(self.params)}"
            )
        names = _PERIODS[self.indicator]
        ints: tuple[float, ...] = tuple(
            _int(v, name) for v, name in zip(self.params, names, strict=False)
        )
        if not isinstance(self.convention, _TYPES[self.indicator]):
            raise InvalidParams(
                self.indicator,
                "convention",
                f"must be a {_TYPES[self.indicator].__name__}, got {self.convention!r}",
            )
        if self.indicator == "macd" and ints[0] >= ints[1]:
            raise InvalidParams("macd", "fast", f"({ints[0]}) must be shorter than slow")
        if self.indicator == "bbands":
            mult = float(self.params[1])
            if not math.isfinite(mult):
                raise InvalidParams("bbands", "mult", f"must be a finite number, got {mult!r}")
            assert isinstance(self.convention, BBandsConvention)
            if ints[0] - self.convention.ddof <= 0:
                raise InvalidParams(
                    "bbands", "n", f"(window {ints[0]}) too short for ddof={self.convention.ddof}"
                )
            ints = ints + (mult,)
        object.__setattr__(self, "params", ints)

    @property
    def inputs(self) -> tuple[str, ...]:
        """The candle fields the indicator reads, in the order ``apply`` takes them."""
        return ("high", "low", "close") if self.indicator == "kdj" else ("close",)

    @property
    def names(self) -> tuple[str, ...]:
        """Output column names, as ``df.md`` names them (``rsi_14``, ``macd_signal_12_26_9``)."""
        p = self.params
        if self.indicator == "macd":
            tag = "_".join(str(int(v)) for v in p)
            return tuple(f"{o}_{tag}" for o in ("macd", "macd_signal", "macd_hist"))
        if self.indicator == "bbands":
            tag = f"{int(p[0])}_{p[1]:g}"
            return tuple(f"bb_{o}_{tag}" for o in ("upper", "middle", "lower"))
        if self.indicator == "kdj":
            tag = "_".join(str(int(v)) for v in p)
            return tuple(f"kdj_{o}_{tag}" for o in "kdj")
        return (f"{self.indicator}_{int(p[0])}",)

    def to_json(self) -> dict[str, object]:
        """A JSON-able description (indicator, params, convention type and fields)."""
        return {
            "indicator": self.indicator,
            "params": list(self.params),
            "convention": {"type": type(self.convention).__name__, **asdict(self.convention)},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> IndicatorSpec:
        """The spec ``to_json`` described."""
        indicator = str(data["indicator"])
        if indicator not in _TYPES:
            raise InvalidParams("indicators", "indicator", f"is unknown: {indicator!r}")
        raw = data["convention"]
        assert isinstance(raw, Mapping)
        kind = _TYPES[indicator]
        if raw.get("type") != kind.__name__:
            raise InvalidParams(indicator, "convention", f"has the wrong type: {raw.get('type')!r}")
        known = {f.name for f in fields(kind)}
        conv = kind(**{k: v for k, v in raw.items() if k in known})
        params = data["params"]
        assert isinstance(params, list)
        return cls(indicator, tuple(params), conv)


def spec(
    indicator: str, *params: float, convention: Convention | str | None = None
) -> IndicatorSpec:
    """``spec("rsi")``, ``spec("macd", 12, 26, 9, convention="ema_seed=first")`` ...

    Periods default to the ``df.md`` defaults (SMA/EMA 20, RSI 14, MACD 12/26/9, Bollinger
    20/2, KDJ 9/3/3); ``convention`` as for the batch kernels (None: ``marketframe.options``
    now, else TA-Lib's).
    """
    if indicator not in _DEFAULTS:
        raise InvalidParams(
            "indicators", "indicator", f"is unknown: {indicator!r}", ", ".join(INDICATORS)
        )
    defaults = _DEFAULTS[indicator]
    full = tuple(params) + defaults[len(params) :]
    return IndicatorSpec(indicator, full, resolve(indicator, convention, _TYPES[indicator]))
