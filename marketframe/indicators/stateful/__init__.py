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
(``IndicatorSpec``, ``spec``), ``_machines`` (``Machine``: an indicator's state layout and
one-bar step; the built-in ones are ``machines.Sma`` ...), ``_state`` (``State`` and its
serialised form), and here the drivers ``apply`` and ``step`` over a series or a panel. What
an indicator takes, its periods, outputs and machine are its row of the indicator table
(``marketframe.indicators.registry``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from marketframe.exceptions import InvalidParams

from .._kernels import BBandsResult, KdjResult, MacdResult, missing_inf
from . import _machines as machines
from ._machines import Array, Machine
from ._spec import IndicatorSpec, spec
from ._state import FORMAT_VERSION, State

__all__ = [
    "FORMAT_VERSION",
    "IndicatorSpec",
    "Machine",
    "Output",
    "State",
    "apply",
    "machines",
    "spec",
    "step",
]

for _cls in (IndicatorSpec, State, Machine):
    _cls.__module__ = __name__  # shown (reprs, docs, pickles) where users import them from

Output: TypeAlias = Array | MacdResult | BBandsResult | KdjResult

# ---------------------------------------------------------------------------------------
# apply / step


def _inputs(values: object, sp: IndicatorSpec) -> tuple[Array, ...]:
    names = sp.inputs
    if len(names) > 1:
        if isinstance(values, Mapping):
            try:
                raw: Sequence[object] = [values[k] for k in names]
            except KeyError as e:
                raise InvalidParams(sp.indicator, "values", f"lacks {e.args[0]!r}") from None
        elif isinstance(values, tuple | list) and len(values) == len(names):
            raw = values
        else:
            raise InvalidParams(
                sp.indicator, "values", f"must be ({', '.join(names)}) or a mapping of them"
            )
    else:
        raw = [values]
    out = []
    for v in raw:
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise InvalidParams("indicators", "values", f"must be numbers: {e}") from None
        out.append(missing_inf(a))  # as the batch kernels take them
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

    ``values``: a 1-D series of bars, or a ``(bars, symbols)`` panel (an indicator of
    several inputs, as KDJ: a tuple or mapping of them, high, low and close, each so
    shaped); zero bars are fine. ``state``: None to start (a fresh state of the input's
    width), else the state a previous call returned (same spec and width). Outputs are
    shaped like the input and typed like the batch kernel's (an array, ``MacdResult``,
    ``BBandsResult``, ``KdjResult``). The given state is
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
    return spec.row.wrap(tuple(o.reshape(shape) for o in outs)), state


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
    arg: ArrayLike | Sequence[ArrayLike] = one if len(one) > 1 else one[0]
    out, new = apply(arg, spec, state, inplace=inplace)
    if isinstance(out, tuple):
        return type(out)(*(o[0] for o in out)), new
    return out[0], new
