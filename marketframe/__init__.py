"""marketframe: Taiwan market data as typed pandas and polars DataFrames.

The public surface lives here. Type checkers and IDEs read the explicit imports under
``TYPE_CHECKING``; at run time the same names are imported on first access (PEP 562), so
``import marketframe`` loads neither the HTTP stack nor polars, matplotlib or authlib.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Registers the `md` accessor on pandas DataFrames (and, when the user imports polars, on
# polars DataFrames/LazyFrames), so `df.md.sma(20)` works right after `import marketframe`.
from . import frames as frames  # noqa: E402
from . import indicators as indicators  # noqa: E402

# Imported eagerly so that `marketframe.crosscheck` and `marketframe.download` are the
# functions, not their module and package (a package imported later would not rebind them).
from .crosscheck import crosscheck as crosscheck  # noqa: E402
from .download import download as download  # noqa: E402
from .indicators.options import options as options  # noqa: E402

if TYPE_CHECKING:
    from marketframe import adjust as adjust
    from marketframe import calendar as calendar
    from marketframe import engines as engines
    from marketframe import flows as flows
    from marketframe.client import Client as Client
    from marketframe.convert import units as units
    from marketframe.download import Ticker as Ticker
    from marketframe.download import Tickers as Tickers
    from marketframe.endpoints import ENDPOINTS as ENDPOINTS
    from marketframe.exceptions import AdjustmentUnavailable as AdjustmentUnavailable
    from marketframe.exceptions import APIError as APIError
    from marketframe.exceptions import AuthenticationError as AuthenticationError
    from marketframe.exceptions import BadRequest as BadRequest
    from marketframe.exceptions import BatchError as BatchError
    from marketframe.exceptions import ConfigurationError as ConfigurationError
    from marketframe.exceptions import DeadlineExceeded as DeadlineExceeded
    from marketframe.exceptions import Forbidden as Forbidden
    from marketframe.exceptions import InvalidParams as InvalidParams
    from marketframe.exceptions import InvalidParamType as InvalidParamType
    from marketframe.exceptions import MarketframeError as MarketframeError
    from marketframe.exceptions import NotFound as NotFound
    from marketframe.exceptions import NotSynced as NotSynced
    from marketframe.exceptions import PartialResult as PartialResult
    from marketframe.exceptions import PlanError as PlanError
    from marketframe.exceptions import RateLimited as RateLimited
    from marketframe.exceptions import SchemaError as SchemaError
    from marketframe.exceptions import ServerError as ServerError
    from marketframe.exceptions import ServiceError as ServiceError
    from marketframe.exceptions import StreamAuthError as StreamAuthError
    from marketframe.exceptions import StreamClosed as StreamClosed
    from marketframe.exceptions import StreamError as StreamError
    from marketframe.exceptions import StreamSubscribeError as StreamSubscribeError
    from marketframe.exceptions import StreamTimeout as StreamTimeout
    from marketframe.exceptions import SymbolNotFound as SymbolNotFound
    from marketframe.exceptions import TransportError as TransportError
    from marketframe.rolls import continuous as continuous
    from marketframe.store import Store as Store
    from marketframe.stream import AsyncStream as AsyncStream
    from marketframe.stream import Stream as Stream

__all__ = [
    "APIError",
    "AdjustmentUnavailable",
    "AsyncStream",
    "AuthenticationError",
    "BadRequest",
    "BatchError",
    "Client",
    "ConfigurationError",
    "DeadlineExceeded",
    "ENDPOINTS",
    "Forbidden",
    "InvalidParamType",
    "InvalidParams",
    "MarketframeError",
    "NotFound",
    "NotSynced",
    "PartialResult",
    "PlanError",
    "RateLimited",
    "SchemaError",
    "ServerError",
    "ServiceError",
    "Store",
    "Stream",
    "StreamAuthError",
    "StreamClosed",
    "StreamError",
    "StreamSubscribeError",
    "StreamTimeout",
    "SymbolNotFound",
    "Ticker",
    "Tickers",
    "TransportError",
    "__version__",
    "adjust",
    "calendar",
    "continuous",
    "crosscheck",
    "download",
    "engines",
    "flows",
    "frames",
    "indicators",
    "options",
    "units",
]

# The run-time side of the TYPE_CHECKING imports above (a test checks the two agree): name ->
# the module that defines it, imported on first access.
_LAZY = {
    "APIError": "marketframe.exceptions",
    "AdjustmentUnavailable": "marketframe.exceptions",
    "AsyncStream": "marketframe.stream",
    "AuthenticationError": "marketframe.exceptions",
    "BadRequest": "marketframe.exceptions",
    "BatchError": "marketframe.exceptions",
    "Client": "marketframe.client",
    "ConfigurationError": "marketframe.exceptions",
    "DeadlineExceeded": "marketframe.exceptions",
    "ENDPOINTS": "marketframe.endpoints",
    "Forbidden": "marketframe.exceptions",
    "InvalidParamType": "marketframe.exceptions",
    "InvalidParams": "marketframe.exceptions",
    "MarketframeError": "marketframe.exceptions",
    "NotFound": "marketframe.exceptions",
    "NotSynced": "marketframe.exceptions",
    "PartialResult": "marketframe.exceptions",
    "PlanError": "marketframe.exceptions",
    "RateLimited": "marketframe.exceptions",
    "SchemaError": "marketframe.exceptions",
    "ServerError": "marketframe.exceptions",
    "ServiceError": "marketframe.exceptions",
    "Store": "marketframe.store",
    "Stream": "marketframe.stream",
    "StreamAuthError": "marketframe.exceptions",
    "StreamClosed": "marketframe.exceptions",
    "StreamError": "marketframe.exceptions",
    "StreamSubscribeError": "marketframe.exceptions",
    "StreamTimeout": "marketframe.exceptions",
    "SymbolNotFound": "marketframe.exceptions",
    "Ticker": "marketframe.download",
    "Tickers": "marketframe.download",
    "TransportError": "marketframe.exceptions",
    "adjust": "marketframe",  # submodules, imported on first use
    "calendar": "marketframe",  # (pandas and exchange_calendars: on first use)
    "engines": "marketframe",
    "flows": "marketframe",
    "continuous": "marketframe.rolls",
    "units": "marketframe.convert",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'marketframe' has no attribute {name!r}")
    import importlib

    if module == __name__:  # a submodule of the package
        value: Any = importlib.import_module(f"{__name__}.{name}")
    else:
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
