"""Indicator kernels against TA-Lib (its conventions) and an independent plain-Python reference.

Tolerances: "relative 1e-9" is taken against the scale of the quantity: 100 for the 0..100
oscillators (RSI, KDJ) and the price level for price-valued outputs (SMA, EMA, bands, MACD,
whose line crosses zero where a pure relative test is meaningless).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pytest
import talib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from marketframe import indicators as ind
from marketframe.exceptions import InvalidParams

SMA = talib.MA_Type.SMA

RTOL = 1e-9
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------------------------------
# random candles with flat stretches and gaps


@st.composite
def candles(draw: st.DrawFn, gaps: bool = True, max_size: int = 160) -> dict[str, np.ndarray]:
    n = draw(st.integers(1, max_size))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    steps = np.round(rng.normal(0.0, draw(st.sampled_from([0.05, 0.5, 3.0])), n), 2)
    spread = np.round(np.abs(rng.normal(0.0, 0.8, n)), 2)
    flat = np.zeros(n, dtype=bool)
    for _ in range(draw(st.integers(0, 3))):
        s, length = draw(st.integers(0, n - 1)), draw(st.integers(1, 40))
        flat[s : s + length] = True
    steps[flat] = 0.0
    spread[flat] = 0.0
    close = np.round(draw(st.floats(30.0, 500.0)) + np.cumsum(steps), 2)
    close = np.abs(close) + 1.0
    high = close + spread
    low = close - np.round(spread * rng.random(n), 2)
    if gaps:
        for _ in range(draw(st.integers(0, 3))):
            s, length = draw(st.integers(0, n - 1)), draw(st.integers(1, 6))
            which = draw(st.sampled_from(["all", "all", "close", "high", "low"]))
            for name, a in (("close", close), ("high", high), ("low", low)):
                if which in ("all", name):
                    a[s : s + length] = np.nan
    return {"close": close, "high": high, "low": low}


def runs(x: np.ndarray) -> list[slice]:
    """The NaN-free runs of x."""
    out, start = [], None
    for i, v in enumerate(x):
        if math.isnan(v):
            if start is not None:
                out.append(slice(start, i))
            start = None
        elif start is None:
            start = i
    if start is not None:
        out.append(slice(start, len(x)))
    return out


def close_to(ours: np.ndarray, ref: np.ndarray, scale: float) -> None:
    """Same NaN pattern and values within RTOL of the scale."""
    ours, ref = np.asarray(ours), np.asarray(ref)
    assert ours.shape == ref.shape
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(ref))
    np.testing.assert_allclose(ours, ref, rtol=RTOL, atol=RTOL * scale, equal_nan=True)


def after_warmup(ours: np.ndarray, theirs: np.ndarray, scale: float) -> None:
    """Where TA-Lib has a value, ours has the same one."""
    m = ~np.isnan(theirs)
    assert not np.isnan(ours[m]).any()
    np.testing.assert_allclose(ours[m], theirs[m], rtol=RTOL, atol=RTOL * scale)


def level(x: np.ndarray) -> float:
    finite = x[np.isfinite(x)]
    return float(np.max(np.abs(finite))) if finite.size else 1.0


# ---------------------------------------------------------------------------------------
# the plain-Python reference: written from the definitions, run by run


def by_runs(x: np.ndarray, fn) -> np.ndarray:  # type: ignore[no-untyped-def]
    out = [math.nan] * len(x)
    for r in runs(x):
        vals = fn([float(v) for v in x[r]])
        for i, v in enumerate(vals):
            out[r.start + i] = v
    return np.array(out, dtype=float)


def ref_sma(x: np.ndarray, n: int) -> np.ndarray:
    def f(v: list[float]) -> list[float]:
        return [
            math.fsum(v[i - n + 1 : i + 1]) / n if i >= n - 1 else math.nan for i in range(len(v))
        ]

    return by_runs(x, f)


def ref_ema(x: np.ndarray, n: int, seed: str, start: int | None = None) -> np.ndarray:
    k = 2.0 / (n + 1)
    s0 = (n - 1 if seed == "sma" else 0) if start is None else start

    def f(v: list[float]) -> list[float]:
        out = [math.nan] * len(v)
        if len(v) <= s0:
            return out
        y = math.fsum(v[s0 - n + 1 : s0 + 1]) / n if seed == "sma" else v[0]
        out[s0] = y
        for i in range(s0 + 1, len(v)):
            y = y + k * (v[i] - y)
            out[i] = y
        return out

    return by_runs(x, f)


def ref_rsi(x: np.ndarray, n: int, seed: str, flat: float) -> np.ndarray:
    def f(v: list[float]) -> list[float]:
        out = [math.nan] * len(v)
        ch = [v[i] - v[i - 1] for i in range(1, len(v))]
        first = n if seed == "sma" else 1
        if len(v) <= first:
            return out
        g = math.fsum(max(c, 0.0) for c in ch[:first]) / first
        lo = math.fsum(max(-c, 0.0) for c in ch[:first]) / first
        for i in range(first, len(v)):
            if i > first:
                c = ch[i - 1]
                g = (g * (n - 1) + max(c, 0.0)) / n
                lo = (lo * (n - 1) + max(-c, 0.0)) / n
            out[i] = flat if g + lo == 0.0 else 100.0 * g / (g + lo)
        return out

    return by_runs(x, f)


def ref_macd(x: np.ndarray, fast: int, slow: int, sig: int, seed: str, align: str):  # type: ignore[no-untyped-def]
    if seed == "first":
        f_start = 0
    else:
        f_start = slow - 1 if align == "slow" else fast - 1
    line = ref_ema(x, fast, seed, f_start) - ref_ema(x, slow, seed)
    signal = ref_ema(line, sig, seed)
    return line, signal, line - signal


def ref_bbands(x: np.ndarray, n: int, mult: float, ddof: int):  # type: ignore[no-untyped-def]
    def std(v: list[float]) -> list[float]:
        out = [math.nan] * len(v)
        for i in range(n - 1, len(v)):
            w = v[i - n + 1 : i + 1]
            m = math.fsum(w) / n
            out[i] = math.sqrt(math.fsum((u - m) ** 2 for u in w) / (n - ddof))
        return out

    mid, sd = ref_sma(x, n), by_runs(x, std)
    return mid + mult * sd, mid, mid - mult * sd


def ref_kdj(h, lo, c, n: int, m1: int, m2: int, smoothing: str, seed: float, flat: float):  # type: ignore[no-untyped-def]
    size = len(c)
    rsv = np.full(size, np.nan)
    bad = [math.isnan(h[i]) or math.isnan(lo[i]) or math.isnan(c[i]) for i in range(size)]
    for i in range(n - 1, size):
        if any(bad[i - n + 1 : i + 1]):  # a bar lacking high, low or close is missing
            continue
        hw, lw = h[i - n + 1 : i + 1], lo[i - n + 1 : i + 1]
        hh, ll = max(hw), min(lw)
        rsv[i] = flat if hh == ll else 100.0 * (c[i] - ll) / (hh - ll)
    if smoothing == "sma":
        k = ref_sma(rsv, m1)
        d = ref_sma(k, m2)
    else:

        def rec(m: int):  # type: ignore[no-untyped-def]
            def f(v: list[float]) -> list[float]:
                y, out = seed, []
                for u in v:
                    y = (m - 1) / m * y + u / m
                    out.append(y)
                return out

            return f

        k = by_runs(rsv, rec(m1))
        d = by_runs(k, rec(m2))
    return k, d, 3 * k - 2 * d


# ---------------------------------------------------------------------------------------
# TA-Lib conventions: ours == TA-Lib on every NaN-free run, after TA-Lib's warm-up


def each_run(x: np.ndarray, check) -> None:  # type: ignore[no-untyped-def]
    for r in runs(x):
        check(r)


@SETTINGS
@given(candles(), st.integers(1, 30))
def test_sma_ema_match_talib(c: dict[str, np.ndarray], n: int) -> None:
    x = c["close"]
    s, e = ind.sma(x, n), ind.ema(x, n)

    def check(r: slice) -> None:
        seg = x[r].copy()
        after_warmup(s[r], talib.SMA(seg, n), level(x))
        if n > 1:  # talib.EMA(n=1) is rejected by TA-Lib
            after_warmup(e[r], talib.EMA(seg, n), level(x))

    each_run(x, check)


@SETTINGS
@given(candles(), st.integers(2, 30))
def test_rsi_matches_talib(c: dict[str, np.ndarray], n: int) -> None:
    x = c["close"]
    ours = ind.rsi(x, n)
    each_run(x, lambda r: after_warmup(ours[r], talib.RSI(x[r].copy(), n), 100.0))


@SETTINGS
@given(candles(), st.sampled_from([(12, 26, 9), (3, 7, 4), (5, 6, 2), (2, 30, 1)]))
def test_macd_matches_talib(c: dict[str, np.ndarray], p: tuple[int, int, int]) -> None:
    x = c["close"]
    ours = ind.macd(x, *p)

    def check(r: slice) -> None:
        theirs = talib.MACD(x[r].copy(), *p)
        for a, b in zip(ours, theirs, strict=True):
            after_warmup(a[r], b, level(x))

    each_run(x, check)


@SETTINGS
@given(candles(), st.integers(2, 30), st.sampled_from([1.0, 2.0, 2.5]))
def test_bbands_match_talib(c: dict[str, np.ndarray], n: int, mult: float) -> None:
    x = c["close"]
    ours = ind.bbands(x, n, mult)

    def check(r: slice) -> None:
        theirs = talib.BBANDS(x[r].copy(), n, mult, mult, SMA)
        for a, b in zip(ours, theirs, strict=True):
            after_warmup(a[r], b, level(x))

    each_run(x, check)


@SETTINGS
@given(candles(), st.sampled_from([(9, 3, 3), (5, 1, 2), (14, 3, 5), (2, 2, 1)]))
def test_kdj_matches_talib_stoch(c: dict[str, np.ndarray], p: tuple[int, int, int]) -> None:
    h, lo, x = c["high"], c["low"], c["close"]
    ours = ind.kdj(h, lo, x, *p, convention="talib")  # the default is the Taiwanese one

    def check(r: slice) -> None:
        k, d = talib.STOCH(h[r].copy(), lo[r].copy(), x[r].copy(), p[0], p[1], SMA, p[2], SMA)
        after_warmup(ours.k[r], k, 100.0)
        after_warmup(ours.d[r], d, 100.0)
        after_warmup(ours.j[r], 3 * k - 2 * d, 100.0)

    each_run(np.where(np.isnan(h) | np.isnan(lo), np.nan, x), check)  # bars with all three


# ---------------------------------------------------------------------------------------
# every convention, gaps included: ours == the plain-Python reference (same NaN pattern)


@SETTINGS
@given(candles(), st.integers(1, 25))
def test_sma_reference(c: dict[str, np.ndarray], n: int) -> None:
    close_to(ind.sma(c["close"], n), ref_sma(c["close"], n), level(c["close"]))


@SETTINGS
@given(candles(), st.integers(1, 25), st.sampled_from(["talib", "ema_seed=first"]))
def test_ema_reference(c: dict[str, np.ndarray], n: int, name: str) -> None:
    conv = ind.variants("ema")[name]
    assert isinstance(conv, ind.EmaConvention)
    x = c["close"]
    close_to(ind.ema(x, n, convention=name), ref_ema(x, n, conv.seed), level(x))


@SETTINGS
@given(candles(), st.integers(1, 25), st.sampled_from(sorted(ind.variants("rsi"))))
def test_rsi_reference(c: dict[str, np.ndarray], n: int, name: str) -> None:
    conv = ind.variants("rsi")[name]
    assert isinstance(conv, ind.RsiConvention)
    x = c["close"]
    close_to(ind.rsi(x, n, convention=conv), ref_rsi(x, n, conv.seed, conv.flat), 100.0)


@SETTINGS
@given(
    candles(),
    st.sampled_from([(12, 26, 9), (3, 7, 4), (1, 2, 1)]),
    st.sampled_from(sorted(ind.variants("macd"))),
)
def test_macd_reference(c: dict[str, np.ndarray], p: tuple[int, int, int], name: str) -> None:
    conv = ind.variants("macd")[name]
    assert isinstance(conv, ind.MacdConvention)
    x = c["close"]
    for a, b in zip(
        ind.macd(x, *p, convention=name), ref_macd(x, *p, conv.seed, conv.align), strict=True
    ):
        close_to(a, b, level(x))


@SETTINGS
@given(
    candles(),
    st.integers(2, 25),
    st.sampled_from([2.0, 1.5]),
    st.sampled_from(["talib", "bb_ddof=1"]),
)
def test_bbands_reference(c: dict[str, np.ndarray], n: int, mult: float, name: str) -> None:
    conv = ind.variants("bbands")[name]
    assert isinstance(conv, ind.BBandsConvention)
    x = c["close"]
    for a, b in zip(
        ind.bbands(x, n, mult, convention=name), ref_bbands(x, n, mult, conv.ddof), strict=True
    ):
        close_to(a, b, level(x))


@SETTINGS
@given(
    candles(),
    st.sampled_from([(9, 3, 3), (5, 1, 2), (3, 4, 2)]),
    st.sampled_from(sorted(ind.variants("kdj"))),
)
def test_kdj_reference(c: dict[str, np.ndarray], p: tuple[int, int, int], name: str) -> None:
    conv = ind.variants("kdj")[name]
    assert isinstance(conv, ind.KdjConvention)
    ours = ind.kdj(c["high"], c["low"], c["close"], *p, convention=name)
    ref = ref_kdj(c["high"], c["low"], c["close"], *p, conv.smoothing, conv.seed, conv.flat_rsv)
    for a, b in zip(ours, ref, strict=True):
        close_to(a, b, 100.0)


# ---------------------------------------------------------------------------------------
# panels: a (bars, symbols) panel equals its columns computed one by one


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(candles(max_size=90), min_size=1, max_size=4), st.data())
def test_panel_equals_columns(cols: list[dict[str, np.ndarray]], data: st.DataObject) -> None:
    size = min(len(c["close"]) for c in cols)
    panel = {k: np.stack([c[k][:size] for c in cols], axis=1) for k in ("close", "high", "low")}
    name = data.draw(st.sampled_from(["talib", "other"]))
    pick = {
        ind_name: list(ind.variants(ind_name))[-1 if name == "other" else 0]
        for ind_name in ind.INDICATORS
    }
    x, h, lo = panel["close"], panel["high"], panel["low"]
    outs = {
        "sma": [ind.sma(x, 5)],
        "ema": [ind.ema(x, 5, convention=pick["ema"])],
        "rsi": [ind.rsi(x, 6, convention=pick["rsi"])],
        "macd": list(ind.macd(x, 3, 8, 4, convention=pick["macd"])),
        "bbands": list(ind.bbands(x, 6, convention=pick["bbands"])),
        "kdj": list(ind.kdj(h, lo, x, 5, 3, 2, convention=pick["kdj"])),
    }
    for j in range(x.shape[1]):
        xs, hs, ls = x[:, j].copy(), h[:, j].copy(), lo[:, j].copy()
        single = {
            "sma": [ind.sma(xs, 5)],
            "ema": [ind.ema(xs, 5, convention=pick["ema"])],
            "rsi": [ind.rsi(xs, 6, convention=pick["rsi"])],
            "macd": list(ind.macd(xs, 3, 8, 4, convention=pick["macd"])),
            "bbands": list(ind.bbands(xs, 6, convention=pick["bbands"])),
            "kdj": list(ind.kdj(hs, ls, xs, 5, 3, 2, convention=pick["kdj"])),
        }
        for key, arrays in outs.items():
            for a, b in zip(arrays, single[key], strict=True):
                close_to(a[:, j], b, 1e3)


# ---------------------------------------------------------------------------------------
# long series (several levels of the blocked recursion) and specific behaviours


@pytest.fixture(scope="module")
def long_candles() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    close = 200.0 + np.cumsum(np.round(rng.normal(0, 1, 60_000), 2))
    close = np.abs(close) + 5.0
    spread = np.round(np.abs(rng.normal(0, 0.7, close.size)), 2)
    return {"close": close, "high": close + spread, "low": close - spread}


def test_long_series_match_talib(long_candles: dict[str, np.ndarray]) -> None:
    x, h, lo = long_candles["close"], long_candles["high"], long_candles["low"]
    lv = level(x)
    after_warmup(ind.sma(x, 20), talib.SMA(x, 20), lv)
    after_warmup(ind.ema(x, 200), talib.EMA(x, 200), lv)
    after_warmup(ind.rsi(x, 14), talib.RSI(x, 14), 100.0)
    for a, b in zip(ind.macd(x), talib.MACD(x), strict=True):
        after_warmup(a, b, lv)
    for a, b in zip(ind.bbands(x, 20), talib.BBANDS(x, 20, 2, 2, SMA), strict=True):
        after_warmup(a, b, lv)
    k, d = talib.STOCH(h, lo, x, 9, 3, SMA, 3, SMA)
    ours = ind.kdj(h, lo, x, convention="talib")
    after_warmup(ours.k, k, 100.0)
    after_warmup(ours.d, d, 100.0)


def test_long_series_with_gap_restarts(long_candles: dict[str, np.ndarray]) -> None:
    x = long_candles["close"].copy()
    x[30_000:30_003] = np.nan
    ours = ind.rsi(x, 14)
    assert np.isnan(ours[30_000 : 30_003 + 14]).all()
    tail = talib.RSI(x[30_003:].copy(), 14)
    after_warmup(ours[30_003:], tail, 100.0)
    after_warmup(ind.ema(x, 50)[30_003:], talib.EMA(x[30_003:].copy(), 50), level(x))


def test_rsi_is_never_zero_filled_after_nan() -> None:
    x = 100.0 + np.sin(np.arange(80.0))
    x[40] = np.nan
    theirs = talib.RSI(x, 14)
    assert (theirs[41:] == 0.0).all()  # the TA-Lib behaviour we refuse to copy
    ours = ind.rsi(x, 14)
    assert np.isnan(ours[40:55]).all()
    assert (ours[55:] > 0.0).all() and (ours[55:] < 100.0).all()


def test_warmup_lengths_follow_the_conventions() -> None:
    x = np.linspace(10.0, 50.0, 60) + np.sin(np.arange(60.0))
    first = lambda a: int(np.argmax(~np.isnan(a)))  # noqa: E731
    assert first(ind.sma(x, 20)) == 19
    assert first(ind.ema(x, 20)) == 19
    assert first(ind.ema(x, 20, convention="ema_seed=first")) == 0
    assert first(ind.rsi(x, 14)) == 14
    m = ind.macd(x)
    assert (first(m.line), first(m.signal)) == (25, 33)
    assert first(ind.macd(x, convention="macd_align=own").line) == 25
    assert first(ind.bbands(x).upper) == 19
    kd = ind.kdj(x + 1, x - 1, x, convention="talib")
    assert (first(kd.k), first(kd.d)) == (10, 12)
    assert first(ind.kdj(x + 1, x - 1, x, convention="kdj=recursive50").d) == 8
    assert first(ind.kdj(x + 1, x - 1, x).d) == 8  # the default: the recursion seeded at 50


def test_flat_window_conventions() -> None:
    x = np.full(30, 100.0)
    assert (ind.rsi(x, 14)[14:] == 0.0).all()
    assert (ind.rsi(x, 14, convention="rsi_flat=50")[14:] == 50.0).all()
    assert (ind.kdj(x, x, x, convention="talib").k[10:] == 0.0).all()
    np.testing.assert_allclose(ind.kdj(x, x, x, convention="rsv_flat=50").k[10:], 50.0, rtol=1e-14)
    up, mid, lo = ind.bbands(x, 20)
    assert (up[19:] == 100.0).all() and (lo[19:] == 100.0).all() and (mid[19:] == 100.0).all()


def test_variants_and_errors() -> None:
    for name in ind.INDICATORS:
        v = ind.variants(name)
        assert next(iter(v)) == "talib"
    assert ind.variants("bbands")["bb_ddof=1"] == ind.BBandsConvention(ddof=1)
    assert ind.variants("kdj")["kdj=recursive50"].smoothing == "recursive"  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="allowed: bbands, ema, kdj"):
        ind.variants("vwap")
    with pytest.raises(ValueError, match="ema_seed=first"):
        ind.ema([1.0, 2.0], 2, convention="nope")
    with pytest.raises(TypeError, match="EmaConvention"):
        ind.ema([1.0, 2.0], 2, convention=ind.RsiConvention())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="integer >= 1"):
        ind.sma([1.0, 2.0], 0)
    with pytest.raises(ValueError, match="2-D"):
        ind.sma(np.zeros((2, 2, 2)), 2)
    with pytest.raises(ValueError, match="shorter than slow"):
        ind.macd([1.0] * 40, 26, 12)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ind.variants("vwap"),
        lambda: ind.ema([1.0, 2.0], 2, convention="nope"),
        lambda: ind.ema([1.0, 2.0], 2, convention=ind.RsiConvention()),  # type: ignore[arg-type]
        lambda: ind.sma([1.0, 2.0], 0),
        lambda: ind.sma([1.0, 2.0], "20"),  # type: ignore[arg-type]
        lambda: ind.sma(["a", "b"], 2),
        lambda: ind.sma(np.zeros((2, 2, 2)), 2),
        lambda: ind.macd([1.0] * 40, 26, 12),
        lambda: ind.bbands([1.0] * 40, 1, convention="bb_ddof=1"),
        lambda: ind.kdj([1.0] * 3, [1.0] * 4, [1.0] * 3),
        lambda: ind.rsv([1.0] * 3, [1.0] * 4, [1.0] * 3),
    ],
)
def test_bad_input_raises_invalid_params(call: Any) -> None:
    # typed errors: callers can catch marketframe's own error class (and ValueError)
    with pytest.raises(InvalidParams):
        call()


def test_short_and_empty_inputs() -> None:
    for n in (0, 1, 3):
        x = np.arange(float(n)) + 1.0
        assert np.isnan(ind.sma(x, 5)).all() and ind.sma(x, 5).shape == (n,)
        assert np.isnan(ind.rsi(x, 5)).all()
        assert all(np.isnan(a).all() for a in ind.macd(x))
        assert all(np.isnan(a).all() for a in ind.kdj(x, x, x))
        assert all(np.isnan(a).all() and a.shape == (n,) for a in ind.bbands(x, 5))
        assert np.isnan(ind.ema(x, 5)).all() and ind.ema(x, 5).shape == (n,)
    assert np.isnan(ind.ema(np.full(10, np.nan), 3)).all()


def test_bbands_nearly_flat_window_far_from_the_reference() -> None:
    # one 0.01 tick at a level 100x the first value: the variance is ~5e-12 of E[d**2],
    # well above rounding noise, so it must not be flattened to 0
    x = np.r_[np.full(30, 10.0), np.full(40, 1000.0)]
    x[50] += 0.01
    ours = ind.bbands(x, 20)
    ref = ref_bbands(x, 20, 2.0, 0)
    for a, b in zip(ours, ref, strict=True):
        close_to(a, b, level(x))
    assert ours.upper[55] - ours.middle[55] > 0.0
    for a, b in zip(ours, talib.BBANDS(x, 20, 2, 2, SMA), strict=True):
        after_warmup(a, b, level(x))


# ---------------------------------------------------------------------------------------
# the chunked fast path (NaN-free input) across many chunk and tile boundaries


@pytest.fixture
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    from marketframe.indicators import _fast

    monkeypatch.setattr(_fast, "CHUNK", 200)  # 1-D: 192-bar chunks; panel of 2: 96 bars
    monkeypatch.setattr(_fast, "PANEL_CHUNK", 500)  # 5 symbols: 96-bar chunks


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(candles(gaps=False, max_size=700), st.integers(0, 3))
def test_fast_path_across_chunks_equals_reference(
    tiny_chunks: None, c: dict[str, np.ndarray], pick: int
) -> None:
    h, lo, x = c["high"], c["low"], c["close"]
    lv = level(x)
    close_to(ind.sma(x, 20), ref_sma(x, 20), lv)
    seed: Literal["sma", "first"] = "first" if pick % 2 else "sma"
    close_to(ind.ema(x, 9, convention=ind.EmaConvention(seed=seed)), ref_ema(x, 9, seed), lv)
    close_to(
        ind.rsi(x, 14, convention=ind.RsiConvention(seed=seed)), ref_rsi(x, 14, seed, 0.0), 100.0
    )  # type: ignore[arg-type]
    align: Literal["slow", "own"] = "own" if pick // 2 else "slow"
    conv = ind.MacdConvention(seed=seed, align=align)
    for a, b in zip(ind.macd(x, convention=conv), ref_macd(x, 12, 26, 9, seed, align), strict=True):
        close_to(a, b, lv)
    for a, b in zip(
        ind.bbands(x, 20, 2.0, convention=ind.BBandsConvention(ddof=pick % 2)),
        ref_bbands(x, 20, 2.0, pick % 2),
        strict=True,
    ):
        close_to(a, b, lv)
    smoothing: Literal["sma", "recursive"] = "recursive" if pick // 2 else "sma"
    kconv = ind.KdjConvention(smoothing=smoothing)
    for a, b in zip(
        ind.kdj(h, lo, x, 9, 3, 3, convention=kconv),
        ref_kdj(h, lo, x, 9, 3, 3, smoothing, 50.0, 0.0),
        strict=True,
    ):
        close_to(a, b, 100.0)


def test_fast_path_panel_tiles_and_chunks(
    tiny_chunks: None, long_candles: dict[str, np.ndarray]
) -> None:
    size, width = 300, 5
    x = np.stack([long_candles["close"][i * size : (i + 1) * size] for i in range(width)], axis=1)
    h = x + 0.5
    lo = x - 0.5
    panel = [
        ind.sma(x, 20),
        ind.ema(x, 20),
        ind.rsi(x, 14),
        *ind.macd(x),
        *ind.bbands(x),
        *ind.kdj(h, lo, x, convention="kdj=recursive50"),
    ]
    for j in range(width):
        xs, hs, ls = x[:, j].copy(), h[:, j].copy(), lo[:, j].copy()
        k, d = talib.STOCH(hs, ls, xs, 9, 3, SMA, 3, SMA)
        after_warmup(ind.kdj(h, lo, x, convention="talib").k[:, j], k, 100.0)
        after_warmup(panel[2][:, j], talib.RSI(xs, 14), 100.0)
        single = [
            ind.sma(xs, 20),
            ind.ema(xs, 20),
            ind.rsi(xs, 14),
            *ind.macd(xs),
            *ind.bbands(xs),
            *ind.kdj(hs, ls, xs, convention="kdj=recursive50"),
        ]
        for a, b in zip(panel, single, strict=True):
            close_to(a[:, j], b, 1e3)


@pytest.mark.parametrize("inner_gap", [False, True])
def test_ragged_panel_equals_truncated_columns(
    long_candles: dict[str, np.ndarray], inner_gap: bool
) -> None:
    # symbols with fewer bars are padded with NaN at the end (as the accessors build
    # panels); with an inner gap too, the whole-array path handles the panel
    lengths = [300, 37, 120, 0, 5, 299]
    x = np.full((300, len(lengths)), np.nan)
    for j, n in enumerate(lengths):
        x[:n, j] = long_candles["close"][j * 300 : j * 300 + n]
    if inner_gap:
        x[150, 0] = np.nan
    h, lo = x + 0.5, x - 0.5
    panel = [
        ind.sma(x, 20),
        ind.ema(x, 20),
        ind.rsi(x, 14),
        *ind.macd(x),
        *ind.bbands(x),
        *ind.kdj(h, lo, x, convention="talib"),
        *ind.kdj(h, lo, x),
    ]
    for j, n in enumerate(lengths):
        xs, hs, ls = x[:n, j].copy(), h[:n, j].copy(), lo[:n, j].copy()
        single = [
            ind.sma(xs, 20),
            ind.ema(xs, 20),
            ind.rsi(xs, 14),
            *ind.macd(xs),
            *ind.bbands(xs),
            *ind.kdj(hs, ls, xs, convention="talib"),
            *ind.kdj(hs, ls, xs),
        ]
        for a, b in zip(panel, single, strict=True):
            close_to(a[:n, j], b, 1e3)
            assert np.isnan(a[n:, j]).all()
        if n == 300 and not inner_gap:
            after_warmup(panel[2][:, j], talib.RSI(xs, 14), 100.0)


# ---------------------------------------------------------------------------------------
# gaps through the fast path: runs one by one, and gappy panel columns one by one


@pytest.fixture
def split_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    from marketframe.indicators import _kernels

    monkeypatch.setattr(_kernels, "_MIN_RUN", 1)
    monkeypatch.setattr(_kernels, "_MAX_GAP_SHARE", 1.0)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(candles(), st.integers(0, 3))
def test_gaps_split_into_runs_equal_reference(
    split_runs: None, c: dict[str, np.ndarray], pick: int
) -> None:
    h, lo, x = c["high"], c["low"], c["close"]
    lv = level(x)
    seed: Literal["sma", "first"] = "first" if pick % 2 else "sma"
    close_to(ind.sma(x, 7), ref_sma(x, 7), lv)
    close_to(ind.ema(x, 5, convention=ind.EmaConvention(seed=seed)), ref_ema(x, 5, seed), lv)
    close_to(
        ind.rsi(x, 6, convention=ind.RsiConvention(seed=seed)), ref_rsi(x, 6, seed, 0.0), 100.0
    )
    for a, b in zip(
        ind.macd(x, 3, 7, 4, convention=ind.MacdConvention(seed=seed)),
        ref_macd(x, 3, 7, 4, seed, "slow"),
        strict=True,
    ):
        close_to(a, b, lv)
    for a, b in zip(ind.bbands(x, 6), ref_bbands(x, 6, 2.0, 0), strict=True):
        close_to(a, b, lv)
    smoothing: Literal["sma", "recursive"] = "recursive" if pick // 2 else "sma"
    kconv = ind.KdjConvention(smoothing=smoothing)
    ref = ref_kdj(h, lo, x, 5, 3, 2, smoothing, 50.0, 0.0)
    for a, b in zip(ind.kdj(h, lo, x, 5, 3, 2, convention=kconv), ref, strict=True):
        close_to(a, b, 100.0)
    # the same series as a column of a panel whose other columns are clean or ragged
    panel = np.stack([x, np.r_[x[np.isfinite(x)], np.full(np.isnan(x).sum(), np.nan)]], axis=1)
    panel = np.where(np.isfinite(panel), panel, np.nan)
    close_to(ind.rsi(panel, 6)[:, 0], ref_rsi(x, 6, "sma", 0.0), 100.0)
    close_to(ind.macd(panel, 3, 7, 4).signal[:, 0], ref_macd(x, 3, 7, 4, "sma", "slow")[1], lv)


def test_block_end_recursion_with_many_blocks_equals_linrec() -> None:
    # chunks of more than 64 x 64 blocks take the block-end recursion's sliced path (its
    # single large products ran threaded in OpenBLAS, ~100x slower): same values
    from marketframe.indicators._linrec import Recursion, linrec

    rng = np.random.default_rng(5)
    for a in (0.5, 0.9, 0.999):
        rec = Recursion(a)
        for rows in (64, 65, 4096, 4097, 40_000):
            e = rng.uniform(-1.0, 1.0, rows)
            want = linrec(e, rec.big_a)
            np.testing.assert_allclose(rec._block_ends(e), want, rtol=1e-13, atol=1e-13)


@settings(max_examples=300, deadline=None)
@given(
    a=st.one_of(
        st.floats(0.0, 1.0),
        st.floats(0.0, 1.0).map(lambda x: x**16),  # a factor to a block's power
        st.floats(-1.0, 0.0),
    ),
    n=st.integers(1, 5000),
)
def test_powers_of_a_factor_equal_every_power_flushed(a: float, n: int) -> None:
    # the powers are computed only down to the flush threshold (numpy's power is slow on
    # every result that underflows): the same bits as all of them computed, then flushed
    from marketframe.indicators._linrec import _flush, _powers

    with np.errstate(under="ignore"):
        want = _flush(a ** np.arange(1, n + 1, dtype=np.float64))
    np.testing.assert_array_equal(_powers(a, n), want)


def test_series_ema_and_rsi_in_chunks_of_many_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    from marketframe.indicators import _fast

    x = 100.0 * np.exp(np.cumsum(np.random.default_rng(6).normal(0.0, 0.01, 300_000)))
    want_ema, want_rsi = ind.ema(x, 20), ind.rsi(x, 14)
    monkeypatch.setattr(_fast, "CHUNK", 1 << 18)  # 16,384 blocks a chunk
    close_to(ind.ema(x, 20), want_ema, level(x))
    close_to(ind.rsi(x, 14), want_rsi, 100.0)
