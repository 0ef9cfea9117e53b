"""marketframe: Taiwan market data as typed pandas and polars DataFrames.

The public surface lives here; heavy parts are imported lazily.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
