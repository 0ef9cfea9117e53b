"""Live indicators: bars built from streamed trades, indicators carried in their state.

The engine's parts, from the top: ``engine`` (``LiveIndicators``: the trades, the public face,
persistence), ``checks`` (its arguments, trades and checkpoints checked), ``bars`` (the
forming bars, a batch at a time with numpy), ``steps`` (the closed bars' indicators,
checkpoints and replay), ``rows`` (a bar's layout and the rows out) and ``sessions`` (when a
session's bars end).
"""

from .checks import check_arguments
from .engine import LiveIndicators

__all__ = ["LiveIndicators", "check_arguments"]
