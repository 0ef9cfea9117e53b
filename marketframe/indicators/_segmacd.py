"""MACD over many series laid end to end, exactly, in one blocked pass (no repair pass).

The fused MACD (``_fused``) computes a block of 16 bars as one product of the block's
inputs and the three states (fast EMA F, slow EMA S, signal G) entering it. Run over the
whole column, only those entering states are wrong where a symbol follows another: they
carry the previous symbol's. So they are computed per symbol first, and the one blocked
pass then writes every symbol's own values (nothing to subtract afterwards):

* each symbol's **head** (its bars up to the signal's seed, then up to the next block
  boundary) is computed by the panel kernel on a small panel of those heads, which also
  gives the three states at the head's last bar;
* the **block-end states** of each symbol's later blocks are one linear recursion per
  state, ``c[b] = a**16 c[b-1] + local[b]`` (``local``: a block's end state from a zero
  start, one thin product over the column), solved on a (blocks, symbols) panel from the
  head states, so nothing carries from one symbol into the next;
* the **whole column** is then one chunked pass of two products per block (as for one
  series) with those entering states; a block that straddles two symbols is right for the
  earlier one (causal) and the later one's bars in it are its head, written last.

The results equal the per-symbol kernel to rounding (about 1e-15 of the price level).
Very ragged lengths (a (blocks, symbols) panel mostly padding) are left to the caller.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from . import _fast as fast
from ._fused import FusedMacd
from ._linrec import BLOCK, Recursion, matmul_rows
from ._params import MacdParams
from ._registry import Outputs

Array = NDArray[np.float64]
CHUNK_BLOCKS = 4096  # blocks per chunk of the pass (64k bars: the buffer stays in cache)


def macd(
    x: Array,
    starts: NDArray[np.intp],
    lengths: NDArray[np.intp],
    params: MacdParams,
    kernel: Callable[..., Outputs],
) -> tuple[Array, Array, Array] | None:
    """Line, signal and histogram of each segment; None if the lengths are too ragged for
    a (blocks, symbols) panel (at most 4x the blocks, plus a little)."""
    fast_n, slow, signal, seed, fast_start = params
    slow_start, _, sig_start = fast.macd_starts(params)
    n = x.shape[0]
    first = -(-(starts + sig_start + 1) // BLOCK)  # each symbol's first body block
    last = (starts + lengths - 1) // BLOCK  # the block of its last bar
    nb = np.maximum(last - first + 1, 0) * (lengths > sig_start + 1)
    live = np.flatnonzero(nb)
    total = int(nb.sum())
    widest = int(nb.max()) if len(nb) else 0
    if widest * len(live) > 4 * total + 4096:
        return None
    # one allocation for the three outputs (fewer, larger page runs to fault in; the
    # accessor attaches the three together: columns over one buffer)
    buffer = np.empty((3, n))
    out = (buffer[0], buffer[1], buffer[2])
    if n == 0:
        return out
    kf, ks, kg = (2.0 / (p + 1) for p in (fast_n, slow, signal))
    fused = _fused(kf, ks, kg)
    head = np.where(nb > 0, BLOCK * first - starts, lengths)  # bars from the head panel
    rows = np.arange(int(head.max()))[:, None]
    cells = np.flatnonzero(rows < head[None, :])  # the (rows, symbols) head cells in use
    bars = (starts[None, :] + rows).reshape(-1)[cells]  # and their rows in the column
    panel = np.zeros((rows.shape[0], len(starts)))  # zeros past a symbol's end: causal
    np.put(panel, cells, x.take(bars))
    heads = kernel(panel)
    # a row per block: (F, S, G) entering it where it is a symbol's body block (elsewhere
    # finite values that only reach head bars, written below)
    if total:
        at = head[live] - 1  # each body's last head bar: the states entering its first block
        cols = np.arange(len(live))
        sub = np.ascontiguousarray(panel[:, live])
        states = np.stack(
            (
                fast.ema(sub, fast_n, seed, fast_start)[at, cols],
                fast.ema(sub, slow, seed, slow_start)[at, cols],
                heads[1][at, live],
            ),
            axis=1,
        )
        entering = _entering(x, fused, (kf, ks, kg), first[live], nb[live], states)
    else:  # no symbol is longer than its head
        entering = np.zeros((-(-n // BLOCK), 3))
    _run(x, fused, entering, out)
    for o, h in zip(out, heads, strict=True):
        np.put(o, bars, h.take(cells))
    return out


@functools.lru_cache(maxsize=8)
def _fused(kf: float, ks: float, kg: float) -> FusedMacd:
    """The fused weights for these coefficients (built once: a 19 x 16 Python loop)."""
    return FusedMacd(kf, ks, kg, *(Recursion(1.0 - k) for k in (kf, ks, kg)))


def _entering(
    x: Array,
    fused: FusedMacd,
    ks: tuple[float, float, float],
    first: NDArray[np.intp],
    nb: NDArray[np.intp],
    states: Array,
) -> Array:
    """A row per block of ``x`` (and one spare row at the end): the (F, S, G) states
    entering it where it is one of a symbol's body blocks (``nb[g]`` blocks from block
    ``first[g]``), solved along each symbol on a (blocks, symbols, 3) panel from
    ``states`` (symbols, 3), the states entering each first block; the other rows keep
    the block's end states from a zero start.

    Panel cells past a symbol's last block all read (zeros) from and write back to the
    spare row: one take and one put, no mask or index gathering."""
    n = x.shape[0]
    full = n // BLOCK
    blocks = -(-n // BLOCK)
    ends = np.empty((blocks + 1, 3))  # end states of each block from a zero start
    matmul_rows(x[: full * BLOCK].reshape(full, BLOCK), fused.from_inputs, out=ends[:full])
    if full < blocks:
        pad = np.zeros(BLOCK)
        pad[: n - full * BLOCK] = x[full * BLOCK :]
        ends[full] = pad @ fused.from_inputs
    ends[blocks] = 0.0
    steps = np.arange(int(nb.max()))[:, None]
    block = np.where(steps < nb[None, :], first[None, :] + steps, blocks)  # (blocks, symbols)
    # local end states, (blocks, symbols, 3); moved as 24-byte records (numpy's fancy
    # indexing of 3-wide rows is several times slower)
    panel = np.take(_records(ends), block).view(np.float64).reshape(block.shape + (3,))
    _along(panel, ks, fused, states)
    # back into ``ends`` (no new whole-column array: fresh pages cost more than the copy)
    np.put(_records(ends), block, _records(panel))
    return ends


def _records(a: Array) -> NDArray[np.void]:
    """A C-contiguous (..., 3) float array as (...) records of its rows (a view)."""
    return a.view(_ROW)[..., 0]


_ROW = np.dtype((np.void, 24))


def _along(panel: Array, ks: tuple[float, float, float], fused: FusedMacd, states: Array) -> None:
    """Replace the local end states of each symbol's blocks, ``panel[b, g]`` (F, S, G), by
    the states entering the blocks: the block ends obey ``c[b] = a**16 c[b-1] + local[b]``
    (G also driven by the F and S entering the block), from the head's ``states``. Step by
    step along the blocks, all symbols at once (one 3 x 3 product a step); long symbols
    (over ``_STEPS`` blocks) as a blocked recursion on the panel."""
    af, as_, ag = ((1.0 - k) ** BLOCK for k in ks)
    if panel.shape[0] <= _STEPS:
        # state @ step: F and S decay on their own, G decays and is driven by them
        step = np.array([[af, 0.0, fused.f_to_g], [0.0, as_, fused.s_to_g], [0.0, 0.0, ag]])
        state, nxt = states.copy(), np.empty_like(states)
        for row in panel:
            np.matmul(state, step, out=nxt)
            nxt += row
            row[...] = state
            state, nxt = nxt, state
        return
    for k, a in ((0, af), (1, as_)):
        _shifted(panel[:, :, k], a, states[:, k])
    panel[:, :, 2] += fused.f_to_g * panel[:, :, 0] + fused.s_to_g * panel[:, :, 1]
    _shifted(panel[:, :, 2], ag, states[:, 2])


_STEPS = 512  # blocks per symbol up to which the states are stepped rather than solved


def _shifted(p: Array, a: float, state: Array) -> None:
    """``p[b]`` (local block ends; a view) replaced by ``c[b-1]``, ``c[b] = a c[b-1] +
    p[b]``, ``c[-1] = state``."""
    rec = Recursion(a, (p.shape[1],))
    rec.carry = state.copy()
    ends = np.empty(p.shape)
    rec(np.ascontiguousarray(p), ends)
    p[0] = state
    p[1:] = ends[:-1]


def _run(x: Array, fused: FusedMacd, entering: Array, out: tuple[Array, ...]) -> None:
    """Line, signal and histogram of every block from its inputs and entering states
    (``entering``: a row per block), straight into ``out`` (chunk by chunk, in cache)."""
    n = x.shape[0]
    full = n // BLOCK
    w_line = np.vstack([fused.w_line[3:], fused.w_line[:3]])  # inputs first, then states
    w_sig = np.vstack([fused.w_signal[3:], fused.w_signal[:3]])
    u = np.empty((min(CHUNK_BLOCKS, max(full, 1)), BLOCK + 3))
    line, sig, hist = out
    for c0 in range(0, full, CHUNK_BLOCKS):
        m = min(CHUNK_BLOCKS, full - c0)
        span = slice(c0 * BLOCK, (c0 + m) * BLOCK)
        u[:m, :BLOCK] = x[span].reshape(m, BLOCK)
        u[:m, BLOCK:] = entering[c0 : c0 + m]
        matmul_rows(u[:m], w_line, out=line[span].reshape(m, BLOCK))
        matmul_rows(u[:m], w_sig, out=sig[span].reshape(m, BLOCK))
        np.subtract(line[span], sig[span], out=hist[span])
    rest = n - full * BLOCK
    if rest:  # the last, partial block: padded with zeros (causal: harmless)
        tail = np.zeros(BLOCK + 3)
        tail[:rest] = x[full * BLOCK :]
        tail[BLOCK:] = entering[full]
        ln, sg = tail @ w_line, tail @ w_sig
        line[full * BLOCK :] = ln[:rest]
        sig[full * BLOCK :] = sg[:rest]
        hist[full * BLOCK :] = ln[:rest] - sg[:rest]
