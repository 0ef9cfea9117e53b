"""The segmented kernels (many series end to end) equal the per-series kernels.

This is what the ``md`` accessors run on a long frame without missing values, so every
indicator and every convention variant is checked on symbols of very different lengths
(shorter than any warm-up, exactly the warm-up, long), price levels far apart (a repair
that leaked from one symbol into the next would show), and flat stretches (RSI's and
KDJ's flat rules).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from marketframe import indicators as ind
from marketframe.frames import _core

LENGTHS = [0, 1, 2, 5, 9, 14, 15, 26, 33, 34, 40, 120, 700]


def series(seed: int, equal: bool) -> tuple[list[np.ndarray], list[int]]:
    rng = np.random.default_rng(seed)
    lengths = [300] * 7 if equal else [n for n in rng.permutation(LENGTHS) if n]
    cols: list[list[np.ndarray]] = [[], [], []]
    for i, n in enumerate(lengths):
        level = 10.0 ** rng.uniform(-1, 4)
        c = level * np.exp(np.cumsum(rng.normal(0, 0.02, n)))
        if i % 3 == 1 and n > 20:
            c[: n // 2] = c[0]  # flat for its first half
        if i % 3 == 2 and n > 40:
            c[10:30] = c[10]  # a flat stretch inside
        spread = np.abs(rng.normal(0, 0.01, n)) * c
        for col, v in zip(cols, (c + spread, c - spread, c), strict=True):
            col.append(v)
    return [np.concatenate(col) for col in cols], lengths


REQUESTS: list[tuple[str, Any]] = [
    ("sma", lambda: _core.sma_request(7, "close", None)),
    ("ema", lambda: _core.ema_request(9, "close", None)),
    ("ema first", lambda: _core.ema_request(9, "close", "ema_seed=first")),
    ("rsi", lambda: _core.rsi_request(14, "close", None)),
    ("rsi first", lambda: _core.rsi_request(14, "close", "rsi_seed=first")),
    ("rsi flat50", lambda: _core.rsi_request(6, "close", "rsi_flat=50")),
    ("macd", lambda: _core.macd_request(12, 26, 9, "close", None)),
    ("macd first", lambda: _core.macd_request(12, 26, 9, "close", "ema_seed=first")),
    ("macd own", lambda: _core.macd_request(5, 11, 4, "close", "macd_align=own")),
    ("bbands", lambda: _core.bbands_request(20, 2.0, "close", None)),
    ("bbands ddof1", lambda: _core.bbands_request(5, 2.5, "close", "bb_ddof=1")),
    ("kdj", lambda: _core.kdj_request(9, 3, 3, "high", "low", "close", None)),
    (
        "kdj recursive",
        lambda: _core.kdj_request(9, 3, 3, "high", "low", "close", "kdj=recursive50"),
    ),
    ("kdj rsv50", lambda: _core.kdj_request(5, 3, 2, "high", "low", "close", "rsv_flat=50")),
]


@pytest.mark.parametrize("equal", [False, True], ids=["ragged", "equal"])
@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("name,make", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_segmented_equals_each_series_alone(name: str, make: Any, seed: int, equal: bool) -> None:
    (h, lo, c), lengths = series(seed, equal)
    compare(make(), {"high": h, "low": lo, "close": c}, lengths, 1e-10)


@pytest.mark.parametrize("equal", [False, True], ids=["ragged", "equal"])
@pytest.mark.parametrize("name,make", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_segmented_across_many_chunks(
    monkeypatch: pytest.MonkeyPatch, name: str, make: Any, equal: bool
) -> None:
    # chunks of 192 bars: every chunk boundary falls inside or between symbols, so the
    # per-chunk pieces (Bollinger's per-symbol levels, carried states) are all exercised
    from marketframe.indicators import _fast

    monkeypatch.setattr(_fast, "CHUNK", 200)
    monkeypatch.setattr(_fast, "PANEL_CHUNK", 500)
    (h, lo, c), lengths = series(4, equal)
    compare(make(), {"high": h, "low": lo, "close": c}, lengths, 1e-10)


def compare(request: Any, inputs: dict[str, np.ndarray], lengths: list[int], tol: float) -> None:
    """The segmented outputs equal the kernel on each segment alone, to ``tol`` of the
    quantity's scale (100 for RSI and KDJ, else the segment's price level); NaN exactly
    where the kernel has NaN, flat RSI values exactly."""
    c = inputs["close"]
    arrays = [inputs[k] for k in request.inputs]
    starts = np.cumsum([0, *lengths[:-1]])
    got = request.segmented(ind._segmented.Segments(starts, len(c)), *arrays)
    got = got if isinstance(got, tuple) else (got,)
    for s, n in zip(starts, lengths, strict=True):
        want = request.kernel(*(a[s : s + n] for a in arrays))
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want, strict=True):
            scale = 100.0 if request.indicator in ("rsi", "kdj") else np.abs(c[s : s + n]).max()
            np.testing.assert_array_equal(np.isnan(g[s : s + n]), np.isnan(w))
            if request.indicator == "rsi":  # no change since the first bar: exactly flat
                still = np.cumsum(np.r_[0.0, np.diff(c[s : s + n])] != 0) == 0
                np.testing.assert_array_equal(g[s : s + n][still], w[still])
            np.testing.assert_allclose(g[s : s + n], w, rtol=0, atol=tol * scale, equal_nan=True)


@pytest.mark.parametrize("name,make", REQUESTS, ids=[r[0] for r in REQUESTS])
def test_symbols_longer_than_the_repaired_heads(name: str, make: Any) -> None:
    # past its head a symbol's values come from the whole-column pass; a symbol flat from
    # its first bar far past the head must still get the flat value, not its neighbour's
    rng = np.random.default_rng(9)
    parts = [
        5000.0 * np.exp(np.cumsum(rng.normal(0, 0.02, 3000))),
        np.r_[np.full(1800, 3.0), 3.0 * np.exp(np.cumsum(rng.normal(0, 0.02, 400)))],
        np.full(2500, 0.5),
        80.0 * np.exp(np.cumsum(rng.normal(0, 0.02, 2000))),
        np.full(50, 20.0),  # ragged lengths: RSI takes its whole-column path
    ]
    c = np.concatenate(parts)
    compare(make(), {"high": c, "low": c, "close": c}, [len(p) for p in parts], 1e-13)


MACDS = [r for r in REQUESTS if r[0].startswith("macd")]


@pytest.mark.parametrize("equal", [False, True], ids=["ragged", "equal"])
@pytest.mark.parametrize("name,make", MACDS, ids=[r[0] for r in MACDS])
def test_macd_entering_states_solved_as_a_recursion(
    monkeypatch: pytest.MonkeyPatch, name: str, make: Any, equal: bool
) -> None:
    # symbols with more blocks than _STEPS take the blocked panel recursion for the states
    # entering their blocks, and the column pass runs in chunks of 3 blocks
    from marketframe.indicators import _segmacd

    monkeypatch.setattr(_segmacd, "_STEPS", 2)
    monkeypatch.setattr(_segmacd, "CHUNK_BLOCKS", 3)
    (h, lo, c), lengths = series(5, equal)
    compare(make(), {"high": h, "low": lo, "close": c}, lengths, 1e-10)


@pytest.mark.parametrize("name,make", MACDS, ids=[r[0] for r in MACDS])
def test_macd_very_ragged_lengths_take_the_repair_path(name: str, make: Any) -> None:
    # one long symbol among many short ones: a (blocks, symbols) panel would be mostly
    # padding, so the exact pass declines and the whole-column pass with repairs runs
    from marketframe.indicators import _segmacd
    from marketframe.indicators._params import MacdParams

    rng = np.random.default_rng(11)
    lengths = [20_000] + [60] * 200
    c = np.concatenate(
        [10.0 ** rng.uniform(0, 3) * np.exp(np.cumsum(rng.normal(0, 0.02, n))) for n in lengths]
    )
    starts = np.cumsum([0, *lengths[:-1]])
    assert (
        _segmacd.macd(c, starts, np.array(lengths), MacdParams(12, 26, 9, "sma", 25), None) is None
    )
    compare(make(), {"high": c, "low": c, "close": c}, lengths, 1e-10)


@pytest.mark.parametrize("steps", [512, 2], ids=["stepped", "blocked"])
def test_macd_exact_between_far_apart_price_levels(
    monkeypatch: pytest.MonkeyPatch, steps: int
) -> None:
    # each symbol's panel column reads on past its last block into the next symbols'
    # blocks (a million times its price here) and the spare row: none of it may reach its
    # own values, which must equal the symbol alone to 1e-12 of its level
    from marketframe.indicators import _segmacd

    monkeypatch.setattr(_segmacd, "_STEPS", steps)
    rng = np.random.default_rng(21)
    lengths = [700, 35, 900, 36, 50, 1000, 34, 640]
    levels = [1e6, 1e-3, 2e-3, 5e5, 1e-2, 3e-3, 1e6, 1e-3]
    walks = [np.exp(np.cumsum(rng.normal(0, 0.02, n))) for n in lengths]
    c = np.concatenate([v * w for v, w in zip(levels, walks, strict=True)])
    for _, make in MACDS:
        compare(make(), {"high": c, "low": c, "close": c}, lengths, 1e-12)


@pytest.mark.parametrize("n", range(1, 41))
def test_window_sums_with_a_third_buffer_are_bit_identical(n: int) -> None:
    # the third scratch buffer only saves a pass: the same additions in the same order
    from marketframe.indicators._fast import _sums

    x = np.random.default_rng(n).normal(0, 1, 300) * 1e3
    rows = x.shape[0]
    spare = [np.full(rows, np.nan) for _ in range(3)]
    two = _sums(x, n, np.empty(rows - n + 1), spare[0], spare[1])
    three = _sums(x, n, np.empty(rows - n + 1), *spare)
    np.testing.assert_array_equal(three, two)
    np.testing.assert_allclose(three, np.convolve(x, np.ones(n), "valid"), rtol=1e-12, atol=1e-9)
