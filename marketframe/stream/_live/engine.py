"""Live indicators: bars built from streamed trades, indicators carried in their state.

``LiveIndicators`` is the engine (no network): feed it trade frames (the ``trades``
channel), it closes bars and steps the state-carrying indicators
(``marketframe.indicators.stateful``) for the symbols whose bar closed, all of them at once.
Rows out: ``symbol, time`` (bar start), OHLCV, one column per indicator output,
``is_final`` and ``revised``.

* Bars come from trades, not from the ``candles`` channel: a trade is the unit the stream's
  gap detection and REST backfill work in, so a backfilled trade can be placed in its bar
  and the bar corrected; a streamed candle carries no serials to tell what it missed. Bars
  are start-labelled buckets of ``timeframe`` minutes, as the service's intraday candles
  (``09:00`` holds 09:00:00-09:00:59); trial matches are not bars.
* A bar is final when the symbol's next trade falls in a later bucket, when the stream has
  moved past its session's end (any symbol's trade at or after the minute after the close of
  ``marketframe.calendar``'s regular stock session: the after-hours 14:30 trade, the next
  day's trial matches or first trades), or at ``flush()``. Trades from the minute after the
  close on (the after-hours session) make no bar (``sessions``).
* Bars are built a trades batch at a time, not a trade at a time: the batch is grouped by
  symbol and bar with numpy (``reduceat`` over the rows sorted by symbol), and the closed
  bars of all symbols are stepped together. A symbol whose trades in the batch are not all
  new and in order (a backfilled or repeated trade) takes the exact per-trade path.
* The forming bar is a peek: its row (``is_final=False``) is computed by a step that
  commits nothing (``State.advance(commit=False)``: what the step wrote is put back), in the
  same pass over each indicator's state as the batch's closes.
* A backfilled trade in a closed bar rewinds that symbol to the last checkpoint before the
  bar, replays its bars with the corrected one and emits them again with ``revised=True``.
* ``save(path)``/``LiveIndicators.load(path)``: the states, the day's closed bars, the forming
  bars and the trade serials seen, so a restarted process resumes equal to one that never
  stopped (trades already seen are skipped when they come again).

Layers: this module takes the trades (the per-trade path) and keeps the public face and
persistence; ``bars`` holds the forming bars and takes a batch with numpy;
``steps`` steps the closed bars' indicators (checkpoints, replay); ``rows`` holds
a bar's layout and builds the rows out.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from marketframe.exceptions import InvalidParams
from marketframe.indicators import stateful as sf

from .bars import _Bars
from .rows import _W, _add, _epoch_us, _Out, _row, _Rows
from .sessions import session_end
from .steps import _Steps

_VERSION = 1
_DAY_US = 86_400_000_000


_NUMBERS = (("price", np.float64), ("size", np.float64), ("serial", np.int64))


def _regular(times: np.ndarray) -> np.ndarray:
    """Which trades (epoch us) are in their day's regular session (before the minute after
    the calendar's close; the after-hours 14:30 trade makes no intraday candle). A batch
    within one day's session (the usual one) is told by its first and last times."""
    lo, hi = int(times.min()), int(times.max())
    if hi < int(session_end(np.array([lo]))[0]) and lo // _DAY_US == hi // _DAY_US:
        return np.ones(len(times), dtype=bool)
    return np.asarray(times < session_end(times))


class LiveIndicators:
    """Bars and indicators for ``symbols`` (see the module docstring). Its parts: the closed
    bars and the indicators' states (``steps``), the forming bars and the batch path
    (``bars``); this class takes the trades that path leaves (the exact path), and saves."""

    def __init__(
        self,
        symbols: Sequence[str],
        spec: Iterable[sf.IndicatorSpec | str],
        *,
        timeframe: int = 1,
        checkpoint_every: int = 30,
    ) -> None:
        self._steps = _Steps(symbols, spec, checkpoint_every=checkpoint_every)
        self._bars = _Bars(self._steps, timeframe=timeframe)
        self._out = _Out(self.symbols, self.columns)
        self.warm_bars: dict[str, int] = {s: 0 for s in self.symbols}

    # -- the parts' state, read-only

    @property
    def symbols(self) -> list[str]:
        return self._steps.symbols

    @property
    def index(self) -> dict[str, int]:
        return self._steps.index

    @property
    def specs(self) -> list[sf.IndicatorSpec]:
        return self._steps.specs

    @property
    def columns(self) -> list[str]:
        return self._steps.columns

    @property
    def checkpoint_every(self) -> int:
        return self._steps.checkpoint_every

    @property
    def states(self) -> list[sf.State]:
        return self._steps.states

    @property
    def bars(self) -> dict[str, list[list[float]]]:
        """The closed bars per symbol: ``[time_us, o, h, l, c, v, first, last serial]``."""
        return self._steps.bars

    @property
    def seen(self) -> dict[str, set[int]]:
        return self._steps.seen

    @property
    def checkpoints(self) -> list[tuple[list[sf.State], np.ndarray]]:
        return self._steps.checkpoints

    @property
    def timeframe(self) -> int:
        return self._bars.timeframe

    @property
    def width_us(self) -> int:
        return self._bars.width_us

    # -- history

    def warm(self, candles: pd.DataFrame) -> None:
        """Warm up from history: a long frame of candles (``symbol``, ``date``, ``open``,
        ``high``, ``low``, ``close``, ``volume``), oldest first per symbol; the bars count
        as closed (a later trade in one of them is a revision)."""
        self._steps._fold()
        per: dict[str, list[list[float]]] = {}
        for sym, g in candles.groupby("symbol", sort=False, observed=True):
            if sym not in self.index:
                continue
            times = _epoch_us(g["date"]).astype(np.float64)
            vals = g[["open", "high", "low", "close", "volume"]].to_numpy(dtype=np.float64)
            serials = np.full((len(times), 2), np.nan)  # history: its trades' serials unknown
            per[str(sym)] = np.column_stack([times, vals, serials]).tolist()
        # bar t of every symbol in one step: symbols advance together, not one by one
        if per:
            longest = max(len(v) for v in per.values())
            panel = np.full((longest, len(self.symbols), _W), np.nan)
            lengths = np.zeros(len(self.symbols), dtype=np.intp)
            for sym, rows in per.items():
                j = self.index[sym]
                panel[: len(rows), j] = rows
                lengths[j] = len(rows)
                self.bars[sym].extend(rows)
            if bool((lengths == longest).all()):  # the usual case: one pass over the panel
                self._steps._warm_step(list(range(len(self.symbols))), panel)
            else:
                for t in range(longest):
                    cols = np.flatnonzero(lengths > t).tolist()
                    self._steps._warm_step(cols, panel[t : t + 1, cols])
            self._steps._closes += int(lengths.sum())
        for sym in per:
            self.warm_bars[sym] = len(self.bars[sym])
            self._steps._last[self.index[sym]] = self.bars[sym][-1][0]
            self._steps._nbars[self.index[sym]] = len(self.bars[sym])
        self._steps.checkpoints.clear()
        self._steps._checkpoint()

    # -- trades

    def feed(self, trades: pd.DataFrame, *, peek: bool = True) -> pd.DataFrame:
        """Take a frame of trades (``symbol``, ``time``, ``price``, ``size``, ``serial``,
        optional ``is_trial``/``backfilled``); return the rows it produced: closed bars,
        revisions, and (``peek``) one forming-bar row per symbol it touched."""
        out: list[_Rows] = []
        if len(trades):
            df = trades
            times = _epoch_us(df["time"])
            codes = self._bars._codes(df["symbol"])
            keep = _regular(times) & (codes >= 0)
            if "is_trial" in df:
                keep &= ~df["is_trial"].to_numpy(dtype=bool)
            every = bool(keep.all())
            cols = [df[k].to_numpy(dtype=t) for k, t in _NUMBERS]
            price, size, serial = cols if every else [x[keep] for x in cols]
            clock = times
            if not every:
                codes, times = codes[keep], times[keep]
            now = int(clock.max())  # every trade counts for the clock: after-hours, trials
            touched, late = self._bars._batch(codes, times, price, size, serial)
            for trade in late:
                self._trade(*trade, out)
            self._bars._close_ended(now)
            forming = None
            if peek and len(touched):
                forming = touched[~np.isnan(self._bars._form[touched, 0])]
            if forming is not None and len(forming):
                self._steps._flush_pending(out, (forming, self._bars._form[forming]))
            else:
                self._steps._flush_pending(out)
        return self._out.frame(out)

    def _trade(
        self, sym: str, t_us: int, price: float, size: float, serial: float, out: list[Any]
    ) -> None:
        start = float(t_us - t_us % self.width_us)
        self._steps._fold()
        bars = self.bars[sym]
        warm = self.warm_bars[sym]
        if warm and start <= bars[warm - 1][0]:
            return  # the history (warm-up) already holds this bar
        col = self.index[sym]
        cur = self._bars._get_forming(col)
        if cur is not None and start > cur[0]:
            self._bars._set_forming(col, None)
            self._steps._close(sym, cur, out)
            cur = None
        if cur is None and (not bars or start > bars[-1][0]):
            self._bars._set_forming(col, [start, price, price, price, price, size, serial, serial])
            return
        if cur is not None and start == cur[0]:
            _add(cur, price, size, serial)
            self._bars._set_forming(col, cur)
            return
        # a trade in a closed bar: a backfilled (late) trade; correct it and replay
        self._steps._flush_pending(out)  # the closes before it are stepped first
        j = next((i for i in range(len(bars) - 1, -1, -1) if bars[i][0] <= start), None)
        if j is None or bars[j][0] != start:
            new = [start, price, price, price, price, size, serial, serial]
            bars.insert(0 if j is None else j + 1, new)
            j = 0 if j is None else j + 1
            self._steps._nbars[col] += 1
        else:
            _add(bars[j], price, size, serial)
        self._steps._last[col] = bars[-1][0]
        self._steps._replay(sym, j, out)

    def peek(self, sym: str) -> dict[str, Any] | None:
        """The forming bar's row (``is_final=False``); the state is not changed."""
        cur = self._bars._get_forming(self.index[sym])
        if cur is None:
            return None
        (block,) = self._steps._step([([self.index[sym]], np.array([cur]), False)])
        return _row(self.specs, sym, block, 0, final=False)

    def flush(self) -> pd.DataFrame:
        """Close every forming bar (the session ended): their final rows."""
        out: list[_Rows] = []
        for sym in self.symbols:
            cur = self._bars._get_forming(self.index[sym])
            if cur is not None:
                self._bars._set_forming(self.index[sym], None)
                self._steps._close(sym, cur, out)
        self._steps._flush_pending(out)
        return self._out.frame(out)

    # -- persistence

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write everything needed to resume to ``path`` (atomically: a temporary file
        renamed over it). An ``.npz`` of arrays with a JSON header; no pickle."""
        self._steps._flush_pending(None)
        self._steps._fold()
        meta = {
            "version": _VERSION,
            "symbols": self.symbols,
            "timeframe": self.timeframe,
            "checkpoint_every": self.checkpoint_every,
            "specs": [sp.to_json() for sp in self.specs],
            "forming": {s: self._bars._get_forming(i) for i, s in enumerate(self.symbols)},
            "warm_bars": self.warm_bars,
            "closes": self._steps._closes,
        }
        arrays: dict[str, np.ndarray] = {
            "__meta__": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        }
        for k, st in enumerate(self.states):
            arrays[f"state_{k}"] = np.frombuffer(st.to_bytes(), dtype=np.uint8)
        for i, s in enumerate(self.symbols):
            arrays[f"bars_{i}"] = np.array(self.bars[s], dtype=np.float64).reshape(-1, _W)
            arrays[f"seen_{i}"] = np.array(sorted(self.seen[s]), dtype=np.int64)
        target = Path(path)
        tmp = target.with_name(target.name + ".tmp")
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # type: ignore[arg-type]
        tmp.write_bytes(buf.getvalue())
        os.replace(tmp, target)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LiveIndicators:
        """The engine ``save`` wrote."""
        with np.load(Path(path), allow_pickle=False) as npz:
            meta = json.loads(npz["__meta__"].tobytes().decode())
            if meta.get("version") != _VERSION:
                raise InvalidParams(
                    "LiveIndicators.load",
                    "path",
                    f"({path}) is not a version-{_VERSION} live-indicator checkpoint",
                    "a file LiveIndicators.save wrote",
                )
            specs = [sf.IndicatorSpec.from_json(j) for j in meta["specs"]]
            self = cls(
                meta["symbols"],
                specs,
                timeframe=meta["timeframe"],
                checkpoint_every=meta["checkpoint_every"],
            )
            self._steps.states = [
                sf.State.from_bytes(npz[f"state_{k}"].tobytes()) for k in range(len(specs))
            ]
            for i, s in enumerate(self.symbols):
                b = npz[f"bars_{i}"]
                if b.shape[1] < _W:  # written before bars kept their serials
                    b = np.hstack([b, np.full((len(b), _W - b.shape[1]), np.nan)])
                self.bars[s] = b.tolist()
                self.seen[s] = set(npz[f"seen_{i}"].tolist())
        for i, s in enumerate(self.symbols):
            f = meta["forming"].get(s)
            self._bars._set_forming(i, f if f is None else f + [np.nan] * (_W - len(f)))
            self._steps._nbars[i] = len(self.bars[s])
            if self.bars[s]:
                self._steps._last[i] = self.bars[s][-1][0]
            if self.seen[s]:
                self._bars._maxser[i] = max(self.seen[s])
        self.warm_bars = meta["warm_bars"]
        self._steps._closes = meta["closes"]
        self._steps.checkpoints.clear()
        self._steps._checkpoint()
        return self
