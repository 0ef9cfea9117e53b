"""The first-order linear recursion ``y[t] = a*y[t-1] + v[t]`` solved block-wise in numpy.

Every smoothed indicator here (EMA, Wilder's RSI averages, the recursive KDJ) is this
recursion. A per-element Python loop is far too slow and ``np.frompyfunc`` tricks are not
exact, so the series is cut into blocks of ``B`` bars:

* inside a block the solution from a zero start is a product with the lower-triangular
  matrix ``M[i, j] = a**(i-j)``;
* the value at the end of each block obeys the same recursion with coefficient ``a**B``
  over the block ends, which is solved by calling this function again (a tree of depth
  ``log_B(n)``);
* the carry from the previous block enters each block as one extra input column whose
  weights are ``a**(i+1)``, so the carry costs no extra pass over the data.

All weights lie in [0, 1] (``a**k`` underflowing to 0 is harmless), so the result is as
exact as the matrix product: about 1e-15 relative for positive inputs.

``restart`` builds on it the segment policy used by every kernel: a series is split at its
missing values, and each NaN-free run is smoothed as if it were a separate series.
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

BLOCK = 16
_TINY = 1e-150
_THREADED = 262_144  # OpenBLAS runs a product of m x n x k at least this many threaded
_ROWS = 512  # 512 x 17 x 16 stays under OpenBLAS's threading threshold


def matmul_rows(u: Array, w: Array, out: Array | None = None, rows: int = 0) -> Array:
    """``u @ w`` for a tall 2-D ``u``, as a stack of products of ``rows`` (``_ROWS``) rows.

    Small products keep the operands in cache and stay under OpenBLAS's threading
    threshold: for these thin products threads are slower, and erratic on a busy machine.
    A stack (one numpy call, one BLAS call per slice) avoids a Python loop over slices.
    """
    step = rows or _ROWS
    rows = u.shape[0]
    if out is None:
        out = np.empty((rows,) + w.shape[1:])
    whole = rows - rows % step
    if whole:
        stack = u[:whole].reshape((whole // step, step) + u.shape[1:])
        np.matmul(stack, w, out=out[:whole].reshape((whole // step, step) + w.shape[1:]))
    if whole < rows:
        np.matmul(u[whole:], w, out=out[whole:])
    return out


def matmul_cols(w: Array, u: Array, out: Array | None = None) -> Array:
    """``np.matmul(w, u)`` for panel operands, in slices of symbols (last axis) small
    enough that each product stays under OpenBLAS's threading threshold.

    The same reason as ``matmul_rows``: a (B x B+1) @ (B+1 x 2000) product handed to
    OpenBLAS whole runs threaded, measured 100x slower than in slices (a 64 x 64: from 64).
    """
    if out is None:
        out = np.empty(np.broadcast_shapes(w.shape[:-2], u.shape[:-2]) + (w.shape[-2], u.shape[-1]))
    step = max(1, _THREADED // max(1, w.shape[-2] * w.shape[-1]) - 1)
    for j in range(0, u.shape[-1], step):
        np.matmul(w, u[..., j : j + step], out=out[..., j : j + step])
    return out


def _lower(a: float, size: int) -> Array:
    i = np.arange(size)
    expo = i[:, None] - i[None, :]
    with np.errstate(under="ignore"):
        m = np.where(expo >= 0, a ** np.maximum(expo, 0).astype(np.float64), 0.0)
    return _flush(m)


def _powers(a: float, n: int) -> Array:
    """``a**1 .. a**n`` with the powers below ``_TINY`` as 0, as ``_flush(a ** arange)``
    gives them, to the bit. Only the powers down to ``_TINY`` are computed, once per factor
    (:func:`_prefix`): numpy's power takes a slow path for every result that underflows (0
    or subnormal), which made the carries of a year's partition (``(a**B)**k`` for
    thousands of ``k``, nearly all of them underflowing) a twelfth of compute's CPU."""
    head = _prefix(a)
    if head is None:
        with np.errstate(under="ignore"):
            return _flush(a ** np.arange(1, n + 1, dtype=np.float64))
    out = np.zeros(n)
    m = min(n, len(head))
    out[:m] = head[:m]
    return out


@functools.lru_cache(maxsize=256)
def _prefix(a: float) -> Array | None:
    """The powers of ``a`` that are not flushed (with 2 spare, flushed), read-only; None for
    a factor whose powers never fall below ``_TINY`` or take over a million steps to."""
    if not 0.0 < abs(a) < 1.0:
        return None if a != 0.0 else np.zeros(0)
    m = int(np.log(_TINY) / np.log(abs(a))) + 2  # |a|**k < _TINY for every k past m
    if m > 1 << 20:
        return None
    with np.errstate(under="ignore"):
        head = _flush(a ** np.arange(1, m + 1, dtype=np.float64))
    head.setflags(write=False)
    return head


def _flush(w: Array) -> Array:
    # Weights below 1e-150 change nothing at double precision, but subnormal weights (a**k
    # for large k, as in the deeper levels of the tree) make matrix products ~10x slower.
    w[w < _TINY] = 0.0
    return w


def linrec(v: Array, a: float, block: int = BLOCK) -> Array:
    """Solve ``y[t] = a*y[t-1] + v[t]`` with ``y[-1] = 0`` along axis 0 (1-D or 2-D ``v``)."""
    n = v.shape[0]
    if n <= block:
        m = _lower(a, n)
        return matmul_cols(m, v) if v.ndim == 2 else m @ v
    nb = -(-n // block)
    full = (nb - 1) * block
    rest = v.shape[1:]
    powers = _powers(a, block)  # a**(i+1)
    m = _lower(a, block)
    if v.ndim == 1:
        u = np.empty((nb, block + 1))
        u[:-1, 1:] = v[:full].reshape(nb - 1, block)
        tail = n - full
        u[-1, 1 : 1 + tail] = v[full:]
        u[-1, 1 + tail :] = 0.0
        ends = matmul_rows(u[:, 1:], m[-1])  # local value at each block end
        carry = linrec(ends, a**block, block)
        u[0, 0] = 0.0
        u[1:, 0] = carry[:-1]
        weights = np.empty((block + 1, block))
        weights[0] = powers
        weights[1:] = m.T
        return matmul_rows(u, weights).reshape(-1)[:n]
    u = np.empty((nb, block + 1) + rest)
    u[:-1, 1:] = v[:full].reshape((nb - 1, block) + rest)
    tail = n - full
    u[-1, 1 : 1 + tail] = v[full:]
    u[-1, 1 + tail :] = 0.0
    last = m[-1]  # a**(block-1-j)
    ends = matmul_cols(last[None, :], u[:, 1:])[:, 0]
    carry = linrec(ends, a**block, block)
    u[0, 0] = 0.0
    u[1:, 0] = carry[:-1]
    weights = np.empty((block, block + 1))
    weights[:, 0] = powers
    weights[:, 1:] = m
    return matmul_cols(weights, u).reshape((nb * block,) + rest)[:n]


def run_position(x: Array) -> NDArray[np.intp] | None:
    """Position of each bar inside its NaN-free run (-1 on NaN bars); None if there is no NaN."""
    nan = np.isnan(x)
    if not nan.any():
        return None
    t = np.arange(x.shape[0]).reshape((-1,) + (1,) * (x.ndim - 1))
    last_nan = np.maximum.accumulate(np.where(nan, t, -1), axis=0)
    pos = t - last_nan - 1
    pos[nan] = -1
    return pos


def restart(
    v: Array,
    seed: Array | None,
    pos: NDArray[np.intp] | None,
    start: int,
    a: float,
) -> Array:
    """Recursion restarted on every NaN-free run.

    ``v`` holds the per-bar input (``b*x``), finite on every bar where ``pos >= 0``; ``pos`` is
    ``run_position`` of the source series (None: one run starting at bar 0). In each run the
    recursion starts at run position ``start`` with value ``seed`` (``seed`` is read at that
    bar; None means the input ``v`` itself) and continues to the end of the run. Bars before
    ``start`` in a run and NaN bars are NaN.
    """
    n = v.shape[0]
    t = np.arange(n).reshape((-1,) + (1,) * (v.ndim - 1))
    if pos is None:
        w = np.zeros_like(v)
        if start < n:
            w[start + 1 :] = v[start + 1 :]
            w[start] = v[start] if seed is None else seed[start]
        y = linrec(w, a)
        y[: min(start, n)] = np.nan
        return y
    live = pos >= start
    reset = pos == start
    w = np.where(live, v, 0.0)
    if seed is not None:
        w[reset] = seed[reset]
    z = linrec(w, a)
    # z carries the tail of earlier runs into later ones; subtract it (superposition):
    # y[t] = z[t] - a**(t-r+1) * z[r-1], r = the last reset at or before t.
    r = np.maximum.accumulate(np.where(reset, t, -1), axis=0)
    prev = np.maximum(r - 1, 0)
    zprev = z[prev] if z.ndim == 1 else np.take_along_axis(z, prev, axis=0)
    with np.errstate(under="ignore", over="ignore"):
        decay = np.where(r >= 1, float(a) ** (t - r + 1).astype(np.float64), 0.0)
    out: Array = z - decay * zprev
    out[~live] = np.nan
    return out


@functools.lru_cache(maxsize=256)
def _weights(a: float, panel: bool) -> tuple[Array, Array, float, Array, Array, float]:
    """What a :class:`Recursion` of factor ``a`` multiplies by: the block weights (the
    powers of ``a`` and the lower-triangular matrix, laid out for a panel or a series), the
    last row, ``a**B``, and the block ends' 64 x 64 matrix, powers and ``a**(64 B)``. They
    depend on ``a`` alone and cost more than a short chunk's products (an appended day, a
    live step), so they are made once per factor and shared read-only."""
    b = BLOCK
    m = _lower(a, b)
    powers = _powers(a, b)
    with np.errstate(under="ignore"):
        big_a = a**b
    if panel:
        w = np.empty((b, b + 1))
        w[:, 0] = powers
        w[:, 1:] = m
    else:
        w = np.empty((b + 1, b))
        w[0] = powers
        w[1:] = m.T
    last = m[-1].copy()
    big_a = big_a if big_a >= _TINY else 0.0
    # block ends obey c[k] = A c[k-1] + e[k] (A = a**B): solved with two fixed products
    # (blocks of 64 ends, then across those blocks) rather than a recursive linrec call
    with np.errstate(under="ignore"):
        l1 = _lower(big_a, 64)
        a64 = big_a**64
    p1 = _powers(big_a, 64)
    for arr in (w, last, l1, p1):
        arr.setflags(write=False)
    return w, last, big_a, l1, p1, (a64 if a64 >= _TINY else 0.0)


class Recursion:
    """``y[t] = a*y[t-1] + v[t]`` fed chunk by chunk, carrying ``y`` across chunks.

    Used by the chunked fast paths (``_fast``): each call solves one chunk (1-D, or 2-D
    with time on axis 0) block-wise as ``linrec`` does, with the state left by the previous
    call as the carry into its first block. ``carry`` is the state before the first bar.
    """

    def __init__(self, a: float, rest: tuple[int, ...] = (), carry: float = 0.0) -> None:
        self.w, self.last, self.big_a, self._l1, self._p1, self._a64 = _weights(a, bool(rest))
        self.rest = rest
        self.a = a
        self.carry: Array | float = np.full(rest, float(carry)) if rest else float(carry)
        self._u: Array | None = None
        self._apow: Array | None = None
        self._scaled: tuple[float, Array, Array] | None = None
        self._l2: Array | None = None

    def _block_ends(self, e: Array) -> Array:
        rows = e.shape[0]
        if rows <= 64:  # one product with the leading corner of the 64 x 64 matrix
            m = self._l1[:rows, :rows]
            return matmul_cols(m, e) if e.ndim == 2 else m @ e
        q = -(-rows // 64)
        if self._l2 is None or self._l2.shape[0] < q:
            self._l2 = _lower(self._a64, q)
        rest = e.shape[1:]
        if rows == q * 64:
            ep = e.reshape((q, 64) + rest)
        else:
            ep = np.zeros((q * 64,) + rest)
            ep[:rows] = e
            ep = ep.reshape((q, 64) + rest)
        if rest:
            loc = matmul_cols(self._l1, ep)  # (q, 64, S)
            c2 = matmul_cols(self._l2[:q, :q], loc[:, -1])  # (q, S)
            loc[1:] += self._p1[None, :, None] * c2[:-1, None, :]
        else:
            # one 64 x 64 x 64 product per slice of 64 blocks: larger single products (and
            # any matrix-vector product over 96 x 96) run threaded in OpenBLAS, ~100x slower
            loc = matmul_rows(ep, self._l1.T, rows=64)  # (q, 64)
            c2 = self._l2[:q, :q] @ loc[:, -1] if q <= 64 else linrec(loc[:, -1], self._a64)
            loc[1:] += c2[:-1, None] * self._p1[None, :]
        return loc.reshape((q * 64,) + rest)[:rows]

    def block_ends(self, e: Array, carry: Array | float) -> Array:
        """Values at the ends of consecutive blocks, given the blocks' local end values
        ``e`` (from a zero start) and the value ``carry`` before the first block."""
        rows = e.shape[0]
        self._buffer(rows)
        assert self._apow is not None
        c = self._block_ends(e)
        c += self._apow[:rows] * carry
        return c

    def _buffer(self, rows: int) -> Array:
        """Panel: ``(rows, B+1) + rest``, the carry into each block in column 0. Series:
        ``(rows, B)``, contiguous (strided writes of the inputs cost more than the products),
        the carry added to each block's first input instead."""
        if self._u is None or self._u.shape[0] < rows:
            self._u = np.empty((rows, BLOCK + 1 if self.rest else BLOCK) + self.rest)
            apow = _powers(self.big_a, rows)
            self._apow = apow.reshape((rows,) + (1,) * len(self.rest))
        return self._u[:rows]

    def input_buffer(self, n: int) -> Array | None:
        """Where a chunk of ``n`` bars may be written, shaped ``(n/B, B) + rest``, for
        ``solve``; None unless ``n`` is a whole number of blocks. Saves a copy."""
        if n == 0 or n % BLOCK:
            return None
        u = self._buffer(n // BLOCK)
        return u[:, 1:] if self.rest else u

    def _weights(self, scale: float) -> tuple[Array, Array]:
        if scale == 1.0:
            return self.w, self.last
        if self._scaled is None or self._scaled[0] != scale:
            w = self.w.copy()
            if self.rest:
                w[:, 1:] *= scale
            else:
                w[1:] *= scale
            self._scaled = (scale, w, self.last * scale)
        return self._scaled[1], self._scaled[2]

    def solve(self, n: int, out: Array, scale: float = 1.0) -> None:
        """Solve for ``scale *`` the chunk written in ``input_buffer(n)``, into ``out``."""
        rows = n // BLOCK
        u = self._buffer(rows)
        w, last = self._weights(scale)
        if not self.rest:
            self._solve_series(u, w, last, scale, out[: rows * BLOCK])
            return
        ends = matmul_cols(last[None, :], u[:, 1:])[:, 0]
        c = self._block_ends(ends)
        assert self._apow is not None
        c += self._apow[:rows] * self.carry
        u[0, 0] = self.carry
        u[1:, 0] = c[:-1]
        matmul_cols(w, u, out=out.reshape((rows, BLOCK) + self.rest))
        self.carry = out[n - 1].copy()

    def _solve_series(self, u: Array, w: Array, last: Array, scale: float, out: Array) -> None:
        """1-D: ``scale *`` the blocks in ``u`` (overwritten) solved into ``out``."""
        rows = u.shape[0]
        ends = matmul_rows(u, last)
        c = self._block_ends(ends)
        assert self._apow is not None
        c += self._apow[:rows] * self.carry
        f = self.a / scale  # the carry into a block, as an input to its first bar
        u[0, 0] += f * self.carry
        u[1:, 0] += f * c[:-1]
        matmul_rows(u, w[1:], out=out.reshape(rows, BLOCK))
        self.carry = float(c[-1])

    def __call__(self, v: Array, out: Array, scale: float = 1.0) -> None:
        """Solve for the chunk ``scale * v`` into ``out`` (same shape) and keep its end."""
        b = BLOCK
        n = v.shape[0]
        if n == 0:
            return
        rest = self.rest
        rows = -(-n // b)
        u = self._buffer(rows)
        if not rest:
            flat = u.reshape(-1)
            np.multiply(v, scale, out=flat[:n])
            flat[n:] = 0.0
            if n == rows * b:
                self._solve_series(u, self.w, self.last, 1.0, out)
            else:
                y = np.empty(rows * b)
                self._solve_series(u, self.w, self.last, 1.0, y)
                out[:] = y[:n]
            self.carry = float(out[n - 1])
            return
        exact = n == rows * b
        if exact:
            np.multiply(v.reshape((rows, b) + rest), scale, out=u[:, 1:])
            self.solve(n, out)
            return
        full = (rows - 1) * b
        np.multiply(v[:full].reshape((rows - 1, b) + rest), scale, out=u[:-1, 1:])
        np.multiply(v[full:], scale, out=u[-1, 1 : 1 + n - full])
        u[-1, 1 + n - full :] = 0.0
        ends = matmul_cols(self.last[None, :], u[:, 1:])[:, 0]
        c = self._block_ends(ends)
        assert self._apow is not None
        c += self._apow[:rows] * self.carry
        u[0, 0] = self.carry
        u[1:, 0] = c[:-1]
        out[:] = matmul_cols(self.w, u).reshape((rows * b,) + rest)[:n]
        self.carry = out[n - 1].copy()
