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
* What the engine keeps is bounded (``steps``): the session's closed bars (a revision
  reaches back to the session's start) and their trades' serials; at a later day's first
  trade, or ``flush()``, they are sealed, and a trade in one is dropped as a trade in the
  warm-up history is.
* ``save(path)``/``LiveIndicators.load(path)``: the states, the forming bars and the serials
  of their trades, so a restarted process resumes equal to one that never stopped (trades
  already seen are skipped when they come again). Its size follows the symbols and specs,
  not the history: the bars closed before it was written are sealed in the loaded engine.
* Every argument, trade and checkpoint file is checked first (``checks``, shared).

Layers: this module takes the trades (the per-trade path) and keeps the public face and
persistence; ``bars`` holds the forming bars and takes a batch with numpy;
``steps`` steps the closed bars' indicators (checkpoints, replay); ``rows`` holds
a bar's layout and builds the rows out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from marketframe._checks import check_int
from marketframe.indicators import stateful as sf

from . import checks
from .bars import _Bars
from .rows import _W, _add, _epoch_us, _Out, _row, _Rows
from .sessions import session_end
from .steps import _put, _Steps, _take

_VERSION = 2
_DAY_US = 86_400_000_000


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
        spec: Iterable[sf.IndicatorSpec | str] | sf.IndicatorSpec | str,
        *,
        timeframe: int = 1,
        checkpoint_every: int = 30,
    ) -> None:
        where = "LiveIndicators"
        syms = checks.check_symbols(symbols, where)
        specs = checks.check_specs(spec, where)
        minutes = checks.check_timeframe(timeframe, where, text=False)
        check_int("checkpoint_every", checkpoint_every, 1, where)
        self._steps = _Steps(syms, specs, checkpoint_every=checkpoint_every)
        self._bars = _Bars(self._steps, timeframe=minutes)
        self._out = _Out(self.symbols, self.columns)

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
        """The closed bars per symbol a revision can still reach (older ones are sealed):
        ``[time_us, o, h, l, c, v, first, last serial]``."""
        self._steps._fold()
        return self._steps.bars

    @property
    def seen(self) -> dict[str, set[int]]:
        """The serials of the trades in the bars a revision can still reach, per symbol."""
        self._steps._fold()
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
            if bool((lengths == longest).all()):  # the usual case: one pass over the panel
                self._steps._warm_step(list(range(len(self.symbols))), panel)
            else:
                for t in range(longest):
                    cols = np.flatnonzero(lengths > t).tolist()
                    self._steps._warm_step(cols, panel[t : t + 1, cols])
            self._steps._closes += int(lengths.sum())
        for sym, rows in per.items():
            self._steps._last[self.index[sym]] = rows[-1][0]
            self._steps._nbars[self.index[sym]] += len(rows)
        self._steps.seal()  # the history is not revised: a trade in it is dropped

    # -- trades

    def feed(self, trades: pd.DataFrame, *, peek: bool = True) -> pd.DataFrame:
        """Take a frame of trades (``symbol``, ``time``, ``price``, ``size``, ``serial``,
        optional ``is_trial``/``backfilled``); return the rows it produced: closed bars,
        revisions, and (``peek``) one forming-bar row per symbol it touched. A frame with
        a missing column, a time that does not parse or is past tomorrow, a price not
        finite and above 0, a negative size or a serial that is not a whole number is
        refused whole (``InvalidParams``, ``MissingColumnsError``), nothing changed."""
        out: list[_Rows] = []
        times, *cols = checks.check_trades(trades)  # every row, before anything changes
        if len(times):
            df = trades
            codes = self._bars._codes(df["symbol"])
            keep = _regular(times) & (codes >= 0)
            if "is_trial" in df:
                keep &= ~df["is_trial"].to_numpy(dtype=bool)
            every = bool(keep.all())
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
        col = self.index[sym]
        if start <= self._steps._sealed[col]:
            return  # a sealed bar (history, or past the revision horizon): dropped
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
        self._steps._replay(sym, int(self._steps._base[col]) + j, out)

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
        self._steps._anchor()  # the session's bars sealed
        return self._out.frame(out)

    # -- persistence

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write what resuming needs to ``path``, atomically (a temporary file renamed over
        it): the indicators' states, the forming bars and the serials of their trades. Not
        the closed bars: the file's size follows the symbols, not the history, and a
        resumed engine does not revise a bar closed before it stopped. An ``.npz`` of
        arrays with a JSON header; no pickle."""
        checks.check_checkpoint(path, "LiveIndicators.save", "path")
        st = self._steps
        st._flush_pending(None)
        st._fold(bars=False)  # the closed bars are not saved: left as they are kept
        form = self._bars._form
        meta = {
            "version": _VERSION,
            "symbols": self.symbols,
            "timeframe": self.timeframe,
            "checkpoint_every": self.checkpoint_every,
            "specs": [sp.to_json() for sp in self.specs],
            "closes": st._closes,
        }
        codes, serials = [], []
        for i, s in enumerate(self.symbols):
            first = form[i, 6]
            if np.isnan(first) or not st.seen[s]:
                continue
            kept = np.fromiter(st.seen[s], dtype=np.int64, count=len(st.seen[s]))
            kept = np.sort(kept[kept >= first])
            codes.append(np.full(len(kept), i, dtype=np.int64))
            serials.append(kept)
        arrays: dict[str, np.ndarray] = {
            "__meta__": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
            "forming": form,
            "maxser": self._bars._maxser,
            "nbars": st._nbars,
            "sealed": np.maximum(st._sealed, st._last),
            "seen_codes": np.concatenate(codes) if codes else np.empty(0, np.int64),
            "seen_serials": np.concatenate(serials) if serials else np.empty(0, np.int64),
        }
        for k, state in enumerate(self.states):
            arrays[f"state_{k}"] = np.frombuffer(state.to_bytes(), dtype=np.uint8)
        checks.write_checkpoint(path, arrays)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> LiveIndicators:
        """The engine ``save`` wrote; a file that is missing, damaged or not one ``save``
        wrote is an :class:`~marketframe.exceptions.InvalidParams` naming it."""
        meta, arrays = checks.read_checkpoint(path, _VERSION)
        with checks.damaged(path):
            specs = [sf.IndicatorSpec.from_json(j) for j in meta["specs"]]
            self = cls(
                meta["symbols"],
                specs,
                timeframe=meta["timeframe"],
                checkpoint_every=meta["checkpoint_every"],
            )
            st, n = self._steps, len(self.symbols)
            st.states = [
                sf.State.from_bytes(arrays[f"state_{k}"].tobytes()) for k in range(len(specs))
            ]
            if any(x.symbols != n for x in st.states):
                checks.refuse(path, "its states do not match its symbols")
            self._bars._form[:] = arrays["forming"].reshape(n, _W)
            self._bars._maxser[:] = arrays["maxser"].reshape(n)
            st._nbars[:] = arrays["nbars"].reshape(n)
            st._last[:] = arrays["sealed"].reshape(n)
            st._closes = int(meta["closes"])
            codes, serials = arrays["seen_codes"], arrays["seen_serials"]
            for i in np.unique(codes).tolist():
                st.seen[self.symbols[i]] = set(serials[codes == i].tolist())
        st.seal()
        return self

    def fits(
        self,
        symbols: list[str],
        specs: list[sf.IndicatorSpec],
        timeframe: int,
        *,
        extend: bool,
        where: str,
        path: object,
    ) -> LiveIndicators:
        """This engine (loaded from ``path``) for a call: itself when the call's symbols,
        specs and timeframe are its own, extended to its new ones (``extend``), else
        refused (``checks.check_fits``)."""
        had = (self.symbols, self.specs, self.timeframe)
        checks.check_fits(path, where, had, (symbols, specs, timeframe), extend=extend)
        have = [sp.to_json() for sp in self.specs]
        new_syms = [s for s in symbols if s not in self.index]
        new_specs = [sp for sp in specs if sp.to_json() not in have]
        if not new_syms and not new_specs:
            return self
        return self._extended(self.symbols + new_syms, self.specs + new_specs)

    def _extended(self, symbols: list[str], specs: list[sf.IndicatorSpec]) -> LiveIndicators:
        """A new engine over more symbols and specs, carrying this one's states, forming
        bars and serials for what it had; its closed bars sealed."""
        self._steps._flush_pending(None)
        self._steps._fold()
        eng = LiveIndicators(symbols, specs, timeframe=self.timeframe)
        eng._steps.checkpoint_every = self.checkpoint_every
        old = list(range(len(self.symbols)))
        st, new = self._steps, eng._steps
        for k, state in enumerate(st.states):
            _put(new.states[k], old, _take(state, old))
        eng._bars._form[old] = self._bars._form
        eng._bars._maxser[old] = self._bars._maxser
        new._nbars[old], new._last[old] = st._nbars, np.maximum(st._last, st._sealed)
        new._closes = st._closes
        for s in self.symbols:
            new.seen[s] = set(st.seen[s])
            new.bars[s] = list(st.bars[s])
        new.seal()
        return eng
