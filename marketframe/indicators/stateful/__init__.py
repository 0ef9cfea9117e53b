"""Indicators that carry their state: ``apply(values, spec, state) -> (out, state)``.

The batch kernels (``marketframe.indicators.sma`` ...) compute a whole history at once. The
same indicators here continue from a ``State``: feed a history in chunks of any size, in
order, carrying the state, and the outputs equal one batch pass over the whole history
(to rounding, ~1e-15 of the scale), with the same conventions and the same missing-value
policy (a NaN bar is NaN in every output, and each NaN-free run is its own series).

The state is small and explicit: for each symbol the last ``n-1`` inputs a window needs,
the recursions' accumulators, the length of the current NaN-free run; plus the bar count,
the spec (indicator, periods, convention) and a format version. It serialises to bytes
(``State.to_bytes``: an ``.npz`` of plain arrays and a JSON header, never a pickle) or to a
JSON-able header and a dict of arrays (``State.to_parts``).

A panel ``(bars, symbols)`` advances all symbols together: one bar of 2,000 symbols is one
vectorized step. Cost: a Python step per bar (tens of microseconds), so a long 1-D history
is faster through the batch kernels; use ``apply`` for what comes after it, or warm a state
with ``apply`` over the history once.

The package is laid out bottom up, each module importing only those below it: ``_spec``
(``IndicatorSpec``, ``spec``), ``_machines`` (each indicator's state layout and one-bar
step), ``_state`` (``State`` and its serialised form), and here the drivers ``apply`` and
``step`` over a series or a panel.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from marketframe.exceptions import InvalidParams

from .._kernels import BBandsResult, KdjResult, MacdResult
from ._machines import Array
from ._spec import IndicatorSpec, spec
from ._state import FORMAT_VERSION, State

__all__ = [
    "FORMAT_VERSION",
    "IndicatorSpec",
    "Output",
    "State",
    "apply",
    "spec",
    "step",
]

for _cls in (IndicatorSpec, State):
    _cls.__module__ = __name__  # shown (reprs, docs, pickles) where users import them from

Output: TypeAlias = Array | MacdResult | BBandsResult | KdjResult

_RESULTS: dict[str, Callable[..., Output]] = {
    "macd": MacdResult,
    "bbands": BBandsResult,
    "kdj": KdjResult,
}

# ---------------------------------------------------------------------------------------
# apply / step


def _inputs(values: object, sp: IndicatorSpec) -> tuple[Array, ...]:
    if sp.indicator == "kdj":
        if isinstance(values, Mapping):
            try:
                raw: Sequence[object] = [values[k] for k in ("high", "low", "close")]
            except KeyError as e:
                raise InvalidParams("kdj", "values", f"lacks {e.args[0]!r}") from None
        elif isinstance(values, tuple | list) and len(values) == 3:
            raw = values
        else:
            raise InvalidParams("kdj", "values", "must be (high, low, close) or a mapping of them")
    else:
        raw = [values]
    out = []
    for v in raw:
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InvalidParams("indicators", "values", f"must be numbers: {e}") from None
        out.append(a)
    if len({a.shape for a in out}) != 1:
        raise InvalidParams(
            sp.indicator, "values", f"shapes differ: {', '.join(str(a.shape) for a in out)}"
        )
    return tuple(out)


def apply(
    values: ArrayLike | Sequence[ArrayLike] | Mapping[str, ArrayLike],
    spec: IndicatorSpec,
    state: State | None = None,
    *,
    inplace: bool = False,
) -> tuple[Output, State]:
    """Continue ``spec`` over ``values`` from ``state``: ``(outputs, new state)``.

    ``values``: a 1-D series of bars, or a ``(bars, symbols)`` panel (KDJ: a tuple or
    mapping of high, low and close, each so shaped); zero bars are fine. ``state``: None
    to start (a fresh state of the input's width), else the state a previous call returned
    (same spec and width). Outputs are shaped like the input and typed like the batch
    kernel's (an array, ``MacdResult``, ``BBandsResult``, ``KdjResult``). The given state is
    left unchanged unless ``inplace=True`` (then it is advanced and returned: no copy).
    """
    arrays = _inputs(values, spec)
    shape = arrays[0].shape
    if len(shape) not in (1, 2):
        raise InvalidParams(
            spec.indicator, "values", f"must be 1-D (bars) or 2-D (bars, symbols), got {shape}"
        )
    symbols = None if len(shape) == 1 else shape[1]
    if state is None:
        state = State.new(spec, symbols)
    else:
        if state.spec != spec:
            raise InvalidParams(
                spec.indicator, "state", f"was made for {state.spec}, not for {spec}"
            )
        if state.symbols != symbols:
            raise InvalidParams(
                spec.indicator,
                "values",
                f"have {symbols or 'no'} symbol columns, the state has {state.symbols or 'none'}"
                " (a 1-D series state takes 1-D values)",
            )
        if not inplace:
            state = state.copy()
    m = state._machine
    bars = shape[0]
    width = 1 if symbols is None else symbols
    xs = tuple(a.reshape(bars, width) for a in arrays)
    outs = tuple(np.empty((bars, width)) for _ in range(m.outputs))
    s = state.arrays
    b0 = state.bars
    for t in range(bars):
        m.step(s, b0 + t, tuple(x[t] for x in xs), tuple(o[t] for o in outs))
    state.bars = b0 + bars
    res = tuple(o.reshape(shape) for o in outs)
    wrap = _RESULTS.get(spec.indicator)
    return (wrap(*res) if wrap else res[0]), state


def step(
    bar: ArrayLike | Sequence[ArrayLike] | Mapping[str, ArrayLike],
    spec: IndicatorSpec,
    state: State | None = None,
    *,
    inplace: bool = False,
) -> tuple[Output, State]:
    """One bar: one value per symbol (a scalar for a 1-D series state); outputs likewise."""
    arrays = _inputs(bar, spec)
    if arrays[0].ndim > 1:
        raise InvalidParams(
            spec.indicator, "bar", f"must be one value per symbol, got {arrays[0].shape}"
        )
    one = tuple(a[None] for a in arrays)
    arg: object = one if spec.indicator == "kdj" else one[0]
    out, new = apply(arg, spec, state, inplace=inplace)  # type: ignore[arg-type]
    if isinstance(out, tuple):
        return type(out)(*(o[0] for o in out)), new
    return out[0], new
