"""The live engine's batch path (``engine``): a trades batch into bars with numpy.

The symbols whose trades in the batch are all new and in order are grouped by symbol and
bar (``reduceat`` over the trades sorted by symbol); their closed bars are queued for
``steps`` to step and their forming bars held as one array. The others take the
exact per-trade path (``LiveIndicators._trade``), in the batch's order. The common shapes
cost no more than they need: a batch already in symbol order is not sorted, a bar of one
trade is not reduced, and a batch with one bar per symbol (the usual one between two
minutes) skips the bookkeeping of symbols with several.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .rows import _W
from .sessions import ended
from .steps import _Steps


class _Bars:
    """The forming bars and the highest serial seen, per symbol, as arrays; the batch path.
    Closed bars go to ``steps``, the engine's closed bars and indicator states."""

    def __init__(self, steps: _Steps, *, timeframe: int) -> None:
        self._steps = steps
        self.symbols = steps.symbols
        self.width_us = int(timeframe) * 60_000_000
        self.timeframe = int(timeframe)
        n = len(self.symbols)
        self._lookup = pd.Index(self.symbols)
        # the forming bar (time NaN: none), the highest serial seen
        self._form = np.full((n, _W), np.nan)
        self._maxser = np.full(n, -1, dtype=np.int64)

    def _get_forming(self, col: int) -> list[float] | None:
        row = self._form[col]
        return None if np.isnan(row[0]) else row.tolist()

    def _set_forming(self, col: int, bar: list[float] | None) -> None:
        self._form[col] = np.nan if bar is None else bar

    def _close_ended(self, now_us: int) -> None:
        """Close the forming bars whose session is over at ``now_us``: no trade can come
        into them any more (stepped with the batch's other closes). At a later day's
        trade, the day's bars are sealed once stepped (``steps``)."""
        if now_us >= self._steps._open_end:  # a trade of a later day: seal the day's bars
            self._steps._ended = True
        starts = self._form[:, 0]
        first = np.fmin.reduce(starts)  # NaN only when no bar is forming
        if np.isnan(first) or not ended(np.array([int(first)]), now_us)[0]:
            return  # the earliest forming bar's session goes on: every other one too
        held = np.flatnonzero(~np.isnan(starts))
        done_c = held[ended(starts[held].astype(np.int64), now_us)]
        if not len(done_c):
            return
        done = self._form[done_c].copy()
        self._form[done_c] = np.nan
        self._steps._record_closes(done_c, done)

    def _codes(self, col: pd.Series[Any]) -> np.ndarray:
        """Symbol indices of a column of symbols (-1: not one of ours)."""
        dtype = col.dtype
        if isinstance(dtype, pd.CategoricalDtype):  # each category looked up once
            cats = self._lookup.get_indexer(dtype.categories.astype(str))
            codes = col.cat.codes.to_numpy()
            return np.where(codes >= 0, cats[codes], -1)
        if not isinstance(dtype, pd.StringDtype):
            col = col.astype(str)
        return np.asarray(self._lookup.get_indexer(pd.Index(col, copy=False)))

    def _batch(
        self,
        codes: np.ndarray,
        times: np.ndarray,
        price: np.ndarray,
        size: np.ndarray,
        serial: np.ndarray,
    ) -> tuple[np.ndarray, list[tuple[str, int, float, float, float]]]:
        """Trades into bars: the symbols whose trades are all new and in order (serials
        above every one seen, bars not before the forming one) grouped with numpy. Returns
        the symbols touched (sorted indices) and the others' new trades, for the exact path
        (``LiveIndicators._trade``) in the batch's order: ``(symbol, time, price, size,
        serial)``."""
        n = len(codes)
        if not n:
            return np.empty(0, dtype=np.intp), []
        if n > 1 and not bool((codes[1:] >= codes[:-1]).all()):
            order = np.argsort(codes, kind="stable")
            c, t, p, v, ser = codes[order], times[order], price[order], size[order], serial[order]
        else:  # already by symbol, each one's trades in the batch's order
            c, t, p, v, ser = codes, times, price, size, serial
        start = t - t % self.width_us
        newsym = c[1:] != c[:-1]
        firsts = np.append(0, np.flatnonzero(newsym) + 1)
        syms: np.ndarray = c[firsts]
        # in order: serials rise, bars do not go back (the first against the held state)
        form_t = self._form[syms, 0]
        floor = np.where(np.isnan(form_t), self._steps._last[syms] + 1.0, form_t)
        ok = np.empty(n, dtype=bool)
        ok[1:] = (ser[1:] > ser[:-1]) & (start[1:] >= start[:-1])
        ok[firsts] = (ser[firsts] > self._maxser[syms]) & (start[firsts] >= floor)
        fast_sym = np.logical_and.reduceat(ok, firsts)
        if fast_sym.all():
            self._fast(c, start, p, v, ser)
            return syms, []
        if fast_sym.any():
            fast = np.repeat(fast_sym, np.diff(np.append(firsts, n)))
            self._fast(c[fast], start[fast], p[fast], v[fast], ser[fast])
        # the exact path, in the batch's order
        self._steps._fold()
        seen = self._steps.seen
        late: list[tuple[str, int, float, float, float]] = []
        slow = ~fast_sym[np.searchsorted(syms, codes)]
        for col, tu, pr, sz, sn in zip(
            codes[slow].tolist(),
            times[slow].tolist(),
            price[slow].tolist(),
            size[slow].tolist(),
            serial[slow].tolist(),
            strict=True,
        ):
            sym = self.symbols[col]
            if sn in seen[sym]:
                continue
            seen[sym].add(sn)
            self._maxser[col] = max(self._maxser[col], sn)
            late.append((sym, tu, pr, sz, float(sn)))
        return syms, late

    def _fast(
        self, c: np.ndarray, start: np.ndarray, p: np.ndarray, v: np.ndarray, ser: np.ndarray
    ) -> None:
        """New, in-order trades sorted by symbol: bars by ``reduceat``, closes queued."""
        k = len(c)
        newsym = c[1:] != c[:-1]
        seg = np.empty(k, dtype=bool)
        seg[0] = True
        np.logical_or(newsym, start[1:] != start[:-1], out=seg[1:])
        if seg.all():  # a trade per bar: nothing to reduce
            sc = c
            bars = np.empty((k, _W))
            bars[:, 0], bars[:, 5] = start, v
            bars[:, 1:5] = p[:, None]
            bars[:, 6:8] = ser[:, None]
        else:
            at = np.flatnonzero(seg)
            ends = np.append(at[1:], k) - 1
            sc = c[at]
            bars = np.empty((len(at), _W))
            bars[:, 0], bars[:, 1] = start[at], p[at]
            bars[:, 2] = np.maximum.reduceat(p, at)
            bars[:, 3] = np.minimum.reduceat(p, at)
            bars[:, 4], bars[:, 5] = p[ends], np.add.reduceat(v, at)
            bars[:, 6], bars[:, 7] = ser[at], ser[ends]
        sym_end = np.append(np.flatnonzero(newsym), k - 1)  # each symbol's last trade
        one = len(sc) == len(sym_end)  # one bar per symbol: its first and its last
        held = self._form[sc]
        has = ~np.isnan(held[:, 0])
        if one:
            first = last = None
            merge = has & (held[:, 0] == bars[:, 0])  # the batch continues the bar
        else:
            first = np.ones(len(sc), dtype=bool)
            first[1:] = sc[1:] != sc[:-1]
            last = np.ones(len(sc), dtype=bool)
            last[:-1] = first[1:]
            merge = first & has & (held[:, 0] == bars[:, 0])
        if merge.any():
            m, h = bars[merge], held[merge]
            m[:, 1], m[:, 6] = h[:, 1], h[:, 6]
            m[:, 2] = np.maximum(m[:, 2], h[:, 2])
            m[:, 3] = np.minimum(m[:, 3], h[:, 3])
            m[:, 5] += h[:, 5]
            bars[merge] = m
        closes_held = has & ~merge  # the forming bar closed by a later bar
        if last is None:
            done_c, done = sc[closes_held], held[closes_held]
        else:
            closes_held &= first
            done_c = np.concatenate([sc[closes_held], sc[~last]])
            done = np.concatenate([held[closes_held], bars[~last]])
        if len(done_c):
            # done_c: each symbol's held close (if any) first, then its segments in order;
            # without segments (``last is None``) a close per symbol at most
            self._steps._record_closes(done_c, done, unique=last is None)
        if last is None:
            self._form[sc] = bars
        else:
            self._form[sc[last]] = bars[last]
        self._maxser[c[sym_end]] = ser[sym_end]
        self._steps._seen_log.append((c, ser))
