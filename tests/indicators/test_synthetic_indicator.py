"""Adding an indicator is its kernel, its machine and one row (docs/contributing.md).

This test adds ``vwma`` -- a made-up indicator: the volume-weighted mean of the last ``n``
closes, and the mean volume -- at test time, with exactly those three pieces, and checks
that everything else follows from them, each equal to the kernel: the ``md`` accessor on
pandas and polars, the conventions and ``marketframe.options``, a stateful spec (chunks
with the state carried equal one pass), ``Store.compute`` and ``read_derived`` over a
sandbox store, the live engine fed trades, and the charts. It reads the volume, which no
built-in indicator reads: every consumer must take the inputs from the row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, NamedTuple

import matplotlib

matplotlib.use("agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import polars as pl  # noqa: E402
import pytest  # noqa: E402
from numpy.lib.stride_tricks import sliding_window_view  # noqa: E402
from numpy.typing import ArrayLike, NDArray  # noqa: E402

import marketframe  # noqa: E402
from marketframe import frames, plot  # noqa: E402
from marketframe import indicators as ind  # noqa: E402
from marketframe.exceptions import InvalidParams  # noqa: E402
from marketframe.indicators import Chart, Indicator, Period, registry  # noqa: E402
from marketframe.indicators import stateful as sf  # noqa: E402
from marketframe.indicators.options import resolve  # noqa: E402
from marketframe.store import Store  # noqa: E402
from marketframe.stream import LiveIndicators  # noqa: E402

Array = NDArray[np.float64]
NAME = "vwma"
DAILY = "stock.historical.candles"


# 1. the kernel: its inputs, then its periods (with their defaults), then convention=


@dataclasses.dataclass(frozen=True)
class VwmaConvention:
    """``weights``: the volume, or equal weights (a plain mean of the closes)."""

    weights: Literal["volume", "equal"] = "volume"


class VwmaResult(NamedTuple):
    average: Array
    volume: Array


def _window_sum(a: Array, n: int) -> Array:
    """Sums of the last ``n`` bars along time, NaN where the window is short or holds one."""
    out = np.full(a.shape, np.nan)
    if a.shape[0] >= n:
        out[n - 1 :] = sliding_window_view(a, n, axis=0).sum(axis=-1)
    return out


def _weighted(c: Array, v: Array, equal: bool) -> tuple[Array, Array, Array]:
    """A bar lacking its close or its volume is missing; the weights and weighted closes."""
    missing = np.isnan(c) | np.isnan(v)
    v = np.where(missing, np.nan, v)
    w = np.where(missing, np.nan, 1.0) if equal else v
    return c * w, w, v


def vwma(close: ArrayLike, volume: ArrayLike, n: int = 10, *, convention: Any = None) -> VwmaResult:
    conv = resolve(NAME, convention)
    n = ind.check_period(n)
    cw, w, v = _weighted(
        np.asarray(close, float), np.asarray(volume, float), conv.weights == "equal"
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return VwmaResult(_window_sum(cw, n) / _window_sum(w, n), _window_sum(v, n) / n)


# 2. the machine: its state (rings of the last n-1 bars) and its one-bar step


class VwmaMachine(sf.Machine):
    def __init__(self, spec: sf.IndicatorSpec) -> None:
        super().__init__(spec)
        self.n = int(spec.params[0])
        self.equal = spec.convention.weights == "equal"
        self.rings = {"cw": self.n - 1, "w": self.n - 1, "v": self.n - 1}

    def step(self, s: Any, bar: int, x: Any, out: Any) -> None:
        cw, w, v = _weighted(*x, self.equal)
        average, volume = out
        with np.errstate(invalid="ignore", divide="ignore"):
            np.divide(_ring_sum(s["cw"], cw), _ring_sum(s["w"], w), out=average)
        np.multiply(_ring_sum(s["v"], v), 1.0 / self.n, out=volume)
        for key, value in (("cw", cw), ("w", w), ("v", v)):
            ring = s[key]
            if len(ring):  # a step writes only its bar's row of a ring
                ring[bar % len(ring)] = value


def _ring_sum(ring: Array, x: Array) -> Array:
    return ring.sum(axis=0) + x if len(ring) else x.copy()


# 3. the row

ROW = Indicator(
    name=NAME,
    kernel=vwma,
    machine=VwmaMachine,
    inputs=("close", "volume"),
    periods=(Period("n", 10),),
    convention=VwmaConvention,
    variants={"volume": VwmaConvention(), "equal": VwmaConvention(weights="equal")},
    default="volume",
    outputs=("vwma", "vwma_volume"),
    result=VwmaResult,
    warmup=lambda params, convention: int(params[0]) - 1,  # a window: its earlier bars
    chart=Chart("vwma"),
)


@pytest.fixture
def row(monkeypatch: pytest.MonkeyPatch) -> Indicator:
    """The row, in the table for this test only (every reader of the table sees it)."""
    monkeypatch.setitem(registry._ROWS, NAME, ROW)
    return ROW


def candles(lengths: list[int], seed: int = 1, gap: bool = True) -> pd.DataFrame:
    """A long frame of symbols of these lengths (dates in order), one with a missing close
    and another with a missing volume when ``gap``."""
    rng = np.random.default_rng(seed)
    parts = []
    for j, n in enumerate(lengths):
        close = 50.0 * (j + 1) + rng.normal(0, 1, n).cumsum()
        volume = rng.integers(1, 5000, n).astype(float)
        if gap and n > 12:
            (close if j % 2 else volume)[n // 2] = np.nan
        dates = pd.date_range("2025-01-01", periods=n, freq="D")
        parts.append(pd.DataFrame({"symbol": f"S{j}", "date": dates, "close": close}))
        parts[-1]["volume"] = volume
    return pd.concat(parts, ignore_index=True)


def per_symbol(df: pd.DataFrame, n: int, convention: Any = None) -> dict[str, np.ndarray]:
    """The kernel on each symbol alone (in date order), in the frame's row order."""
    out = {f"vwma_{n}": np.empty(len(df)), f"vwma_volume_{n}": np.empty(len(df))}
    at = pd.Series(np.arange(len(df)), df.index)
    for _, g in df.groupby("symbol", sort=False):
        g = g.sort_values("date")
        res = vwma(g["close"], g["volume"], n, convention=convention)
        out[f"vwma_{n}"][at[g.index]] = res.average
        out[f"vwma_volume_{n}"][at[g.index]] = res.volume
    return out


def same(got: Any, want: Any, err: str = "") -> None:
    got, want = np.asarray(got, float), np.asarray(want, float)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=err)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9, equal_nan=True, err_msg=err)


def test_the_row_is_checked_when_made_and_known_only_once_registered() -> None:
    with pytest.raises(TypeError, match="default n=10 is not 20"):
        dataclasses.replace(ROW, periods=(Period("n", 20),))
    with pytest.raises(TypeError, match="does not match the outputs"):
        dataclasses.replace(ROW, outputs=("vwma",))
    with pytest.raises(InvalidParams, match="is unknown: 'vwma'"):
        sf.spec(NAME)
    with pytest.raises(AttributeError):
        pd.DataFrame({"close": [1.0]}).md.vwma()


@pytest.mark.parametrize("gap", [True, False], ids=["gaps", "no gaps"])
def test_md_on_pandas_and_polars_equals_the_kernel_per_symbol(row: Indicator, gap: bool) -> None:
    df = candles([30, 7, 45, 1], gap=gap).sample(frac=1.0, random_state=2)  # rows shuffled
    want = per_symbol(df, 5)
    outs = {
        "pandas": df.md.vwma(5),
        "by name": df.md.indicator(NAME, n=5),
        "functional": frames.indicator(df, NAME, 5),
        "polars": pl.from_pandas(df).md.vwma(5).to_pandas(),
        "lazy": pl.from_pandas(df).lazy().md.vwma(5).collect().to_pandas(),
    }
    for how, out in outs.items():
        assert list(out.columns[-2:]) == ["vwma_5", "vwma_volume_5"], how
        for col, values in want.items():
            same(out[col], values, f"{how} {col}")
    one = df[df["symbol"] == "S0"].sort_values("date")
    renamed = one.rename(columns={"close": "px"}).md.vwma(5, close="px")
    same(renamed["vwma_5"], vwma(one["close"], one["volume"], 5).average)


def test_conventions_and_options_come_from_the_row(row: Indicator) -> None:
    assert ind.variants(NAME) == {"volume": VwmaConvention(), "equal": VwmaConvention("equal")}
    df = candles([40], gap=False)
    equal = per_symbol(df, 10, "equal")["vwma_10"]
    same(df.md.vwma(convention="equal")["vwma_10"], equal)
    with marketframe.options.context(conventions={NAME: "equal"}):
        same(df.md.vwma()["vwma_10"], equal)
        assert sf.spec(NAME).convention == VwmaConvention("equal")
    with pytest.raises(InvalidParams, match="allowed: volume, equal"):
        df.md.vwma(convention="talib")


def test_a_stateful_spec_in_chunks_equals_one_pass(row: Indicator) -> None:
    df = candles([60, 60, 60], seed=3)
    close = df["close"].to_numpy().reshape(3, 60).T  # a panel: bars x symbols
    volume = df["volume"].to_numpy().reshape(3, 60).T
    sp = sf.spec(NAME, 4)
    assert sp.inputs == ("close", "volume") and sp.names == ("vwma_4", "vwma_volume_4")
    want = vwma(close, volume, 4)
    state, got = None, []
    for a, b in [(0, 1), (1, 1), (1, 17), (17, 60)]:
        res, state = sf.apply({"close": close[a:b], "volume": volume[a:b]}, sp, state)
        assert isinstance(res, VwmaResult)
        state = sf.State.from_bytes(state.to_bytes())
        got.append(res)
    for k in range(2):
        same(np.concatenate([r[k] for r in got]), want[k], str(k))
    one, steps = None, []
    for t in range(8):  # one bar at a time, of one series
        res, one = sf.step((close[t, 0], volume[t, 0]), sp, one)
        steps.append(res.average)
    same(steps, want.average[:8, 0])


def test_store_compute_and_read_derived_equal_the_kernel(
    row: Indicator, sandbox: Any, tmp_path: Path
) -> None:
    sp = sf.spec(NAME, 5)
    with Store(tmp_path / "s", api_key=sandbox.api_key, base_url=sandbox.base_url) as st:
        st.sync(DAILY, ["2330", "2454"], "2024-10-01", "2026-10-30", progress=False)
        rep = st.compute(DAILY, [sp, "sma"], max_workers=1)  # in this process: it has the row
        assert all(m == {"full": ["2330", "2454"]} for m in rep.modes.values())
        st.sync(DAILY, ["2330", "2454"], "2024-10-01", "2026-11-20", progress=False)
        rep = st.compute(DAILY, [sp, "sma"], max_workers=1)  # the new bars, from the state
        assert all(m == {"appended": ["2330", "2454"]} for m in rep.modes.values())
        assert any(p.startswith("dataset=derived.vwma/") for p in rep.paths())
        got = st.read_derived(DAILY, sp)
        source = st.read(DAILY).sort_values(["symbol", "date"], ignore_index=True)
    assert len(got) == len(source) and list(got.columns) == ["symbol", "date", *sp.names]
    want = per_symbol(source, 5)
    for col in sp.names:
        same(got[col], want[col], col)


def trades(minutes: int, symbols: list[str], seed: int = 5) -> list[pd.DataFrame]:
    """A trades frame per minute: each symbol trades one to three times in it."""
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp("2026-11-20 09:00", tz="Asia/Taipei")
    price = {s: 100.0 + 10 * j for j, s in enumerate(symbols)}
    out, serial = [], 0
    for m in range(minutes):
        rows = []
        for sym in symbols:
            for sec in sorted(rng.choice(59, rng.integers(1, 4), replace=False)):
                price[sym] = round(price[sym] + rng.normal(0, 0.3), 2)
                rows.append((sym, t0 + pd.Timedelta(minutes=m, seconds=int(sec)), price[sym]))
        f = pd.DataFrame(sorted(rows, key=lambda r: r[1]), columns=["symbol", "time", "price"])
        f["size"] = rng.integers(1, 50, len(f)).astype(float)
        f["serial"] = np.arange(serial, serial + len(f))
        serial += len(f)
        out.append(f)
    return out


def test_the_live_engine_fed_trades_equals_the_kernel_over_its_bars(row: Indicator) -> None:
    symbols = ["A", "B"]
    eng = LiveIndicators(symbols, [sf.spec(NAME, 4), "sma"])
    assert eng.columns[:2] == ["vwma_4", "vwma_volume_4"]
    rows = pd.concat([eng.feed(f) for f in trades(30, symbols)] + [eng.flush()])
    final = rows[rows["is_final"]]
    assert sorted(final.groupby("symbol").size()) == [30, 30]
    for sym, bars in final.groupby("symbol"):
        want = vwma(bars["close"], bars["volume"], 4)
        same(bars["vwma_4"], want.average, str(sym))
        same(bars["vwma_volume_4"], want.volume, str(sym))


def test_the_charts_draw_it_in_its_panel(row: Indicator) -> None:
    df = candles([40], gap=False)
    df["open"], df["high"], df["low"] = df["close"], df["close"] + 1, df["close"] - 1
    fig = df.md.vwma(5).md.plot()
    assert [a.get_ylabel() for a in fig.axes] == ["", "volume", "vwma"]
    plot.pyplot().close(fig)


@pytest.fixture(autouse=True)
def _no_row_left() -> Iterator[None]:
    yield
    assert NAME not in registry.names()  # the table is as it was after every test
