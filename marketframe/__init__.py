"""marketframe: Taiwan market data as typed pandas and polars DataFrames.

The public surface lives here; heavy parts are imported lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Registers the `md` accessor on pandas DataFrames (and polars DataFrames/LazyFrames when
# polars is installed), so `df.md.sma(20)` works after `import marketframe`.
from . import frames, indicators  # noqa: E402

__all__ = ["__version__", "frames", "indicators"]
