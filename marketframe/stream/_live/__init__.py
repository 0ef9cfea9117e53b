"""Live indicators: bars built from streamed trades, indicators carried in their state.

The engine's parts, from the top: ``engine`` (``LiveIndicators``: the trades, the public face,
persistence), ``bars`` (the forming bars, a batch at a time with numpy), ``steps`` (the closed
bars' indicators, checkpoints and replay), ``rows`` (a bar's layout and the rows out) and
``sessions`` (when a session's bars end).
"""

from .engine import LiveIndicators, check_arguments

__all__ = ["LiveIndicators", "check_arguments"]
