"""Type names of the public API, shared by ``client``, ``stream``, ``store`` and ``_tree.pyi``.

``FrameT`` is the frame type a client (or stream) returns by default: ``pandas.DataFrame``,
``polars.DataFrame`` or ``pyarrow.Table``, fixed by the ``backend=`` it was made with, so a
type checker knows that ``Client().stock.intraday.quote("2330")`` is a pandas DataFrame and
``Client(backend="polars")...`` a polars one.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import Literal, TypeAlias, TypedDict, TypeVar

import numpy as np

#: The frame libraries a result can be returned in.
Backend: TypeAlias = Literal["pandas", "polars", "arrow"]
#: Each library's ``backend=``, as the overloads that pick the frame type by it spell it.
Pandas: TypeAlias = Literal["pandas"]
Polars: TypeAlias = Literal["polars"]
Arrow: TypeAlias = Literal["arrow"]

#: A day as the service's date parameters take it: ``"YYYY-MM-DD"``, a ``date``, a
#: ``datetime`` (a ``pandas.Timestamp`` too; a tz-aware one counts in Asia/Taipei), or a
#: ``numpy.datetime64``.
DayLike: TypeAlias = str | dt.date | np.datetime64

#: The default frame type of a Client / Stream (set by its ``backend``).
FrameT = TypeVar("FrameT")


class ClientOptions(TypedDict, total=False):
    """The options of :class:`Client` besides ``api_key`` and ``backend`` (for type checkers)."""

    bearer_token: str
    sdk_token: str
    base_url: str
    cache: bool | str | os.PathLike[str]
    timeout: float | tuple[float, float]
    retries: int
    backoff: float
    max_retry_after: float
    max_workers: int
    decode: bool
    pace: bool
    deadline: float
