"""The live engine left running and fed hostile input: its memory and checkpoint bounded over
sessions, a checkpoint of another call refused (or extended when asked), and every bad
argument, trade and checkpoint file an error of marketframe's tree naming it."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from marketframe.exceptions import InvalidParams, MarketframeError
from marketframe.stream import LiveIndicators

SPECS = ["sma", "rsi", "kdj", "macd", "bbands"]
DAYS = ["2026-11-16", "2026-11-17", "2026-11-18", "2026-11-19"]  # Monday to Thursday


def session(day: str, symbols: list[str], serial0: int, seed: int) -> list[pd.DataFrame]:
    """A regular session of trades (09:00-13:30), a frame per minute: each symbol trades at
    10 s and 40 s past the minute, on a random walk, serials rising."""
    rng = np.random.default_rng(seed)
    n = len(symbols)
    t0 = pd.Timestamp(f"{day} 09:00", tz="Asia/Taipei")
    frames = []
    for m in range(271):
        times = [t0 + pd.Timedelta(minutes=m, seconds=s) for s in (10, 40)]
        f = pd.DataFrame(
            {
                "symbol": symbols * 2,
                "time": np.repeat(times, n),
                "price": np.round(100 + rng.normal(0, 1, 2 * n), 2),
                "size": rng.integers(1, 9, 2 * n).astype(float),
                "serial": np.arange(serial0, serial0 + 2 * n),
            }
        )
        serial0 += 2 * n
        frames.append(f)
    return frames


def test_memory_and_checkpoint_stay_bounded_over_four_sessions(tmp_path: Path) -> None:
    """Four sessions of 20 symbols: the checkpoint after each session (and mid-session) is
    within 10 % of the first session's size, and the closed bars and serials the engine
    keeps mid-session do not grow with the sessions seen (every serial and every closed
    bar was kept, and saved)."""
    symbols = [f"S{i:02d}" for i in range(20)]
    eng = LiveIndicators(symbols, SPECS)
    sizes, mids, kept_bars, kept_serials = [], [], [], []
    serial = 0
    for k, day in enumerate(DAYS):
        frames = session(day, symbols, serial, seed=k)
        serial += sum(len(f) for f in frames)
        for m, f in enumerate(frames):
            eng.feed(f, peek=False)
            if m == 135:
                eng.save(tmp_path / f"mid-{k}.npz")
                mids.append((tmp_path / f"mid-{k}.npz").stat().st_size)
                kept_bars.append(sum(len(b) for b in eng.bars.values()))
                kept_serials.append(sum(len(s) for s in eng.seen.values()))
        eng.flush()
        path = tmp_path / f"live-{k}.npz"
        eng.save(path)
        sizes.append(path.stat().st_size)
    assert max(sizes) <= sizes[0] * 1.1, sizes
    assert max(mids) <= mids[0] * 1.1, mids
    assert 0 < max(kept_bars) <= kept_bars[0] * 1.1, kept_bars
    assert 0 < max(kept_serials) <= kept_serials[0] * 1.1, kept_serials
    # the checkpoint holds no closed bars: a session's worth would be 20 x 271 x 8 floats
    assert max(mids) < 20 * 271 * 8 * 8


def test_a_resumed_engine_equals_one_that_never_stopped_across_sessions(tmp_path: Path) -> None:
    """Saved after each session and loaded again, the engine gives the final rows of the one
    that ran through, though the checkpoint holds no closed bars."""
    symbols = ["A", "B", "C"]
    whole, hopping = LiveIndicators(symbols, SPECS), LiveIndicators(symbols, SPECS)
    serial = 0
    for k, day in enumerate(DAYS[:3]):
        frames = session(day, symbols, serial, seed=k)
        serial += sum(len(f) for f in frames)
        mid = len(frames) // 2
        a = [whole.feed(f, peek=False) for f in frames] + [whole.flush()]
        b = [hopping.feed(f, peek=False) for f in frames[:mid]]
        hopping.save(tmp_path / "live.npz")
        hopping = LiveIndicators.load(tmp_path / "live.npz")
        # the restarted stream replays the session so far: what was seen is skipped
        b += [hopping.feed(f, peek=False) for f in frames] + [hopping.flush()]
        pd.testing.assert_frame_equal(
            pd.concat(b, ignore_index=True), pd.concat(a, ignore_index=True)
        )
    assert all(x == y for x, y in zip(whole.states, hopping.states, strict=True))


def test_a_trade_of_an_ended_session_is_dropped_one_of_this_session_revises() -> None:
    """Once a session ended its bars are sealed: a late trade in one is dropped (no rows,
    no error, the states as they were). A late trade early in the running session still
    revises its bar and every later one, older than the recent checkpoints though it is
    (the session's first checkpoint is kept)."""
    symbols = ["A", "B"]
    eng = LiveIndicators(symbols, SPECS, checkpoint_every=5)
    monday = session(DAYS[0], symbols, 0, seed=1)
    tuesday = session(DAYS[1], symbols, 10**5, seed=2)
    for f in monday + tuesday[:120]:
        eng.feed(f, peek=False)
    before = [s.copy() for s in eng.states]
    old = monday[200].iloc[:1].assign(serial=10**6)
    assert len(eng.feed(old, peek=False)) == 0
    assert all(a == b for a, b in zip(before, eng.states, strict=True))
    early = tuesday[3].iloc[:1].assign(serial=10**6 + 1, price=150.0)
    rows = eng.feed(early, peek=False)
    assert rows["revised"].all() and set(rows["symbol"]) == {early["symbol"].iloc[0]}
    assert len(rows) == 119 - 3  # minute 3 to the last closed bar (minute 119 forming)


# -- bad input: every one an error of marketframe's tree, naming what is wrong ---------------


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"timeframe": 0}, "timeframe"),
        ({"timeframe": 7}, "timeframe"),
        ({"timeframe": -1}, "timeframe"),
        ({"timeframe": "5"}, "timeframe"),
        ({"timeframe": True}, "timeframe"),
        ({"checkpoint_every": 0}, "checkpoint_every"),
        ({"checkpoint_every": 2.5}, "checkpoint_every"),
        ({"symbols": []}, "symbols"),
        ({"symbols": ["2330", "2330"]}, "symbols"),
        ({"symbols": [2330]}, "symbols"),
        ({"symbols": "2330"}, "symbols"),
        ({"spec": []}, "spec"),
        ({"spec": [20]}, "spec"),
        ({"spec": ["sma", "sma"]}, "spec"),
    ],
)
def test_the_constructor_refuses_bad_arguments(kw: dict[str, Any], name: str) -> None:
    args: dict[str, Any] = {"symbols": ["2330", "2454"], "spec": SPECS, **kw}
    with pytest.raises(InvalidParams, match=name) as err:
        LiveIndicators(**args)
    assert "allowed:" in str(err.value)


def test_a_bare_spec_name_is_one_indicator() -> None:
    """``spec="rsi"`` is the RSI (it was read as the indicators 'r', 's', 'i')."""
    assert LiveIndicators(["2330"], "rsi").columns == ["rsi_14"]


def _good() -> pd.DataFrame:
    return session(DAYS[0], ["A", "B"], 0, seed=0)[0]


@pytest.mark.parametrize(
    ("change", "name"),
    [
        (lambda f: f.drop(columns="price"), "price"),
        (lambda f: f.drop(columns=["serial", "time"]), "serial"),
        (lambda f: f.assign(price=[np.nan, 1.0, 1.0, 1.0]), "price"),
        (lambda f: f.assign(price=[1.0, np.inf, 1.0, 1.0]), "price"),
        (lambda f: f.assign(price=[1.0, 1.0, -2.0, 1.0]), "price"),
        (lambda f: f.assign(size=[1.0, -5.0, 1.0, 1.0]), "size"),
        (lambda f: f.assign(size=["a", "b", "c", "d"]), "size"),
        (lambda f: f.assign(serial=[1.0, np.nan, 3.0, 4.0]), "serial"),
        (lambda f: f.assign(time=pd.Timestamp("2100-01-04 09:00", tz="Asia/Taipei")), "time"),
        (lambda f: f.assign(time=["soon", "later", "never", "now"]), "time"),
        (lambda f: f.assign(time=[pd.NaT] * 4), "time"),
    ],
)
def test_feed_refuses_bad_trades_and_changes_nothing(change: Any, name: str) -> None:
    eng, ref = LiveIndicators(["A", "B"], SPECS), LiveIndicators(["A", "B"], SPECS)
    frames = session(DAYS[0], ["A", "B"], 0, seed=0)
    for f in frames[:30]:
        eng.feed(f)
        ref.feed(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # one error, no pandas warning about the input first
        with pytest.raises(MarketframeError, match=name) as err:
            eng.feed(change(frames[30]))
    assert "\n" not in str(err.value)
    pd.testing.assert_frame_equal(eng.feed(frames[30]), ref.feed(frames[30]))


def test_feed_reads_times_given_as_iso_text_like_timestamps() -> None:
    """Trade times as text (as a CSV or JSON gives them) are read as ISO 8601, naive ones
    as Taipei's, with no warning about a guessed format."""
    eng, ref = LiveIndicators(["A", "B"], SPECS), LiveIndicators(["A", "B"], SPECS)
    frames = session(DAYS[0], ["A", "B"], 0, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in frames[:30]:
            naive = f["time"].dt.tz_convert("Asia/Taipei").dt.tz_localize(None)
            text = f.assign(time=naive.dt.strftime("%Y-%m-%dT%H:%M:%S.%f"))
            pd.testing.assert_frame_equal(eng.feed(text), ref.feed(f))


def _saved(tmp_path: Path) -> Path:
    eng = LiveIndicators(["A", "B"], SPECS)
    for f in session(DAYS[0], ["A", "B"], 0, seed=0)[:20]:
        eng.feed(f)
    path = tmp_path / "live.npz"
    eng.save(path)
    return path


@pytest.mark.parametrize(
    "damage",
    ["truncated", "zero bytes", "directory", "missing", "text", "other npz", "bad header"],
)
def test_load_refuses_a_damaged_checkpoint_naming_the_file(tmp_path: Path, damage: str) -> None:
    path = _saved(tmp_path)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "zero bytes":
        path.write_bytes(b"")
    elif damage == "directory":
        path.unlink()
        path.mkdir()
    elif damage == "missing":
        path.unlink()
    elif damage == "text":
        path.write_text("symbol,time\n2330,09:00\n")
    elif damage == "other npz":
        np.savez(path.open("wb"), a=np.arange(3))
    elif damage == "bad header":
        np.savez(path.open("wb"), __meta__=np.frombuffer(b"{not json", dtype=np.uint8))
    with pytest.raises(InvalidParams, match="path") as err:
        LiveIndicators.load(path)
    assert str(path) in str(err.value)


def test_load_refuses_a_file_that_is_no_npz_without_offering_to_unpickle_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "live.npz"
    path.write_text("hello")
    with pytest.raises(InvalidParams, match="not an .npz file") as err:
        LiveIndicators.load(path)
    assert "pickle" not in str(err.value)


@pytest.mark.parametrize("parent", ["missing", "a file"])
def test_save_refuses_a_path_whose_directory_is_not_there(tmp_path: Path, parent: str) -> None:
    if parent == "a file":
        (tmp_path / "d").write_text("")
    path = tmp_path / "d" / "live.npz"
    eng = LiveIndicators(["A"], SPECS)
    with pytest.raises(InvalidParams, match="directory") as err:
        eng.save(path)
    assert str(tmp_path / "d") in str(err.value)


# -- the stream method: a checkpoint is the call's own, and saved at most every save_every --

NOW = "2026-11-20T14:45:00+08:00"


def _first_batches(s: Any, ck: Path, symbols: list[str], spec: list[str], n: int) -> None:
    for k, _ in enumerate(s.indicators(symbols, spec=spec, checkpoint=ck, idle=1.5)):
        if k == n:
            break


def test_stream_indicators_refuses_a_checkpoint_of_another_call(
    make_sandbox: Any, tmp_path: Path
) -> None:
    """A checkpoint of ``sma`` over 2330 silently overrode a call for ``macd`` over 2330 and
    2454 (0 rows, no error). It is refused now, naming what differs, before anything is
    subscribed; a timeframe that differs is refused even when extending."""
    ck = tmp_path / "live.npz"
    with make_sandbox(now=NOW) as (sb, c):
        with c.stream(batch_rows=500) as s:
            _first_batches(s, ck, ["2330"], ["sma"], 2)
        with c.stream() as s:
            with pytest.raises(InvalidParams, match="checkpoint") as err:
                s.indicators(["2330", "2454"], spec=["macd"], checkpoint=ck)
            assert "symbols" in str(err.value) and "spec" in str(err.value)
            assert str(ck) in str(err.value)
            with pytest.raises(InvalidParams, match="timeframe"):
                s.indicators(["2330"], "5", spec=["sma"], checkpoint=ck, extend_checkpoint=True)
            with pytest.raises(InvalidParams, match="symbols"):  # extending drops nothing
                s.indicators(["2454"], spec=["sma"], checkpoint=ck, extend_checkpoint=True)
            assert not s.subscriptions()


def test_stream_indicators_refuses_a_checkpoint_in_a_missing_directory_when_called(
    make_sandbox: Any, tmp_path: Path
) -> None:
    """The first save, after the first batch, raised FileNotFoundError naming a temporary
    file; the call is refused now, naming the directory, before anything is subscribed."""
    ck = tmp_path / "no" / "live.npz"
    with make_sandbox(now=NOW) as (sb, c), c.stream() as s:
        with pytest.raises(InvalidParams, match="checkpoint") as err:
            s.indicators(["2330"], spec=["sma"], checkpoint=ck)
        assert str(tmp_path / "no") in str(err.value)
        assert not s.subscriptions()


def test_stream_indicators_extends_a_checkpoint_when_asked(
    make_sandbox: Any, tmp_path: Path
) -> None:
    """``extend_checkpoint=True`` adds symbols and specs: 2330's SMA goes on from its
    state (equal to a run that never stopped), 2454 and MACD start fresh."""
    ck = tmp_path / "live.npz"
    with make_sandbox(now=NOW) as (sb, c):
        with c.stream(batch_rows=500) as s:
            whole = list(s.indicators(["2330"], spec=["sma"], idle=1.5, peek=False))
        with c.stream(batch_rows=500) as s:
            _first_batches(s, ck, ["2330"], ["sma"], 2)
        with c.stream(batch_rows=500) as s:
            frames = s.indicators(
                ["2330", "2454"],
                spec=["sma", "macd"],
                checkpoint=ck,
                extend_checkpoint=True,
                idle=1.5,
                peek=False,
            )
            rest = list(frames)
    rows = pd.concat(rest, ignore_index=True)
    assert {"sma_20", "macd_12_26_9"} <= set(rows.columns)
    assert set(rows["symbol"]) == {"2330", "2454"}
    ref = pd.concat(whole, ignore_index=True).set_index(["symbol", "time"])
    got = rows[rows["symbol"] == "2330"].drop_duplicates(["symbol", "time"], keep="last")
    got = got.set_index(["symbol", "time"])
    assert len(got) > 100
    np.testing.assert_array_equal(
        got["sma_20"].to_numpy(float), ref.loc[got.index, "sma_20"].to_numpy(float)
    )


def test_stream_indicators_saves_at_most_every_save_every_seconds(
    make_sandbox: Any, tmp_path: Path
) -> None:
    """The checkpoint is written after the first batch, then not again within
    ``save_every`` seconds (it was saved whole after every batch), and once more when the
    stream ends; each write replaces the file whole (a new file renamed over it)."""
    ck = tmp_path / "live.npz"
    with make_sandbox(now=NOW) as (sb, c), c.stream(batch_rows=200) as s:
        stamps = []
        for _ in s.indicators(
            ["2330", "2454"], spec="sma", checkpoint=ck, save_every=3600, idle=1.5
        ):
            st = ck.stat()
            stamps.append((st.st_ino, st.st_mtime_ns))
    assert len(stamps) > 5 and len(set(stamps)) == 1
    st = ck.stat()
    assert (st.st_ino, st.st_mtime_ns) != stamps[0]  # written again at the end
    assert [p.name for p in tmp_path.iterdir()] == ["live.npz"]  # no temporary file left


def test_a_checkpoint_of_another_convention_is_refused_even_when_extending(
    tmp_path: Path,
) -> None:
    """The same columns under another convention are another indicator: refused, the
    conventions shown (the columns alone would read the same), also when extending."""
    from marketframe.indicators import stateful as sf

    path = _saved(tmp_path)
    eng = LiveIndicators.load(path)
    other = [sf.spec(s) for s in SPECS if s != "macd"] + [
        sf.spec("macd", convention="ema_seed=first")
    ]
    for extend in (False, True):
        with pytest.raises(InvalidParams, match="first") as err:
            eng.fits(["A", "B"], other, 1, extend=extend, where="Stream.indicators", path=path)
        assert str(path) in str(err.value)
    same = [sf.spec(s) for s in SPECS] + [sf.spec("ema")]
    assert (
        eng.fits(["A", "B", "C"], same, 1, extend=True, where="w", path=path).columns[-1]
        == "ema_20"
    )
