"""The arguments of the indicators of several periods and conventions, one value each.

MACD's and KDJ's kernels take their periods and the knobs of their convention through every
path (``_reference``, ``_fast``, ``_segmented`` and ``_segmacd``): one value per indicator
rather than six or nine positional ones, the same for each path.
"""

from __future__ import annotations

from typing import NamedTuple


class MacdParams(NamedTuple):
    """MACD's periods, its EMAs' ``seed`` (``"sma"`` or ``"first"``) and the bar its fast EMA
    starts at (``_kernels.macd_fast_start``)."""

    fast: int
    slow: int
    signal: int
    seed: str
    fast_start: int


class KdjParams(NamedTuple):
    """KDJ's periods, its ``smoothing`` (``"sma"`` windows or ``"recursive"`` seeded at
    ``seed``) and the RSV of a flat window (``flat``)."""

    n: int
    m1: int
    m2: int
    smoothing: str
    seed: float
    flat: float
