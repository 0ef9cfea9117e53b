"""State-carrying indicators (``marketframe.indicators.stateful``) equal the batch kernels.

The property: any split of a series or panel into chunks (empty chunks and 1-bar chunks
included), processed in order with the state carried and round-tripped through its
serialised form at every boundary, equals one batch pass within 1e-12 of the quantity's
scale (100 for RSI and KDJ, the price level otherwise), with the same NaN pattern; the
inputs have gaps, flat stretches and symbols shorter than the warm-ups.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import talib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from talib import stream as tstream

from marketframe import indicators as ind
from marketframe.exceptions import InvalidParams
from marketframe.indicators import stateful as sf

TOL = 1e-12
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def batch(sp: sf.IndicatorSpec, values: Any) -> tuple[np.ndarray, ...]:
    p, cv = sp.params, sp.convention
    i = [int(v) for v in p]
    if sp.indicator == "kdj":
        h, lo, c = values
        return tuple(ind.kdj(h, lo, c, *i, convention=cv))  # type: ignore[arg-type]
    x = values
    res: Any = {
        "sma": lambda: ind.sma(x, i[0]),
        "ema": lambda: ind.ema(x, i[0], convention=cv),  # type: ignore[arg-type]
        "rsi": lambda: ind.rsi(x, i[0], convention=cv),  # type: ignore[arg-type]
        "macd": lambda: ind.macd(x, *i, convention=cv),  # type: ignore[arg-type]
        "bbands": lambda: ind.bbands(x, i[0], p[1], convention=cv),  # type: ignore[arg-type]
    }[sp.indicator]()
    return tuple(res) if isinstance(res, tuple) else (res,)


def scale_of(sp: sf.IndicatorSpec, close: np.ndarray) -> float:
    if sp.indicator in ("rsi", "kdj"):
        return 100.0
    finite = np.abs(close[np.isfinite(close)])
    return float(finite.max()) if finite.size else 1.0


def close_to(ours: np.ndarray, ref: np.ndarray, scale: float) -> None:
    assert ours.shape == ref.shape
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_allclose(ours, ref, rtol=0, atol=TOL * scale, equal_nan=True)


# ---------------------------------------------------------------------------------------
# inputs: tick-rounded prices with flat stretches, gaps, late and short symbols


def _column(draw: st.DrawFn, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    steps = np.round(rng.normal(0.0, draw(st.sampled_from([0.05, 0.5, 3.0])), n), 2)
    spread = np.round(np.abs(rng.normal(0.0, 0.8, n)), 2)
    flat = np.zeros(n, dtype=bool)
    for _ in range(draw(st.integers(0, 3))):
        s, length = draw(st.integers(0, max(n - 1, 0))), draw(st.integers(1, 40))
        flat[s : s + length] = True
    if draw(st.booleans()):  # flat from the start: RSI's and KDJ's flat conventions show
        flat[: draw(st.integers(1, 40))] = True
    steps[flat] = 0.0
    spread[flat] = 0.0
    close = np.abs(np.round(draw(st.floats(30.0, 500.0)) + np.cumsum(steps), 2)) + 1.0
    high = close + spread
    low = close - np.round(spread * rng.random(n), 2)
    for _ in range(draw(st.integers(0, 3))):  # gaps, some in one input only
        s, length = draw(st.integers(0, max(n - 1, 0))), draw(st.integers(1, 6))
        which = draw(st.sampled_from(["all", "all", "close", "high", "low"]))
        for name, a in (("close", close), ("high", high), ("low", low)):
            if which in ("all", name):
                a[s : s + length] = np.nan
    # a symbol that starts late and/or stops early (shorter than the warm-ups)
    lead = draw(st.integers(0, n)) if draw(st.booleans()) else 0
    tail = draw(st.integers(0, n)) if draw(st.booleans()) else n
    for a in (close, high, low):
        a[:lead] = np.nan
        a[tail:] = np.nan
    return high, low, close


@st.composite
def data(draw: st.DrawFn) -> tuple[Any, bool]:
    n = draw(st.integers(0, 120))
    panel = draw(st.booleans())
    cols = [_column(draw, n) for _ in range(draw(st.integers(1, 4)) if panel else 1)]
    if panel:
        return tuple(np.stack([c[k] for c in cols], axis=1) for k in range(3)), True
    return cols[0], False


@st.composite
def specs(draw: st.DrawFn) -> sf.IndicatorSpec:
    name = draw(st.sampled_from(ind.INDICATORS))
    conv = draw(st.sampled_from(sorted(ind.variants(name))))
    if name in ("sma", "ema", "rsi"):
        params: tuple[float, ...] = (draw(st.integers(1, 30)),)
    elif name == "macd":
        params = draw(st.sampled_from([(12, 26, 9), (3, 7, 4), (5, 6, 2), (2, 30, 1), (1, 2, 1)]))
    elif name == "bbands":
        low = 2 if conv == "bb_ddof=1" else 1
        params = (draw(st.integers(low, 30)), draw(st.sampled_from([1.0, 2.0, 2.5])))
    else:
        params = draw(st.sampled_from([(9, 3, 3), (5, 1, 2), (14, 3, 5), (2, 2, 1), (1, 1, 1)]))
    return sf.spec(name, *params, convention=conv)


def _roundtrip(state: sf.State, how: int) -> sf.State:
    if how == 0:
        return sf.State.from_bytes(state.to_bytes())
    meta, arrays = state.to_parts()
    import json

    return sf.State.from_parts(json.loads(json.dumps(meta)), arrays)


@SETTINGS
@given(data(), specs(), st.lists(st.integers(0, 40), max_size=12), st.data())
def test_chunks_with_carried_state_equal_one_batch_pass(
    d: tuple[Any, bool], sp: sf.IndicatorSpec, cuts: list[int], more: st.DataObject
) -> None:
    (high, low, close), _ = d
    values = (high, low, close) if sp.indicator == "kdj" else close
    ref = batch(sp, values)
    bars = close.shape[0]
    edges = [0]
    for c in cuts:  # chunk lengths, 0 and 1 among them, the last chunk the rest
        edges.append(min(bars, edges[-1] + c))
    edges.append(bars)
    state: sf.State | None = None
    pieces: list[tuple[np.ndarray, ...]] = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        part = tuple(v[a:b] for v in values) if sp.indicator == "kdj" else values[a:b]
        out, state = sf.apply(part, sp, state)
        pieces.append(out if isinstance(out, tuple) else (out,))
        state = _roundtrip(state, more.draw(st.integers(0, 1)))
    assert state is not None and state.bars == bars
    scale = scale_of(sp, close)
    for k, r in enumerate(ref):
        close_to(np.concatenate([p[k] for p in pieces]), r, scale)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data(), specs())
def test_step_by_step_panel_equals_apply(d: tuple[Any, bool], sp: sf.IndicatorSpec) -> None:
    (high, low, close), _ = d
    values = (high, low, close) if sp.indicator == "kdj" else close
    whole, _ = sf.apply(values, sp)
    state = sf.State.new(sp, None if close.ndim == 1 else close.shape[1])
    rows = []
    for t in range(close.shape[0]):
        bar = tuple(v[t] for v in values) if sp.indicator == "kdj" else values[t]
        out, state = sf.step(bar, sp, state, inplace=True)
        rows.append(out if isinstance(out, tuple) else (out,))
    if not rows:
        return
    for k, w in enumerate(whole if isinstance(whole, tuple) else (whole,)):
        got = np.array([r[k] for r in rows])
        np.testing.assert_array_equal(got, w)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data(), specs(), st.data())
def test_advance_equals_step_and_a_peek_leaves_the_state_as_it_was(
    d: tuple[Any, bool], sp: sf.IndicatorSpec, pick: st.DataObject
) -> None:
    """``State.advance`` (the live engine's in-place step) gives ``step``'s outputs bar by
    bar; with ``commit=False``, before every bar, it gives the same outputs and leaves the
    state equal to what it was (it puts back what the step wrote instead of copying)."""
    (high, low, close), _ = d
    if close.ndim == 1:
        high, low, close = high[:, None], low[:, None], close[:, None]
    values = (high, low, close) if sp.indicator == "kdj" else (close,)
    width = close.shape[1]
    ours, ref = sf.State.new(sp, width), sf.State.new(sp, width)
    k = len(sp.names)
    for t in range(close.shape[0]):
        xs = tuple(np.ascontiguousarray(v[t]) for v in values)
        want, ref = sf.step(xs if sp.indicator == "kdj" else xs[0], sp, ref, inplace=True)
        want_t = want if isinstance(want, tuple) else (want,)
        if pick.draw(st.booleans()):
            before = ours.copy()
            peek = tuple(np.full(width, -1.0) for _ in range(k))
            ours.advance(xs, peek, commit=False)
            assert ours == before
            for p, w in zip(peek, want_t, strict=True):
                np.testing.assert_array_equal(p, w)
        got = tuple(np.full(width, -1.0) for _ in range(k))
        ours.advance(xs, got)
        for g, w in zip(got, want_t, strict=True):
            np.testing.assert_array_equal(g, w)
    assert ours == ref


# ---------------------------------------------------------------------------------------
# the state itself


@pytest.mark.parametrize("name", ind.INDICATORS)
def test_state_per_symbol_is_at_most_1kib_at_the_default_periods(name: str) -> None:
    for conv in ind.variants(name):
        sp = sf.spec(name, convention=conv)
        state = sf.State.new(sp, 2000)
        assert state.nbytes / 2000 <= 1024, (name, conv, state.nbytes / 2000)
        # and serialised, per symbol, with its header spread over 2,000 symbols
        assert len(state.to_bytes()) / 2000 <= 1024


def test_state_is_a_value_unless_inplace() -> None:
    sp = sf.spec("rsi")
    x = 100 + np.arange(30.0) % 7
    _, s1 = sf.apply(x[:20], sp)
    before = s1.copy()
    _, s2 = sf.apply(x[20:], sp, s1)
    assert s1 == before and s2 != s1 and s2.bars == 30
    _, s3 = sf.apply(x[20:], sp, s1, inplace=True)
    assert s3 is s1 and s1 == s2


def test_state_header_and_errors() -> None:
    sp = sf.spec("macd", 12, 26, 9, convention="ema_seed=first")
    _, state = sf.apply(np.ones((5, 3)), sp)
    meta, arrays = state.to_parts()
    assert meta["version"] == sf.FORMAT_VERSION and meta["bars"] == 5 and meta["symbols"] == 3
    assert meta["spec"] == {
        "indicator": "macd",
        "params": [12, 26, 9],
        "convention": {"type": "MacdConvention", "seed": "first", "align": "slow"},
    }
    assert set(arrays) == {"x", "run", "f", "s", "g"}
    with pytest.raises(InvalidParams, match="symbol columns"):
        sf.apply(np.ones((2, 4)), sp, state)
    with pytest.raises(InvalidParams, match="was made for"):
        sf.apply(np.ones((2, 3)), sf.spec("macd"), state)
    with pytest.raises(InvalidParams, match="version"):
        sf.State.from_parts({**meta, "version": 99}, arrays)
    with pytest.raises(InvalidParams, match="array 'f'"):
        sf.State.from_parts(meta, {**arrays, "f": np.zeros(2)})
    with pytest.raises(InvalidParams):
        sf.spec("macd", 26, 12)
    with pytest.raises(InvalidParams):
        sf.spec("bbands", 1, convention="bb_ddof=1")
    with pytest.raises(InvalidParams):
        sf.spec("nope")
    assert sf.spec("kdj").names == ("kdj_k_9_3_3", "kdj_d_9_3_3", "kdj_j_9_3_3")
    assert sf.spec("bbands", 20, 2.5).names[0] == "bb_upper_20_2.5"


def test_convention_none_is_fixed_when_the_spec_is_made() -> None:
    import marketframe

    with marketframe.options.context(conventions={"rsi": "rsi_seed=first"}):
        sp = sf.spec("rsi")
    assert sp.convention == ind.RsiConvention(seed="first")


# ---------------------------------------------------------------------------------------
# TA-Lib 0.8's streaming handles, where the conventions coincide (TA-Lib's, default
# periods): open on a history, update bar by bar, against our state stepped alike


def _talib_handles(h: np.ndarray, lo: np.ndarray, c: np.ndarray) -> dict[str, Any]:
    return {
        "sma": tstream.SMA(c, timeperiod=20),
        "ema": tstream.EMA(c, timeperiod=20),
        "rsi": tstream.RSI(c, timeperiod=14),
        "macd": tstream.MACD(c, fastperiod=12, slowperiod=26, signalperiod=9),
        "bbands": tstream.BBANDS(c, timeperiod=20, nbdevup=2.0, nbdevdn=2.0, matype=0),
        "kdj": tstream.STOCH(
            h, lo, c, fastk_period=9, slowk_period=3, slowk_matype=0, slowd_period=3, slowd_matype=0
        ),
    }


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_talib_streaming_handles(seed: int) -> None:
    rng = np.random.default_rng(seed)
    bars, opened = 400, 60
    c = np.round(100 + rng.standard_normal(bars).cumsum(), 2)
    c[200:230] = c[200]  # a flat stretch: flat RSV and zero deviation
    h = c + np.round(rng.uniform(0, 1, bars), 2)
    lo = c - np.round(rng.uniform(0, 1, bars), 2)
    handles = _talib_handles(h[:opened], lo[:opened], c[:opened])
    states = {}
    for name in handles:
        hist = (h[:opened], lo[:opened], c[:opened]) if name == "kdj" else c[:opened]
        _, states[name] = sf.apply(hist, sf.spec(name, convention="talib"))
    for t in range(opened, bars):
        for name, handle in handles.items():
            sp = states[name].spec
            theirs = handle.update(h[t], lo[t], c[t]) if name == "kdj" else handle.update(c[t])
            peek = states[name].copy()
            bar = (h[t], lo[t], c[t]) if name == "kdj" else c[t]
            ours, states[name] = sf.step(bar, sp, states[name])
            assert states[name] != peek or t == opened - 1
            t_vals = np.atleast_1d(np.asarray(theirs, dtype=float))
            o_vals = np.atleast_1d(np.asarray(ours, dtype=float))[: len(t_vals)]
            scale = 100.0 if name in ("rsi", "kdj") else float(c.max())
            np.testing.assert_allclose(o_vals, t_vals, rtol=0, atol=TOL * scale, err_msg=name)


def test_talib_handles_disagree_where_the_conventions_do() -> None:
    """A check that the comparison above can fail: the Taiwanese KDJ is not STOCH."""
    rng = np.random.default_rng(3)
    c = np.round(100 + rng.standard_normal(80).cumsum(), 2)
    h, lo = c + 0.5, c - 0.5
    handle = _talib_handles(h[:60], lo[:60], c[:60])["kdj"]
    _, state = sf.apply((h[:60], lo[:60], c[:60]), sf.spec("kdj", convention="kdj=recursive50"))
    theirs = handle.update(h[60], lo[60], c[60])
    ours, _ = sf.step((h[60], lo[60], c[60]), state.spec, state)
    assert abs(float(ours[0]) - theirs[0]) > 1e-6
    assert talib.__version__.startswith("0.8")
