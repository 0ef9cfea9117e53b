"""Backend-agnostic part of the ``md`` accessors: what to compute, and per symbol.

A ``Request`` names the input columns, the output columns and the kernel call. ``compute``
runs it on numpy columns taken from any frame: rows are put in (symbol, date) order, the
symbols are laid side by side as the columns of a panel (row = position of the bar within
its symbol, so a symbol's missing dates never become gaps and no window or recursion ever
reaches another symbol), the kernel runs once on the whole panel, and the results are put
back in the user's row order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from marketframe.exceptions import MissingColumnsError

from ..exceptions import did_you_mean
from ..indicators import registry
from ..indicators import segmented as seg_kernels
from ..indicators.options import resolve
from ._order import Layout

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Request:
    """What to compute: ``kernel`` on one series (or a panel), ``segmented`` on many series
    laid end to end (``segmented(segments, *columns)``, NaN-free columns only; None: the
    indicator has no such fast path, and the symbols go through ``kernel`` as a panel)."""

    indicator: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    kernel: Callable[..., registry.Outputs]
    segmented: Callable[..., registry.Outputs] | None


def request(
    indicator: str, params: Sequence[float], columns: Sequence[str], convention: object
) -> Request:
    """The request of ``indicator`` (a row of the indicator table) with these periods, over
    these columns (one per input of the row), checked now: the convention, the periods and
    what the row's ``check`` says of them. An indicator of one input over another column
    than the row's is named after it (``open_sma_20``)."""
    row = registry.get(indicator)
    conv = resolve(indicator, convention)
    values = row.checked(tuple(params), conv)
    names = row.names(values)
    if len(row.inputs) == 1 and columns[0] != row.inputs[0]:
        names = tuple(f"{columns[0]}_{name}" for name in names)

    def kernel(*arrays: Array) -> registry.Outputs:
        return row.kernel(*arrays, *values, convention=conv)

    fast = row.segmented
    segmented = None
    if fast is not None:

        def segmented(seg: seg_kernels.Segments, *arrays: Array) -> registry.Outputs:
            return fast(seg, values, conv, kernel, *arrays)

    return Request(indicator, tuple(columns), names, kernel, segmented)


def sma_request(n: int, column: str, convention: object) -> Request:
    return request("sma", (n,), (column,), convention)


def ema_request(n: int, column: str, convention: object) -> Request:
    return request("ema", (n,), (column,), convention)


def rsi_request(n: int, column: str, convention: object) -> Request:
    return request("rsi", (n,), (column,), convention)


def macd_request(fast: int, slow: int, signal: int, column: str, convention: object) -> Request:
    return request("macd", (fast, slow, signal), (column,), convention)


def bbands_request(n: int, mult: float, column: str, convention: object) -> Request:
    return request("bbands", (n, mult), (column,), convention)


def kdj_request(
    n: int, m1: int, m2: int, high: str, low: str, close: str, convention: object
) -> Request:
    return request("kdj", (n, m1, m2), (high, low, close), convention)


def lookup(name: str, available: Sequence[Hashable]) -> str | None:
    """``name`` as spelled in ``available``: exactly, else the one column equal to it
    ignoring case (``Close`` for ``close``); None if absent or ambiguous."""
    if name in available:
        return name
    low = name.lower()
    hits = [c for c in available if isinstance(c, str) and c.lower() == low]
    return hits[0] if len(hits) == 1 else None


def check_columns(
    request: Request,
    available: Sequence[Hashable],
    symbol: str | None,
    date: str | None,
    defaults: tuple[str | None, str | None],
) -> tuple[Request, str | None, str | None]:
    """Raise ``MissingColumnsError`` for absent inputs; return the request with its inputs
    as the frame spells them (case-insensitive lookup) and the symbol/date columns to use.

    ``symbol`` and ``date`` at their defaults are optional (a frame without ``symbol`` is one
    series; without ``date`` the row order or index is the time order; the date returned is
    then still the default); named explicitly, they must exist.
    """
    found = {c: lookup(c, available) for c in request.inputs}
    missing = [c for c, f in found.items() if f is None]
    for col, default in ((symbol, defaults[0]), (date, defaults[1])):
        if col is not None and col != default and lookup(col, available) is None:
            missing.append(col)
    if missing:
        hints = "".join(did_you_mean(c, [str(a) for a in available]) for c in missing)
        hints += _wide_hint(missing, available)
        raise MissingColumnsError(
            f"{request.indicator} needs column(s) {', '.join(repr(c) for c in missing)}, "
            f"not in the frame{hints}; available columns: {', '.join(map(str, available))}"
        )
    inputs = tuple(str(found[c]) for c in request.inputs)
    sym = lookup(symbol, available) if symbol is not None else None
    when = date if date is None else (lookup(date, available) or date)
    return replace(request, inputs=inputs), sym, when


#: the candle fields: a column named like one is no symbol's column of a date x symbol panel
FIELDS = ("open", "high", "low", "close", "volume", "turnover", "change")


def field_of(name: Hashable) -> str | None:
    """The candle field (of :data:`FIELDS`) a column's name holds (``registry.field_of``)."""
    return registry.field_of(name, FIELDS)


def _wide_hint(missing: Sequence[str], available: Sequence[Hashable]) -> str:
    """The fix for a pivot of several fields (``download(..., layout="wide")``: columns like
    ``('close', '2330')``, ``('2330', 'close')`` or ``close_2330``): the long frame, or one
    field's date x symbol panel."""
    fields = {field_of(c) for c in available} - {None}
    wanted = [m for m in missing if m.lower() in fields]
    if not wanted:
        return ""
    field = wanted[0]
    pivot = next(c for c in available if field_of(c) == field.lower())
    if isinstance(pivot, tuple) and str(pivot[0]).lower() == field.lower():
        one = f"df[{pivot[0]!r}]"  # download's group_by="column"
    elif isinstance(pivot, tuple):
        level = [str(p).lower() for p in pivot].index(field.lower())
        one = f"df.xs({field!r}, axis=1, level={level})"  # group_by="ticker"
    else:  # polars: close_2330
        one = f"long.md.wide({field!r})"
    return (
        f"; the frame is a pivot of several fields (columns like {pivot}), whose columns "
        f"an indicator cannot tell apart: take one field, {one}.md... (a date x symbol "
        "frame), or call .md on the long frame (download's default layout)"
    )


def _run(request: Request, arrays: list[Array]) -> list[Array]:
    out = request.kernel(*arrays)
    return list(out) if isinstance(out, tuple) else [out]


def _nan_free(arrays: list[Array]) -> bool:
    # min() propagates NaN and, unlike isnan(a).any(), allocates nothing
    return all(a.size and not np.isnan(a.min()) for a in arrays)


def compute(request: Request, arrays: list[Array], layout: Layout) -> list[Array]:
    """Outputs aligned with the input rows, computed along time within each symbol.

    The rows are gathered into (symbol, time) order only if they are not in it already.
    One symbol: the kernel on the whole column. Several, without missing values: the
    segmented kernels, once over the whole column (no per-symbol loop, no panel). With
    missing values: a panel of the symbols (the kernels' NaN policy), or symbol by symbol
    if the lengths are very uneven.
    """
    size = layout.size
    order = layout.order
    if order is not None:
        arrays = [a[order] for a in arrays]
    starts, lengths = layout.starts, layout.lengths
    if starts is None or lengths is None or size == 0:
        outs = _run(request, arrays)
    elif request.segmented is not None and _nan_free(arrays):
        res = request.segmented(seg_kernels.Segments(starts, size), *arrays)
        outs = list(res) if isinstance(res, tuple) else [res]
    else:
        outs = _with_gaps(request, arrays, starts, lengths)
    if order is None:
        return outs
    result = []
    for o in outs:
        back = np.empty(size)
        back[order] = o
        result.append(back)
    return result


def _with_gaps(
    request: Request, arrays: list[Array], starts: NDArray[np.intp], lengths: NDArray[np.intp]
) -> list[Array]:
    size = arrays[0].shape[0]
    groups = len(starts)
    longest = int(lengths.max())
    outs = [np.empty(size) for _ in request.outputs]
    if longest * groups <= 4 * size + 4096:
        # one panel: column g holds symbol g's bars, padded at the end with NaN
        rank = np.arange(size) - np.repeat(starts, lengths)
        col = np.repeat(np.arange(groups), lengths)
        panels = []
        for a in arrays:
            p = np.full((longest, groups), np.nan)
            p[rank, col] = a
            panels.append(p)
        for o, res in zip(outs, _run(request, panels), strict=True):
            o[:] = res[rank, col]
    else:  # very ragged: one symbol at a time rather than a mostly empty panel
        for s, n in zip(starts, lengths, strict=True):
            part = [a[s : s + n] for a in arrays]
            for o, res in zip(outs, _run(request, part), strict=True):
                o[s : s + n] = res
    return outs
