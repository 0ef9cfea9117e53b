"""Live indicators over the stream: bars from trades, state-carrying indicators.

Over real sockets against the sandbox (a day after its close: the stream replays the day's
trades and REST holds its 1-minute candles); revisions and resuming on scripted trades.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import marketframe  # noqa: F401  (registers df.md)
from marketframe import Client
from marketframe.sandbox import Sandbox
from marketframe.stream import LiveIndicators

NOW = "2026-11-20T14:45:00+08:00"
SPECS = ["sma", "rsi", "kdj", "macd", "bbands"]
SYMBOLS = ["2330", "2454"]


@pytest.fixture(scope="module")
def day(make_sandbox: Any) -> Iterator[tuple[pd.DataFrame, list[pd.DataFrame]]]:
    """The REST 1-minute candles of SYMBOLS and the streamed trade frames, as they came."""
    with make_sandbox(now=NOW) as (sb, c):
        candles = pd.concat(
            [c.stock.intraday.candles(symbol=s, timeframe="1") for s in SYMBOLS],
            ignore_index=True,
        )
        with c.stream() as s:
            s.subscribe("trades", SYMBOLS)
            batches = [b.to_pandas() for b in s.batches(idle=1.5)]
    candles["symbol"] = candles["symbol"].astype(str)
    yield candles.sort_values(["symbol", "date"], ignore_index=True), batches


def expected(candles: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    ref = candles.md.sma(20).md.rsi(14).md.kdj().md.macd().md.bbands()
    return ref[["symbol", "date", *columns]].rename(columns={"date": "time"})


def check(rows: pd.DataFrame, ref: pd.DataFrame, columns: list[str]) -> None:
    got = rows.set_index(["symbol", "time"]).sort_index()
    want = ref.set_index(["symbol", "time"]).loc[got.index]
    for col in columns:
        a, b = got[col].to_numpy(float), want[col].to_numpy(float)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=col)
        scale = 100.0 if col.startswith(("rsi", "kdj")) else 1000.0
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12 * scale, err_msg=col)


def test_final_bars_from_the_stream_equal_md_over_the_candles(day) -> None:  # type: ignore[no-untyped-def]
    candles, batches = day
    eng = LiveIndicators(SYMBOLS, SPECS)
    warm = candles.groupby("symbol").head(40)  # history: the first 40 minutes
    eng.warm(warm)
    rows = pd.concat([eng.feed(b) for b in batches] + [eng.flush()], ignore_index=True)
    final = rows[rows["is_final"]]
    assert not final["revised"].any()
    ref = expected(candles, eng.columns)
    assert len(final) == len(candles) - len(warm)  # every later bar, once
    check(final, ref, eng.columns)
    # bars equal the service's candles
    got = final.set_index(["symbol", "time"]).sort_index()
    want = candles.rename(columns={"date": "time"}).set_index(["symbol", "time"]).loc[got.index]
    for col in ("open", "high", "low", "close", "volume"):
        np.testing.assert_array_equal(got[col].to_numpy(float), want[col].to_numpy(float))
    # a batch that ends inside a bar emits its peek (the stream's own batches depend on
    # timing: on a fast machine the whole replayed day can come as one batch, whose last
    # bar the close ends, so the day is cut here at a trade in the middle of the session)
    trades = pd.concat(batches, ignore_index=True)
    again = LiveIndicators(SYMBOLS, SPECS)
    again.warm(warm)
    first = again.feed(trades.iloc[: len(trades) // 2])
    assert (~first["is_final"]).any()  # forming-bar peeks were emitted


def test_a_peek_commits_nothing(day) -> None:  # type: ignore[no-untyped-def]
    candles, batches = day
    eng = LiveIndicators(SYMBOLS, SPECS)
    eng.feed(batches[0], peek=False)
    before = [s.copy() for s in eng.states]
    for sym in SYMBOLS:
        eng.peek(sym)
        eng.peek(sym)
    assert all(a == b for a, b in zip(before, eng.states, strict=True))


def _trades(day_batches: list[pd.DataFrame]) -> pd.DataFrame:
    t = pd.concat(day_batches, ignore_index=True)
    return t[~t["is_trial"]].reset_index(drop=True)


def test_backfilled_trade_in_a_closed_bar_rewinds_and_replays(day) -> None:  # type: ignore[no-untyped-def]
    candles, batches = day
    trades = _trades(batches)
    minute = trades["time"].dt.floor("min")
    late = (trades["symbol"] == "2330") & (
        minute == minute[trades["symbol"] == "2330"].iloc[0] + pd.Timedelta(minutes=30)
    )
    assert late.any()
    eng = LiveIndicators(SYMBOLS, SPECS, checkpoint_every=7)
    first = eng.feed(trades[~late], peek=False)
    back = trades[late].assign(backfilled=True)
    revised = eng.feed(back, peek=False)
    rest = eng.flush()
    assert len(revised) and revised["revised"].all() and revised["is_final"].all()
    assert set(revised["symbol"]) == {"2330"}
    # the last word on each bar equals md over the service's candles
    rows = pd.concat([first, revised, rest], ignore_index=True)
    last = rows.drop_duplicates(["symbol", "time"], keep="last")
    check(last, expected(candles, eng.columns), eng.columns)
    assert len(last) == len(candles)


def test_a_restarted_process_resumes_equal_to_an_uninterrupted_run(day, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    candles, batches = day
    whole = LiveIndicators(SYMBOLS, SPECS, checkpoint_every=5)
    full = pd.concat([whole.feed(b) for b in batches] + [whole.flush()], ignore_index=True)
    half = len(batches) // 2
    a = LiveIndicators(SYMBOLS, SPECS, checkpoint_every=5)
    for b in batches[:half]:
        a.feed(b)
    a.save(tmp_path / "live.npz")
    del a
    b_eng = LiveIndicators.load(tmp_path / "live.npz")
    # the restarted stream replays the day from the start: what was seen is skipped
    resumed = pd.concat([b_eng.feed(b) for b in batches] + [b_eng.flush()], ignore_index=True)
    fin_full = full[full["is_final"]].set_index(["symbol", "time"])
    fin_res = resumed[resumed["is_final"]].set_index(["symbol", "time"])
    assert len(fin_res) and fin_res.index.isin(fin_full.index).all()
    pd.testing.assert_frame_equal(fin_res, fin_full.loc[fin_res.index])
    assert all(x == y for x, y in zip(whole.states, b_eng.states, strict=True))


# -- the stream method: s.indicators(...) over real sockets ---------------------------------

YESTERDAY = "2026-11-19T14:45:00+08:00"


def _last_word(frames: list[pd.DataFrame]) -> pd.DataFrame:
    rows = pd.concat(frames, ignore_index=True)
    final = rows[rows["is_final"]]
    return final.drop_duplicates(["symbol", "time"], keep="last")


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_stream_indicators_warm_from_a_store(tmp_path: Path, backend: str) -> None:
    """Warmed from yesterday's stored minute candles, the last word on each of today's
    streamed bars equals ``df.md`` over yesterday's candles followed by today's REST ones."""
    from marketframe.store import Store

    with Sandbox(seed=7, now=YESTERDAY, rate_limit=None) as sb:
        with Store(tmp_path / "st", api_key=sb.api_key, base_url=sb.base_url) as st:
            st.sync("stock.historical.candles", SYMBOLS, timeframe="1", progress=False)
            sb.set_now(NOW)
            with Client(sb.api_key, base_url=sb.base_url, cache=False) as c:
                today = pd.concat(
                    [c.stock.intraday.candles(symbol=s, timeframe="1") for s in SYMBOLS],
                    ignore_index=True,
                )
                with c.stream(
                    backfill=True, backoff=0.01, max_reconnects=100, backend=backend
                ) as s:  # type: ignore[call-overload]
                    frames = list(
                        s.indicators(SYMBOLS, "1", SPECS, warmup=st, warmup_bars=10**6, idle=3.0)
                    )
            history = st.read("stock.historical.candles", SYMBOLS, timeframe="1")
    if backend == "polars":
        frames = [f.to_pandas() for f in frames]
        for f in frames:
            f["time"] = f["time"].dt.tz_convert("Asia/Taipei")
    fixed = {"symbol", "time", "open", "high", "low", "close", "volume", "is_final", "revised"}
    cols = [c for c in frames[0].columns if c not in fixed]
    today["symbol"] = today["symbol"].astype(str)
    history["symbol"] = history["symbol"].astype(str)
    allc = pd.concat([history, today], ignore_index=True).drop_duplicates(
        ["symbol", "date"], keep="last"
    )
    allc = allc.sort_values(["symbol", "date"], ignore_index=True)
    last = _last_word(frames)
    t0 = today["date"].min()
    assert len(last) == len(today) and (last["time"] >= t0).all()
    check(last, expected(allc, cols), cols)


def test_stream_indicators_resume_from_a_checkpoint(make_sandbox: Any, tmp_path: Path) -> None:
    """A process that stops mid-day and restarts with the same checkpoint file yields, in
    all, the final rows of an uninterrupted run."""
    ck = tmp_path / "live.npz"
    with make_sandbox(now=NOW) as (sb, c):
        with c.stream(batch_rows=500) as s:
            whole = _last_word(list(s.indicators(SYMBOLS, spec=SPECS, idle=1.5, peek=False)))
        with c.stream(batch_rows=500) as s:
            first = []
            frames = s.indicators(SYMBOLS, spec=SPECS, checkpoint=ck, idle=1.5, peek=False)
            for k, f in enumerate(frames):
                first.append(f)
                if k == 2:
                    break  # the process stops; the checkpoint holds where it was
        assert ck.exists()
        with c.stream(
            batch_rows=500
        ) as s:  # a new process: the day replays, what was seen is skipped
            rest = list(s.indicators(SYMBOLS, spec=SPECS, checkpoint=ck, idle=1.5, peek=False))
    resumed = _last_word(first + rest)
    pd.testing.assert_frame_equal(
        resumed.set_index(["symbol", "time"]).sort_index(),
        whole.set_index(["symbol", "time"]).sort_index(),
    )


@pytest.mark.slow
def test_drops_and_backfill_heal_to_md_over_the_day_with_revisions_marked(
    make_sandbox: Any,
) -> None:
    """The sandbox drops the connection every 150 events (market clock at 3000x); the
    stream reconnects and backfills the missed trades from REST. A backfilled trade lands in
    a bar already closed by later trades, so that bar is emitted again with
    ``revised=True``. After the drops heal, the last word on every bar of the day equals
    ``df.md`` over the day's REST candles, and every bar the stream corrected is marked."""
    with make_sandbox(now=NOW, stream_speed=3000.0, drop_after=150) as (sb, c):
        candles = pd.concat(
            [c.stock.intraday.candles(symbol=s, timeframe="1") for s in SYMBOLS],
            ignore_index=True,
        )
        with c.stream(backfill=True, backoff=0.05, max_reconnects=50) as s:
            # the market clock restarts at 07:30, an hour before the first trial match, so
            # the subscription (made by the first iteration) is in place before any trade
            # even on a busy machine; 07:30-13:35 at 3000x lasts ~7 s
            sb.configure(stream_from="07:30")
            frames = list(s.indicators(SYMBOLS, "1", SPECS, idle=2.5, peek=False))
            stats, gaps = s.stats, list(s.gaps)
    assert stats.reconnects >= 3 and stats.backfilled > 0
    assert gaps and all(g.error is None for g in gaps)
    rows = pd.concat(frames, ignore_index=True)
    assert rows["is_final"].all()  # peek=False: final rows only
    revised = rows[rows["revised"]]
    assert len(revised) > 0  # drops mid-session: some missed trades were in closed bars
    first = rows.drop_duplicates(["symbol", "time"], keep="first")
    # a revision re-emits a bar or adds one the stream never saw (all its trades missed)
    assert not first["revised"].all()
    last = _last_word(frames)
    candles["symbol"] = candles["symbol"].astype(str)
    candles = candles.sort_values(["symbol", "date"], ignore_index=True)
    assert len(last) == len(candles)  # every bar of the day, healed
    cols = [x for sp in SPECS for x in LiveIndicators(SYMBOLS, [sp]).columns]
    check(last, expected(candles, cols), cols)
    got = last.set_index(["symbol", "time"]).sort_index()
    want = candles.rename(columns={"date": "time"}).set_index(["symbol", "time"]).loc[got.index]
    for col in ("open", "high", "low", "close", "volume"):
        np.testing.assert_array_equal(got[col].to_numpy(float), want[col].to_numpy(float))
    # a bar whose first emission was wrong was emitted again, marked
    firsts = first.set_index(["symbol", "time"]).loc[got.index]
    wrong = firsts["close"].to_numpy(float) != got["close"].to_numpy(float)
    wrong |= firsts["volume"].to_numpy(float) != got["volume"].to_numpy(float)
    assert got.loc[wrong, "revised"].all()


# -- scripted trades: the engine's own paths compared with each other ------------------------

ABC = ["A", "B", "C"]


def _scripted(minutes: int, seed: int = 3) -> tuple[pd.DataFrame, list[pd.DataFrame]]:
    """40 warm-up candles per symbol, then a trades frame per minute: every symbol trades
    two to four times in it (prices on a 0.05 tick), serials rising."""
    rng = np.random.default_rng(seed)
    t0 = pd.Timestamp("2026-11-20 09:00", tz="Asia/Taipei")
    close = np.round(100 + rng.normal(0, 0.5, (40, len(ABC))).cumsum(axis=0), 2)
    warm = pd.DataFrame(
        {
            "symbol": np.repeat(ABC, 40),
            "date": np.tile(
                pd.date_range(t0 - pd.Timedelta(minutes=40), periods=40, freq="min"), 3
            ),
            "open": close.T.ravel(),
            "high": close.T.ravel() + 0.1,
            "low": close.T.ravel() - 0.1,
            "close": close.T.ravel(),
            "volume": 1000.0,
        }
    )
    frames, serial = [], 0
    for m in range(minutes):
        rows = []
        for j, sym in enumerate(ABC):
            for s in sorted(rng.choice(59, rng.integers(2, 5), replace=False)):
                price = round(close[-1, j] + rng.normal(0, 0.4) / 0.05 * 0.05, 2)
                rows.append((sym, t0 + pd.Timedelta(minutes=m, seconds=int(s)), price))
        rows.sort(key=lambda r: r[1])
        f = pd.DataFrame(rows, columns=["symbol", "time", "price"])
        f["size"] = rng.integers(1, 9, len(f)).astype(float)
        f["serial"] = np.arange(serial, serial + len(f))
        serial += len(f)
        frames.append(f)
    return warm, frames


def test_peeks_of_every_symbol_equal_peeks_one_by_one_and_commit_nothing() -> None:
    """A batch touching every symbol peeks them all in one step on the states themselves
    (what it wrote is put back); that equals ``peek(sym)`` (a step on a copy of the
    symbol's state; a ring summed from another row: to rounding), and the states end as in
    an engine that never peeked."""
    warm, frames = _scripted(12)
    eng, plain = LiveIndicators(ABC, SPECS), LiveIndicators(ABC, SPECS)
    eng.warm(warm)
    plain.warm(warm)
    for f in frames:
        rows = eng.feed(f, peek=True)
        plain.feed(f, peek=False)
        peeks = rows[~rows["is_final"]].reset_index(drop=True)
        assert list(peeks["symbol"]) == ABC
        one = pd.DataFrame([eng.peek(s) for s in ABC]).astype({"time": "int64"})
        one["time"] = pd.to_datetime(one["time"], unit="us", utc=True).dt.tz_convert("Asia/Taipei")
        assert (peeks["time"] == one["time"]).all()
        for col in peeks.columns.drop(["symbol", "time"]):
            a, b = peeks[col].to_numpy(float), one[col].to_numpy(float)
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=0, err_msg=col)
        assert all(a == b for a, b in zip(eng.states, plain.states, strict=True))


def test_frame_from_blocks_equals_the_constructor_path() -> None:
    """The rows out are handed to pandas as blocks (pandas >= 3); the ``DataFrame``
    constructor path (pandas < 3) gives an equal frame, empty or not, one step or several,
    flags for all the rows of a step or one per row."""
    from marketframe.stream._live.rows import _Out, _Rows

    eng = LiveIndicators(ABC, SPECS)
    out = _Out(ABC, eng.columns)
    rng = np.random.default_rng(1)
    width = 6 + len(eng.columns)

    def rows(codes: list[int], final: bool | np.ndarray, revised: bool) -> _Rows:
        block = rng.normal(100, 5, (width, len(codes)))
        block[0] = 1_790_000_000_000_000 + 60_000_000 * rng.integers(0, 300, len(codes))
        block[5] = rng.integers(0, 5000, len(codes))  # a volume: a sum of trade sizes
        block[7, :1] = np.nan
        return _Rows(np.array(codes, dtype=np.intp), block, final, revised)

    cases = [
        [],
        [rows([0, 1, 2], True, False)],
        [rows([2], True, True), rows([0, 2], False, False)],
        [rows([0, 1, 2, 0], np.array([True, True, True, False]), False)],  # a flag per row
        [rows([1], True, True), rows([1, 2, 1], np.array([True, False, False]), False)],
    ]
    for chunks in cases:
        fast, slow = out.frame(chunks), out.frame(chunks, blocks=False)
        pd.testing.assert_frame_equal(fast, slow)
        assert list(fast.columns) == out.columns
        assert fast["time"].dtype == pd.DatetimeTZDtype("us", "Asia/Taipei")
        assert fast["symbol"].dtype == pd.Series(["A"], dtype=str).dtype
        assert fast["volume"].dtype == "Int64"  # the candles' dtype (docs/loaders.md)
        for flag in ("final", "revised"):
            want = [
                bool(v) for c in chunks for v in np.broadcast_to(getattr(c, flag), len(c.codes))
            ]
            assert fast["is_final" if flag == "final" else "revised"].tolist() == want
        assert fast["symbol"].tolist() == [ABC[int(i)] for c in chunks for i in c.codes]
    twice = out.frame(cases[1])  # the cached symbol column is copied, never shared
    twice.loc[0, "symbol"] = "Z"
    assert out.frame(cases[1])["symbol"].tolist() == ["A", "B", "C"]


def test_trades_in_any_time_and_symbol_dtype_give_the_same_rows() -> None:
    """Times read as they are when tz-aware (any unit), parsed otherwise (naive: Taipei);
    symbols looked up from strings, objects or categories; trial matches and unknown symbols
    make no bar (the after-hours session: the next test)."""
    warm, frames = _scripted(6)
    ref = LiveIndicators(ABC, SPECS)
    ref.warm(warm)
    want = pd.concat([ref.feed(f) for f in frames] + [ref.flush()], ignore_index=True)

    def variants(f: pd.DataFrame) -> list[pd.DataFrame]:
        extra = f.iloc[:2].assign(symbol="ZZZ", serial=[10**6, 10**6 + 1])
        trial = f.iloc[:1].assign(is_trial=True, price=1.0, serial=10**7)
        g = pd.concat([f.assign(is_trial=False), extra.assign(is_trial=False), trial])
        g = g.sort_values("time", kind="stable", ignore_index=True)
        return [
            f.assign(time=f["time"].dt.as_unit("ns")),
            f.assign(time=f["time"].dt.tz_localize(None)),
            f.assign(time=f["time"].astype(str)),
            f.assign(symbol=f["symbol"].astype(object)),
            f.assign(symbol=pd.Categorical(f["symbol"], categories=["C", "Q", "A", "B"])),
            f.sort_values("symbol", kind="stable", ignore_index=True),  # no sort needed
            g,
        ]

    per = list(zip(*[variants(f) for f in frames], strict=True))
    for k, fs in enumerate(per):
        eng = LiveIndicators(ABC, SPECS)
        eng.warm(warm)
        got = pd.concat([eng.feed(f) for f in fs] + [eng.flush()], ignore_index=True)
        pd.testing.assert_frame_equal(got, want, obj=f"variant {k}")


def test_batches_of_any_shape_give_the_same_final_rows() -> None:
    """A trade per batch (a bar of one trade: nothing reduced), a minute per batch (one bar
    per symbol) and three minutes per batch (several bars per symbol, closed inside the
    batch) give the same final rows; a batch with a repeated trade takes the per-trade
    path for that symbol and still gives them."""
    warm, frames = _scripted(9)
    trades = pd.concat(frames, ignore_index=True)
    shapes = {
        "trade": [trades.iloc[i : i + 1] for i in range(len(trades))],
        "minute": frames,
        "three minutes": [pd.concat(frames[i : i + 3]) for i in range(0, 9, 3)],
        "repeated": [pd.concat([f, f.iloc[:1]]) for f in frames],
    }
    finals = {}
    for name, batches in shapes.items():
        eng = LiveIndicators(ABC, SPECS)
        eng.warm(warm)
        rows = pd.concat([eng.feed(b) for b in batches] + [eng.flush()], ignore_index=True)
        final = rows[rows["is_final"]].sort_values(["symbol", "time"], ignore_index=True)
        assert len(final) == 9 * len(ABC)
        finals[name] = final
    for name, final in finals.items():
        pd.testing.assert_frame_equal(final, finals["minute"], obj=name)


@pytest.mark.parametrize(
    "after",
    [
        pd.Timedelta(hours=14, minutes=30),  # the after-hours fixed-price trade, same day
        pd.Timedelta(hours=13, minutes=31),  # the minute after the calendar's close
        pd.Timedelta(days=3, hours=8, minutes=55),  # the next trading day's trial match
    ],
)
def test_the_sessions_end_closes_every_forming_bar(after: pd.Timedelta) -> None:
    """Once the stream has any trade at or past the minute after the calendar's close, no
    trade can come into the day's bars: every forming bar is final, with the rows
    ``flush()`` gives, though only one symbol traded; that trade makes no bar."""
    warm, frames = _scripted(6)
    ref = LiveIndicators(ABC, SPECS)
    ref.warm(warm)
    for f in frames:
        ref.feed(f)
    want = ref.flush()
    assert want["is_final"].all() and sorted(want["symbol"]) == ABC
    eng = LiveIndicators(ABC, SPECS)
    eng.warm(warm)
    for f in frames:
        eng.feed(f)
    day = frames[0]["time"].iloc[0].normalize()
    one = frames[-1].iloc[:1].assign(time=day + after, serial=10**7, price=1.0)
    is_trial = after > pd.Timedelta(days=1)
    got = eng.feed(one.assign(is_trial=is_trial), peek=True)
    pd.testing.assert_frame_equal(got, want)
    assert len(eng.flush()) == 0


def test_trades_before_the_close_minute_keep_the_bars_forming() -> None:
    """The closing call's trade is stamped at the close (13:30:00) and belongs to its
    minute's bar: it closes nothing else, and the bars stay open to later prints of it."""
    warm, frames = _scripted(2)
    eng = LiveIndicators(ABC, SPECS)
    eng.warm(warm)
    for f in frames:
        eng.feed(f)
    day = frames[0]["time"].iloc[0].normalize()
    close = frames[-1].iloc[:1].assign(time=day + pd.Timedelta(hours=13, minutes=30))
    got = eng.feed(close.assign(serial=10**7), peek=False)
    assert sorted(got["symbol"]) == [close["symbol"].iloc[0]]  # its own bar before closed
    assert got["is_final"].all()
    rest = eng.flush()
    assert sorted(rest["symbol"]) == ABC  # the others' bars and the 13:30 bar were forming


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"symbols": [2330]}, "symbols"),
        ({"symbols": []}, "symbols"),
        ({"timeframe": "7"}, "timeframe"),
        ({"timeframe": "D"}, "timeframe"),
        ({"spec": ["smaa"]}, "indicator"),
        ({"warmup": "store"}, "warmup"),
        ({"warmup_bars": 0}, "warmup_bars"),
        ({"checkpoint": 5}, "checkpoint"),
        ({"idle": -1}, "idle"),
        ({"backend": "numpy"}, "backend"),
    ],
)
def test_stream_indicators_refuses_bad_arguments_when_called(
    make_sandbox: Any, kw: dict[str, object], name: str
) -> None:
    """``indicators`` is a generator: its mistakes surfaced at the first ``next`` (a
    timeframe of 7 minutes was taken, an int symbol subscribed to and waited for ever). They
    are errors of the call now, naming what is allowed, and nothing is subscribed."""
    from marketframe.exceptions import InvalidParams

    args: dict[str, object] = {"symbols": SYMBOLS, **kw}
    with (
        make_sandbox(now=NOW) as (sb, c),
        c.stream() as s,
    ):
        with pytest.raises(InvalidParams, match=name) as err:
            s.indicators(**args)  # type: ignore[arg-type]
        assert "allowed:" in str(err.value)
        assert not s.subscriptions()
