"""Adjusted prices: backward factors from the corporate-actions endpoints, applied on read.

``adjust="splits"`` applies capital changes (splits, reverse splits, par-value changes,
capital reductions); ``adjust="all"`` also cash and stock dividends. Every event ``e`` on day
``D_e`` has a price ratio ``r_e`` (see :func:`capital_ratio` and :func:`dividend_ratio`); the
factor of a bar on day ``t`` is the product of the ratios of the events after it::

    F(t) = prod(r_e for e if t < D_e <= today)        adjusted price = raw price * F(t)

so the latest prices are the traded ones and older prices are scaled down to them. Volume is
divided by the share-count part of ``F`` (capital changes, and stock dividends under
``"all"``; never cash), rounded to whole shares; turnover (TWD) is left as traded. Nothing
adjusted is ever stored: a :class:`~marketframe.store.Store` keeps raw prices and adjusts on
read, so a new corporate action never invalidates it. See ``docs/adjusted.md``.

``as_of=`` (a day) adjusts with only the actions that had happened by then, and
:func:`factor_table` lists the actions one row each with their factors and anomaly flags.

The parts: ``_core`` (ratios, events, their application, their fetch through a client's
``prepare``/``send_all``), ``_checks`` (the arguments, before any request) and ``_table``
(the factor table). Everything takes tables and returns tables; the client fetches the
corporate actions (:meth:`marketframe.Client.adjust_prices`) through its fan-out.
"""

from marketframe.adjust._checks import check, check_as_of, check_load, check_read
from marketframe.adjust._core import (
    ALLOWED,
    CAPITAL,
    DIVIDENDS,
    MISSING_CLOSE,
    MODES,
    OUT_OF_RANGE,
    PRICE_COLUMNS,
    TOLERANCE,
    Action,
    Event,
    Tolerance,
    action_span,
    action_windows,
    actions_of,
    actions_served,
    adjust_table,
    apply,
    bar_days,
    capital_ratio,
    dividend_ratio,
    events_of,
    factors,
    fetch_actions,
    happened_by,
)
from marketframe.adjust._table import FACTOR_TABLE, factor_rows, factor_table
from marketframe.exceptions import ActionNotApplied

__all__ = [
    "ALLOWED",
    "Action",
    "ActionNotApplied",
    "CAPITAL",
    "DIVIDENDS",
    "Event",
    "FACTOR_TABLE",
    "MISSING_CLOSE",
    "MODES",
    "OUT_OF_RANGE",
    "PRICE_COLUMNS",
    "TOLERANCE",
    "Tolerance",
    "action_span",
    "action_windows",
    "actions_of",
    "actions_served",
    "adjust_table",
    "apply",
    "bar_days",
    "capital_ratio",
    "check",
    "check_as_of",
    "check_load",
    "check_read",
    "dividend_ratio",
    "events_of",
    "factor_rows",
    "factor_table",
    "factors",
    "fetch_actions",
    "happened_by",
]
