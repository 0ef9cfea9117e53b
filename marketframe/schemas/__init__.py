"""Arrow schemas: the one place where column names, dtypes and units are decided.

A schema lists :class:`Col` entries. Each column says where its value lives in the JSON payload
(``path``: a key, a nested key such as ``("total", "tradeVolume")`` or a book level such as
``("bids", 0, "price")``), whether it comes from the envelope or from each row of ``data``, the
*kind* of wire value it accepts, and the unit of volume-like columns. :mod:`marketframe.convert`
is the only consumer; the Arrow type of each kind is fixed in :data:`ARROW_TYPES`.

Units: ``lots`` (1 lot = ``board_lot`` shares, usually 1000), ``shares``, ``TWD``, ``contracts``,
``seconds``, ``shares per 1000 shares`` and ``thousand TWD``. Intraday stock volumes are in lots for
whole-lot stocks but in shares for odd-lot requests and emerging-board stocks, and an index's
"volume" is turnover in TWD: :func:`resolve_unit` turns ``lots`` into the unit of one response.

The vocabulary lives in ``_core``; the schemas themselves, one module per endpoint group
(``_stock``, ``_technical``, ``_actions``, ``_futopt``, ``_ownership``), are upper-case module
constants that the rows of :data:`marketframe.endpoints.ENDPOINTS` hold as objects (a misspelt
name fails at import).
"""

from __future__ import annotations

from types import ModuleType

from marketframe.schemas import actions, futopt, ownership, stock, technical

from ._core import (
    ARROW_TYPES,
    JSON_TYPES,
    TZ,
    Col,
    Schema,
    book,
    col,
    env,
    many,
    resolve_unit,
    schema,
    snake,
    trade_obj,
)

__all__ = [
    "ARROW_TYPES",
    "GROUPS",
    "JSON_TYPES",
    "SCHEMAS",
    "TZ",
    "Col",
    "Schema",
    "book",
    "col",
    "env",
    "many",
    "resolve_unit",
    "schema",
    "snake",
    "trade_obj",
]

#: the group modules; every upper-case Schema constant of theirs is a schema
GROUPS: tuple[ModuleType, ...] = (stock, technical, actions, futopt, ownership)

#: every schema by its lower-case constant name (``"stock_quote"``), for code that derives
#: further schemas from them (the streaming channels)
SCHEMAS: dict[str, Schema] = {
    name.lower(): value
    for group in GROUPS
    for name, value in vars(group).items()
    if isinstance(value, Schema) and name.isupper() and not name.startswith("_")
}
