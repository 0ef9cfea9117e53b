"""yfinance's keywords of ``download`` and ``history`` that marketframe names otherwise:
taken where they mean the same (``tickers=``, ``auto_adjust=``, ``threads=``, a string of
several symbols), refused before any request naming what to write where they do not. See
docs/migration.md, "Coming from yfinance"."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from marketframe.exceptions import InvalidParams, InvalidParamType, did_you_mean

#: keywords of yfinance's ``download`` / ``history`` that ``download`` takes by another name or
#: not at all -> the values that mean what marketframe does anyway, and what to write instead
#: (``tickers=``, ``auto_adjust=`` and ``threads=`` mean the same here: :func:`keywords`)
NO_EQUIVALENT: Mapping[str, tuple[tuple[object, ...], str]] = {
    "actions": (
        (False,),
        "corporate actions are not columns of the candles here; use Ticker(symbol).actions "
        "(or .dividends, .splits)",
    ),
    "back_adjust": ((False,), "use adjust=True (splits and dividends, adjusted backward)"),
    "repair": ((False,), "the candles are the exchange's own; leave it out"),
    "prepost": ((False,), "the candles cover the regular session, the only one; leave it out"),
    "keepna": ((False,), "a day without a trade has no row; leave it out"),
    "rounding": ((False,), "prices come as the exchange quotes them; use df.round(2)"),
    "ignore_tz": (
        (),
        "daily dates are tz-naive, minute times Asia/Taipei; "
        "df['date'].dt.tz_localize(None) drops the zone",
    ),
    "multi_level_index": ((True,), "layout='long' (the default) is a flat frame"),
    "timeout": ((), "use client=Client(timeout=...) (or deadline=, for the whole call)"),
    "session": ((), "use client=Client(...): the client holds the HTTP session"),
    "proxy": ((), "set the HTTPS_PROXY environment variable (the client reads it)"),
}


def keywords(
    symbols: Any, adjust: str | bool | None, given: Mapping[str, Any], known: Sequence[str]
) -> tuple[Any, str | bool | None]:
    """``symbols`` and ``adjust`` with yfinance's keywords of the same meaning taken:
    ``tickers=`` (``symbols``), ``auto_adjust=`` (``adjust=True``/None) and ``threads=``
    (requests always run concurrently, paced by the client). Any other keyword raises before
    any request: yfinance's (:data:`NO_EQUIVALENT`) naming what to write instead unless its
    value means what marketframe does anyway, an unknown one naming ``known``, the keywords
    there are (an :class:`InvalidParamType`: a ``TypeError``, as Python's own)."""
    rest = dict(given)
    if "tickers" in rest:
        if symbols is not None:
            raise InvalidParams(
                "download",
                "tickers",
                "and symbols both given",
                "one of them (tickers= is yfinance's name for symbols)",
            )
        symbols = rest.pop("tickers")
    if "auto_adjust" in rest:
        auto = rest.pop("auto_adjust")
        if not isinstance(auto, bool):
            raise InvalidParamType(
                "download", "auto_adjust", f"has value {auto!r}", "True or False (or adjust=)"
            )
        if adjust is not None:
            raise InvalidParams(
                "download",
                "auto_adjust",
                f"({auto!r}) and adjust ({adjust!r}) both given",
                "adjust= alone: True or 'all' (splits and dividends), 'splits', None",
            )
        adjust = "all" if auto else None
    if "threads" in rest:
        threads = rest.pop("threads")
        if not isinstance(threads, bool) and not (isinstance(threads, int) and threads >= 1):
            raise InvalidParamType(
                "download", "threads", f"has value {threads!r}", "True, False or a count"
            )
    for name, value in rest.items():
        if name in NO_EQUIVALENT:
            same, instead = NO_EQUIVALENT[name]
            if any(value is v for v in same):
                continue
            raise InvalidParams("download", name, f"({value!r}) is yfinance's: {instead}")
        raise InvalidParamType(
            "download",
            name,
            f"is not a keyword of download{did_you_mean(name, known)}",
            ", ".join(known),
        )
    return symbols, adjust


def symbol_list(symbols: Any) -> Any:
    """yfinance's ``"2330 0050"`` (or ``"2330,0050"``) as a list; anything else as given."""
    if isinstance(symbols, str) and re.search(r"[\s,]", symbols.strip()):
        return [s for s in re.split(r"[\s,]+", symbols.strip()) if s]
    return symbols
