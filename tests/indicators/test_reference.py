"""Each indicator has one reference and fast paths named after it (docs/contributing.md).

``_reference.<name>`` is the answer for every input; ``_fast.<name>`` (NaN-free input, in
chunks) and ``_segmented.<name>`` (many series end to end) are its fast paths: the same name,
and for ``_fast`` the same arguments, so each can be held against the reference directly.
Here ``_fast`` is, with chunks small enough to cross many boundaries; ``_segmented`` is in
``test_segmented.py`` (against the kernel on each series), the machines in
``test_stateful.py`` (chunks with the state carried against one batch pass).
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest

from marketframe.indicators import INDICATORS, _fast, _reference, _segmented
from marketframe.indicators._params import KdjParams, MacdParams

FAST_PATHS = [_fast, _segmented]


def _positional(fn: Any) -> list[str]:
    return [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty
    ]


@pytest.mark.parametrize("name", INDICATORS)
def test_each_fast_path_is_named_and_called_as_its_reference(name: str) -> None:
    reference = getattr(_reference, name)
    for module in FAST_PATHS:
        assert callable(getattr(module, name, None)), f"{module.__name__}.{name}"
    assert _positional(_fast.__dict__[name]) == _positional(reference)


def candles(seed: int, bars: int, width: int | None) -> tuple[np.ndarray, ...]:
    """High, low and close without a NaN, with flat stretches (RSI's and KDJ's flat rules),
    a series or a ``(bars, width)`` panel."""
    rng = np.random.default_rng(seed)
    shape = (bars,) if width is None else (bars, width)
    steps = np.round(rng.normal(0, 0.5, shape), 2)
    steps[bars // 3 : bars // 3 + 25] = 0.0
    steps[:12] = 0.0
    close = 100.0 + steps.cumsum(axis=0)
    spread = np.round(np.abs(rng.normal(0, 0.4, shape)), 2)
    spread[bars // 3 : bars // 3 + 25] = 0.0
    return close + spread, close - spread, close


ARGS: list[tuple[str, Any]] = [
    ("sma", lambda h, lo, c: (c, 7)),
    ("ema", lambda h, lo, c: (c, 9, "sma", 8)),
    ("ema", lambda h, lo, c: (c, 9, "first", 0)),
    ("rsi", lambda h, lo, c: (c, 14, "sma", 0.0)),
    ("rsi", lambda h, lo, c: (c, 6, "first", 50.0)),
    ("macd", lambda h, lo, c: (c, MacdParams(12, 26, 9, "sma", 25))),
    ("macd", lambda h, lo, c: (c, MacdParams(5, 11, 4, "sma", 4))),
    ("macd", lambda h, lo, c: (c, MacdParams(12, 26, 9, "first", 0))),
    ("bbands", lambda h, lo, c: (c, 20, 2.0, 0)),
    ("bbands", lambda h, lo, c: (c, 5, 2.5, 1)),
    ("kdj", lambda h, lo, c: (h, lo, c, KdjParams(9, 3, 3, "sma", 50.0, 0.0))),
    ("kdj", lambda h, lo, c: (h, lo, c, KdjParams(9, 3, 3, "recursive", 50.0, 0.0))),
    ("kdj", lambda h, lo, c: (h, lo, c, KdjParams(5, 3, 2, "sma", 50.0, 50.0))),
]


@pytest.mark.parametrize("width", [None, 3], ids=["series", "panel"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("name,args", ARGS, ids=[f"{n}{i}" for i, (n, _) in enumerate(ARGS)])
def test_fast_path_equals_the_reference_on_nan_free_input(
    monkeypatch: pytest.MonkeyPatch, name: str, args: Any, seed: int, width: int | None
) -> None:
    monkeypatch.setattr(_fast, "CHUNK", 200)  # chunks of 192 bars (series), 96 (panel)
    monkeypatch.setattr(_fast, "PANEL_CHUNK", 300)
    call = args(*candles(seed, 700, width))
    fast, reference = getattr(_fast, name)(*call), getattr(_reference, name)(*call)
    fast = fast if isinstance(fast, tuple) else (fast,)
    reference = reference if isinstance(reference, tuple) else (reference,)
    scale = 100.0  # the oscillators' range, and the prices' level
    for f, r in zip(fast, reference, strict=True):
        np.testing.assert_array_equal(np.isnan(f), np.isnan(r))
        np.testing.assert_allclose(f, r, rtol=0, atol=1e-10 * scale, equal_nan=True)
