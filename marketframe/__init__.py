"""marketframe: Taiwan market data as typed pandas and polars DataFrames.

The public surface lives here; heavy parts are imported lazily.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# Registers the `md` accessor on pandas DataFrames (and polars DataFrames/LazyFrames when
# polars is installed), so `df.md.sma(20)` works right after `import marketframe`.
from . import frames as frames  # noqa: E402
from . import indicators as indicators  # noqa: E402

# Imported eagerly so that `marketframe.crosscheck` is the function, not its module.
from .crosscheck import crosscheck as crosscheck  # noqa: E402
from .indicators.options import options as options  # noqa: E402

# name -> module that defines it; imported on first access so `import marketframe` stays light.
_LAZY = {
    "APIError": "marketframe.exceptions",
    "AsyncStream": "marketframe.stream",
    "AuthenticationError": "marketframe.exceptions",
    "BadRequest": "marketframe.exceptions",
    "BatchError": "marketframe.exceptions",
    "Client": "marketframe.client",
    "DeadlineExceeded": "marketframe.exceptions",
    "ENDPOINTS": "marketframe.endpoints",
    "Forbidden": "marketframe.exceptions",
    "InvalidParams": "marketframe.exceptions",
    "MarketframeError": "marketframe.exceptions",
    "NotFound": "marketframe.exceptions",
    "PartialResult": "marketframe.exceptions",
    "PlanError": "marketframe.exceptions",
    "RateLimited": "marketframe.exceptions",
    "SchemaError": "marketframe.exceptions",
    "ServerError": "marketframe.exceptions",
    "Store": "marketframe.store",
    "Stream": "marketframe.stream",
    "StreamAuthError": "marketframe.exceptions",
    "StreamClosed": "marketframe.exceptions",
    "StreamError": "marketframe.exceptions",
    "StreamSubscribeError": "marketframe.exceptions",
    "StreamTimeout": "marketframe.exceptions",
    "SymbolNotFound": "marketframe.exceptions",
    "TransportError": "marketframe.exceptions",
    "units": "marketframe.convert",
}

__all__ = sorted(["__version__", "crosscheck", "frames", "indicators", "options", *_LAZY])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'marketframe' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
