"""The live engine's closed bars and the indicator states stepped over them (``engine`` holds
them beside the forming bars of ``bars``, and adds the trades and persistence).

A closed bar is queued (``_close``) and stepped with the others by ``_flush_pending``, a round
of symbols at a time (one vectorised step per indicator per round). Every
``checkpoint_every`` rounds the states are copied, so a revised bar rewinds its symbol to the
last checkpoint before it and replays from there (``_replay``).

What is kept is bounded by the session: the closed bars since the session began (a
revision reaches no further back; the session's first checkpoint is kept beside the last
few) and the serials of their trades. Once the stream has a trade of a later day (or at
``flush``) the day's bars are *sealed* (``_trim``): dropped, with their serials, and a
trade that falls in one later is dropped, as a trade in the warm-up history is. So memory
follows the symbols and one session's bars, not the sessions seen; a backfill after the
close (before the next day's first trade) still revises the day.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from marketframe.indicators import stateful as sf

from .rows import _BASE, _HEAD, _W, _chunk, _Rows
from .sessions import day_end

#: the checkpoints kept: the session's first, and the last ``KEPT - 1``
KEPT = 8


def _fields(spec: sf.IndicatorSpec) -> tuple[int, ...]:
    """Where the indicator's inputs (its row's) are in a bar: time, open, high, low, close,
    volume are 0..5 (KDJ: 2, 3, 4; the others: 4)."""
    return tuple(_BASE.index(f) - 1 for f in spec.inputs)


class _Steps:
    """The states, the closed bars and serials seen per symbol, the checkpoints."""

    def __init__(
        self,
        symbols: Sequence[str],
        specs: list[sf.IndicatorSpec],
        *,
        checkpoint_every: int,
    ) -> None:
        self.symbols = list(symbols)
        self.index = {s: i for i, s in enumerate(self.symbols)}
        self.specs = specs
        self.checkpoint_every = checkpoint_every
        n = len(self.symbols)
        self.states = [sf.State.new(sp, n) for sp in self.specs]
        # per symbol: closed bars not sealed [time_us, o, h, l, c, v, first, last serial]
        # (``_base``: the index of the first among all the symbol's bars), serials seen in
        # them and in the forming bar; the start of the last sealed bar, and the highest
        # serial forgotten with it
        self._base = np.zeros(len(self.symbols), dtype=np.int64)
        self._sealed = np.full(len(self.symbols), -np.inf)
        self._forgot = np.full(len(self.symbols), -np.inf)
        self.bars: dict[str, list[list[float]]] = {s: [] for s in self.symbols}
        self.seen: dict[str, set[int]] = {s: set() for s in self.symbols}
        self._outputs = sum(len(sp.names) for sp in self.specs)
        # per indicator: the fields of a bar it takes; its outputs
        self._layout = [(_fields(sp), len(sp.names)) for sp in self.specs]
        # per symbol, as an array (the batch path reads it for every symbol at once): the last
        # closed bar's time
        self._last = np.full(n, -np.inf)
        # checkpoints: (state copies, closed bars per symbol at that point), one every
        # ``checkpoint_every`` rounds of closes (a round: the closes stepped together)
        self.checkpoints: list[tuple[list[sf.State], np.ndarray]] = []
        self._nbars = np.zeros(n, dtype=np.int64)
        self._closes = 0
        self._rounds = 0
        # the batch path logs closed bars and serials as arrays; ``_fold`` moves them into
        # ``bars`` and ``seen`` when something reads those (a revision, save)
        self._bars_log: list[tuple[np.ndarray, np.ndarray]] = []
        self._seen_log: list[tuple[np.ndarray, np.ndarray]] = []
        # closed bars not yet stepped: chunks of (symbol indices, bars, emit); stepped
        # together, a round at a time (round r: the r-th pending close of each symbol),
        # before anything reads state
        self._pending: list[tuple[np.ndarray, np.ndarray, bool]] = []
        self._ended = False  # a session ended: seal its bars once they are stepped
        self._open_end = np.inf  # the end of the day of the first bar not sealed
        self._checkpoint()

    def _checkpoint(self) -> None:
        self.checkpoints.append(([s.copy() for s in self.states], self._nbars.copy()))
        if len(self.checkpoints) > KEPT:
            del self.checkpoints[1 : 1 - KEPT]  # the session's first stays
        self._trim()

    def _anchor(self) -> None:
        """The session ended: its bars sealed, a checkpoint the next session's first."""
        self._ended, self._open_end = False, np.inf
        self.checkpoints.clear()
        self._checkpoint()

    def _trim(self) -> None:
        """Seal the bars before the first checkpoint (no revision can rewind past it):
        dropped, with the serials of their trades. The bars and serials the batch path
        logged are trimmed as arrays, not folded (``_fold``) into lists and sets first."""
        oldest = np.min([nb for _, nb in self.checkpoints], axis=0)
        drop = oldest - self._base  # per symbol: the bars to drop, folded ones first
        if not bool((drop > 0).any()):
            return
        for col in np.flatnonzero((drop > 0) & self._folded()).tolist():
            sym = self.symbols[col]
            k = min(int(drop[col]), len(self.bars[sym]))
            self._seal(col, np.array(self.bars[sym][:k], dtype=np.float64).reshape(-1, _W))
            del self.bars[sym][:k]
            drop[col] -= k
            self._base[col] += k
        if self._bars_log and bool((drop > 0).any()):
            codes = np.concatenate([c for c, _ in self._bars_log])
            vals = np.concatenate([v for _, v in self._bars_log])
            # each entry's rank among its symbol's logged bars (they are in time order)
            order = np.argsort(codes, kind="stable")
            rank = np.empty(len(codes), dtype=np.int64)
            sc = codes[order]
            starts = np.flatnonzero(np.append(True, sc[1:] != sc[:-1]))
            run = np.diff(np.append(starts, len(sc)))
            rank[order] = np.arange(len(sc)) - np.repeat(starts, run)
            gone = rank < drop[codes]
            if gone.any():
                g, gv = codes[gone], vals[gone]
                np.maximum.at(self._sealed, g, gv[:, 0])
                np.fmax.at(self._forgot, g, gv[:, 7])
                np.add.at(self._base, g, 1)
                self._bars_log[:] = [(codes[~gone], vals[~gone])] if not gone.all() else []
        if self._seen_log:
            codes = np.concatenate([c for c, _ in self._seen_log])
            sers = np.concatenate([v for _, v in self._seen_log])
            keep = sers > self._forgot[codes]
            self._seen_log[:] = [(codes[keep], sers[keep])] if keep.any() else []
        for col in np.flatnonzero(oldest > 0).tolist():
            seen, floor = self.seen[self.symbols[col]], self._forgot[col]
            if seen and min(seen) <= floor:
                self.seen[self.symbols[col]] = {s for s in seen if s > floor}

    def kept(self) -> tuple[int, int]:
        """How many closed bars and serials are kept (folded or logged)."""
        serials = sum(len(s) for s in self.seen.values()) + sum(len(c) for c, _ in self._seen_log)
        return int((self._nbars - self._base).sum()), serials

    def _folded(self) -> np.ndarray:
        """Which symbols have folded closed bars (in ``bars``)."""
        return np.array([bool(self.bars[s]) for s in self.symbols], dtype=bool)

    def _seal(self, col: int, gone: np.ndarray) -> None:
        """Bars ``gone`` of symbol ``col`` (oldest first) sealed: the last one's start and
        the highest serial among them remembered."""
        if not len(gone):
            return
        self._sealed[col] = max(self._sealed[col], gone[-1, 0])
        last = gone[:, 7][~np.isnan(gone[:, 7])]
        if len(last):
            self._forgot[col] = max(self._forgot[col], float(last.max()))

    def seal(self) -> None:
        """Seal every closed bar (a loaded or extended engine: no revision rewinds past
        where it started)."""
        self._fold()
        for col, sym in enumerate(self.symbols):
            self._seal(col, np.array(self.bars[sym], dtype=np.float64).reshape(-1, _W))
            self.bars[sym] = []
            floor = self._forgot[col]
            self.seen[sym] = {s for s in self.seen[sym] if s > floor}
        self._base = self._nbars.copy()
        self._sealed = np.maximum(self._sealed, self._last)
        self._anchor()

    def _fold(self, *, bars: bool = True) -> None:
        """The logged closed bars (``bars``) and serials into ``bars`` and ``seen``, in
        order."""
        for log, add in ((self._bars_log, False), (self._seen_log, True)):
            if not log or not (add or bars):
                continue
            codes = np.concatenate([c for c, _ in log])
            vals = np.concatenate([v for _, v in log])
            log.clear()
            if not len(codes):
                continue
            order = np.argsort(codes, kind="stable")
            codes, vals = codes[order], vals[order]
            cut = np.flatnonzero(codes[1:] != codes[:-1]) + 1
            heads = np.append(0, cut)
            for col, part in zip(codes[heads].tolist(), np.split(vals, cut), strict=True):
                sym = self.symbols[col]
                if add:
                    self.seen[sym].update(part.tolist())
                else:
                    self.bars[sym].extend(part.tolist())

    @property
    def columns(self) -> list[str]:
        return [name for sp in self.specs for name in sp.names]

    def _inputs(self, rows: np.ndarray, spec: sf.IndicatorSpec) -> Any:
        # rows: (bars, symbols, _W) of time, o, h, l, c, v, first and last serial
        xs = tuple(rows[..., j] for j in _fields(spec))
        return xs if len(xs) > 1 else xs[0]

    def _warm_step(self, cols: Any, rows: np.ndarray) -> None:
        """Step ``rows`` (bars, len(cols), _W) for symbols ``cols``, committed."""
        whole = len(cols) == len(self.symbols) and bool(np.all(np.diff(cols) > 0))
        for state in self.states:
            if whole:  # every symbol, in order: step the state itself
                sf.apply(self._inputs(rows, state.spec), state.spec, state, inplace=True)
                continue
            sub = _take(state, cols)
            sf.apply(self._inputs(rows, state.spec), state.spec, sub, inplace=True)
            _put(state, cols, sub)

    def _step(self, passes: list[tuple[Any, np.ndarray, bool]]) -> list[np.ndarray]:
        """Passes of one bar per symbol, ``(cols, bars (len(cols), _W), commit)``, in order,
        through every indicator; each pass's rows as a block (``_live_rows._Rows``), the
        outputs written into it by the states' in-place step. The blocks are slices of one
        array, side by side. Every symbol in order: the states themselves are stepped (a
        peek puts back what the step wrote); a subset: a sub-state of those symbols. Each
        indicator takes all the passes before the next one does (the indicators do not
        depend on each other): its state is read from memory once, not once per pass."""
        ends = np.cumsum([len(cols) for cols, _, _ in passes])
        whole = np.empty((_HEAD + self._outputs, int(ends[-1])))
        blocks, wholes = [], []
        for (cols, bars, _), hi in zip(passes, ends, strict=True):
            block = whole[:, hi - len(cols) : hi]
            block[:_HEAD] = bars[:, :_HEAD].T
            blocks.append(block)
            n = len(cols)
            wholes.append(n == len(self.symbols) and bool(np.all(np.diff(cols) > 0)))
        at = _HEAD
        for state, (fields, k) in zip(self.states, self._layout, strict=True):
            for (cols, _, commit), block, every in zip(passes, blocks, wholes, strict=True):
                xs = tuple(block[j] for j in fields)
                outs = tuple(block[at : at + k])
                if every:
                    state.advance(xs, outs, commit=commit)
                    continue
                sub = _take(state, cols)
                sub.advance(xs, outs)
                if commit:
                    _put(state, cols, sub)
            at += k
        return blocks

    def _close(self, sym: str, bar: list[float], emit: list[Any] | None) -> None:
        """A bar closed: kept now, stepped with the others by :meth:`_flush_pending`."""
        row = np.array([bar], dtype=np.float64)
        self._record_closes(np.array([self.index[sym]]), row, emit=emit is not None)

    def _record_closes(
        self, cols: np.ndarray, bars: np.ndarray, *, emit: bool = True, unique: bool = True
    ) -> None:
        """Closed ``bars`` of the symbols at ``cols`` (in each symbol's time order): logged for
        checkpoints, counted, the symbols' last bar times moved, and queued to be stepped.
        ``unique``: at most one bar per symbol (plain fancy indexing; else ``ufunc.at``)."""
        self._bars_log.append((cols, bars))
        if self._open_end == np.inf and len(bars):
            first = np.array([int(bars[:, 0].min())])
            self._open_end = float(day_end(first)[0])
        if unique:
            self._nbars[cols] += 1
            self._last[cols] = np.maximum(self._last[cols], bars[:, 0])
        else:
            self._nbars += np.bincount(cols, minlength=len(self._nbars))
            np.maximum.at(self._last, cols, bars[:, 0])
        self._pending.append((cols, bars, emit))

    def _flush_pending(
        self, out: list[Any] | None, peeks: tuple[np.ndarray, np.ndarray] | None = None
    ) -> None:
        """Step every pending close, a round of symbols at a time (one vectorised step
        per indicator per round); emit their final rows into ``out``. ``peeks``: then the
        forming bars ``(cols, bars)``, a step that commits nothing, their rows emitted too."""
        if not self._pending:
            if peeks is not None and out is not None:
                (block,) = self._step([(*peeks, False)])
                out.append(_chunk(peeks[0], block, final=False, revised=False))
            if self._ended:
                self._anchor()
            return
        before = self._rounds
        chunks, self._pending = self._pending, []
        if len(chunks) == 1:
            codes, rows, flag = chunks[0]
            emit = np.full(len(codes), flag)
        else:
            codes = np.concatenate([c[0] for c in chunks])
            rows = np.concatenate([c[1] for c in chunks])
            emit = np.concatenate([np.full(len(c[0]), c[2]) for c in chunks])
        rounds: list[Any] = [None]  # one close per symbol, in symbol order: one round
        if len(codes) > 1 and not bool((codes[1:] > codes[:-1]).all()):
            order = np.argsort(codes, kind="stable")  # by symbol, each one's closes in order
            codes, rows, emit = codes[order], rows[order], emit[order]
            new = np.ones(len(codes), dtype=bool)
            new[1:] = codes[1:] != codes[:-1]
            first = np.flatnonzero(new)
            rank = np.arange(len(codes)) - np.repeat(first, np.diff(np.append(first, len(codes))))
            rounds = [np.flatnonzero(rank == r) for r in range(int(rank.max()) + 1)]
        passes, emits = [], []
        for sel in rounds:
            cols, now, em = (
                (codes, rows, emit) if sel is None else (codes[sel], rows[sel], emit[sel])
            )
            passes.append((cols, now, True))
            emits.append(em)
            self._closes += len(cols)
            self._rounds += 1
        if peeks is not None:
            passes.append((*peeks, False))
        blocks = self._step(passes)
        if out is not None and all(bool(em.all()) for em in emits):  # one chunk of them all
            cols = [c for c, _, _ in passes]
            final = np.repeat([commit for _, _, commit in passes], [len(c) for c in cols])
            whole = blocks[0] if len(blocks) == 1 else blocks[0].base  # their array
            assert isinstance(whole, np.ndarray)
            out.append(_Rows(np.concatenate(cols), whole, final, False))
        elif out is not None:
            for (cols, _, commit), block, em in zip(passes, blocks, [*emits, None], strict=False):
                which = None if em is None else np.flatnonzero(em)
                if which is None or len(which):
                    out.append(_chunk(cols, block, which, final=commit, revised=False))
        if self._ended:
            self._anchor()
        elif before // self.checkpoint_every != self._rounds // self.checkpoint_every:
            self._checkpoint()

    def _replay(self, sym: str, j: int, out: list[Any]) -> None:
        """Rewind ``sym`` to the last checkpoint before its bar ``j``; replay; emit revised."""
        col = self.index[sym]
        cp = next(
            (c for c in reversed(self.checkpoints) if c[1][col] <= j),
            None,
        )
        if cp is None:  # older than every checkpoint: from the start of the day's bars
            base = [sf.State.new(s.spec, len(self.symbols)) for s in self.states]
            done = 0
        else:
            base, done = cp[0], int(cp[1][col])
        rows = np.array(self.bars[sym][done - int(self._base[col]) :])[:, None, :]
        subs = []
        parts = [rows[:, 0, :_HEAD].T]
        for k, st in enumerate(self.states):
            sub = _take(base[k], [col])
            res, sub = sf.apply(self._inputs(rows, st.spec), st.spec, sub, inplace=True)
            subs.append(sub)
            parts += [p[:, 0] for p in (res if isinstance(res, tuple) else (res,))]
        for st, sub in zip(self.states, subs, strict=True):
            _put(st, [col], sub)
        block = np.vstack(parts)[:, j - done :]
        out.append(_Rows(np.full(block.shape[1], col, dtype=np.intp), block, True, True))
        # later checkpoints hold the old bars for this symbol: start again from here
        self.checkpoints = [c for c in self.checkpoints if c[1][col] <= j]
        self._checkpoint()


def _take(state: sf.State, cols: list[int]) -> sf.State:
    """The state of symbols ``cols`` alone (rings put oldest first: its clock restarts)."""
    meta, arrays = state.to_parts()
    sub = {k: np.ascontiguousarray(v[..., cols]) for k, v in arrays.items()}
    return sf.State.from_parts({**meta, "symbols": len(cols), "bars": 0}, sub)


def _put(state: sf.State, cols: list[int], sub: sf.State) -> None:
    """Write ``sub`` (from ``_take``, stepped) back into symbols ``cols`` of ``state``."""
    _, arrays = sub.to_parts()  # oldest first
    for name, a in arrays.items():
        target = state.arrays[name]
        if target.ndim == 2 and target.shape[0]:
            a = np.roll(a, state.bars % target.shape[0], axis=0)  # into state's ring clock
        target[..., cols] = a
