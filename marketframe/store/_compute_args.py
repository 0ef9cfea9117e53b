"""What :meth:`Store.compute` and :meth:`Store.read_derived` are given, checked before any
work: the indicator specs and the source dataset. Imports nothing of the driver
(:mod:`._compute`), which imports this."""

from __future__ import annotations

from typing import Any

from marketframe.indicators import stateful as sf


def specs_of(spec: Any) -> list[sf.IndicatorSpec]:
    """The specs of ``spec`` (one, a name, or a sequence of them), each named once."""
    from marketframe.exceptions import InvalidParams

    items = [spec] if isinstance(spec, sf.IndicatorSpec | str) else list(spec)
    if not items:
        raise InvalidParams("Store.compute", "spec", "is empty", "one or more indicator specs")
    out = [s if isinstance(s, sf.IndicatorSpec) else sf.spec(s) for s in items]
    if len({(s.indicator, s.params, s.convention) for s in out}) != len(out):
        raise InvalidParams("Store.compute", "spec", "names one spec twice")
    return out


def source_of(dataset: str, timeframe: str | None, params: dict[str, Any]) -> Any:
    """The stored dataset indicators are computed over: per-symbol bars with a close."""
    from marketframe.exceptions import InvalidParams
    from marketframe.store._sync import resolve

    src = resolve(dataset, timeframe, params)
    if not src.has_symbol or "close" not in src.ep.schema.arrow().names:
        raise InvalidParams(
            "Store.compute",
            "dataset",
            f"{dataset!r} has no per-symbol bars (date, open, high, low, close)",
            "a candles dataset, e.g. stock.historical.candles",
        )
    return src
