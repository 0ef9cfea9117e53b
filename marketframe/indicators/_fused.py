"""MACD on a long series as one linear system: one pass, two products per chunk.

The line ``F - S`` (two EMAs of the close) and the signal ``G`` (an EMA of the line) are
linear in the close and in the state ``(F, S, G)`` at the start of a block. So for a block of
``B`` bars both outputs are one product of ``[F0, S0, G0, x_0 .. x_B-1]`` with fixed weights,
and the states at the block ends follow three scalar recursions (F and S on their own, G
driven by them), solved like any other block-end recursion. This replaces three
recursions, three copies and a subtraction per chunk. The weights are found by running
the bar-by-bar recursion on unit inputs (no closed form to lose precision near
``fast == signal``).
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from ._linrec import BLOCK, Recursion, matmul_rows

Array = NDArray[np.float64]


@functools.lru_cache(maxsize=64)
def _weights(kf: float, ks: float, kg: float) -> tuple[Array, Array, Array, float, float]:
    """A block's weights for the line and the signal, its end states from its inputs, and
    the fast and slow states' weights in the signal's end state; made once per set of
    factors (the bar-by-bar run on unit inputs costs more than a short chunk), read-only."""
    b = BLOCK
    af, as_, ag = 1.0 - kf, 1.0 - ks, 1.0 - kg
    w = np.zeros((b + 3, 2 * b))
    ends = np.zeros((b + 3, 3))
    for col in range(b + 3):
        z = np.zeros(b + 3)
        z[col] = 1.0
        f, s, g = z[0], z[1], z[2]
        for i in range(b):
            x = z[3 + i]
            f = af * f + kf * x
            s = as_ * s + ks * x
            g = ag * g + kg * (f - s)
            w[col, i] = f - s
            w[col, b + i] = g
        ends[col] = (f, s, g)
    out = (w[:, :b].copy(), w[:, b:].copy(), ends[3:].copy())
    for arr in out:
        arr.setflags(write=False)
    return out[0], out[1], out[2], float(ends[0, 2]), float(ends[1, 2])


class FusedMacd:
    """Chunks of whole blocks of a 1-D series, continuing from three ``Recursion`` states."""

    def __init__(
        self, kf: float, ks: float, kg: float, rec_f: Recursion, rec_s: Recursion, rec_g: Recursion
    ) -> None:
        self.w_line, self.w_signal, self.from_inputs, self.f_to_g, self.s_to_g = _weights(
            kf, ks, kg
        )
        self.recs = (rec_f, rec_s, rec_g)
        self._u: Array | None = None

    def __call__(self, x: Array, line: Array, signal: Array) -> None:
        """Line and signal for ``x`` (a whole number of blocks); updates the three states."""
        rows = x.shape[0] // BLOCK
        if self._u is None or self._u.shape[0] < rows:
            self._u = np.empty((rows, BLOCK + 3))
        u = self._u[:rows]
        u[:, 3:] = x.reshape(rows, BLOCK)
        local = matmul_rows(u[:, 3:], self.from_inputs)  # (rows, 3)
        rec_f, rec_s, rec_g = self.recs
        f0, s0, g0 = rec_f.carry, rec_s.carry, rec_g.carry
        cf = rec_f.block_ends(local[:, 0].copy(), f0)
        cs = rec_s.block_ends(local[:, 1].copy(), s0)
        u[0, 0], u[0, 1], u[0, 2] = f0, s0, g0
        u[1:, 0] = cf[:-1]
        u[1:, 1] = cs[:-1]
        drive = local[:, 2] + self.f_to_g * u[:, 0] + self.s_to_g * u[:, 1]
        cg = rec_g.block_ends(drive, g0)
        u[1:, 2] = cg[:-1]
        matmul_rows(u, self.w_line, out=line.reshape(rows, BLOCK))
        matmul_rows(u, self.w_signal, out=signal.reshape(rows, BLOCK))
        rec_f.carry, rec_s.carry, rec_g.carry = float(cf[-1]), float(cs[-1]), float(cg[-1])
