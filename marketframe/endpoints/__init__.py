"""ENDPOINTS: one row per REST endpoint of the service, with every rule that is its own, and
the service's rules that read the rows.

The client tree (``client.stock.intraday.quote``), parameter validation, the store's windows
and warm-up, the cross-check, the CLI, ``docs/endpoints.md`` and the endpoint tests are all
generated from this table. Adding an endpoint is one row here, its schema in
:mod:`marketframe.schemas` and its handler in the sandbox (``docs/contributing.md``).

Beside the rows (``_model``, ``_vocab``, ``_rows``, ``_table``) stand the rules every caller
shares: parameter validation and encoding (``_params``), what to fetch of a date-ranged
endpoint (``_selection``), the date arithmetic of windows (``_windows``), futures and options
contract codes (``_contracts``) and the warning for a range of closed days (``_closed``).
Another package takes them from here, by their public names.
"""

from __future__ import annotations

from marketframe._time import TAIPEI as TAIPEI
from marketframe.endpoints._closed import say_if_answer_closed, say_if_closed
from marketframe.endpoints._model import (
    EARLIEST,
    FRESHNESS,
    FUTOPT_FIELDS,
    HISTORICAL_FIELDS,
    MARKETS,
    MINUTE_TIMEFRAMES,
    PLANS,
    TIMEFRAMES,
    Endpoint,
    MinuteRange,
    Param,
    Technical,
    board_name,
    spelled,
)
from marketframe.endpoints._params import (
    DATE_SPAN,
    aliases,
    encode,
    in_order,
    is_request_value,
    to_date,
    validate,
    vocabulary,
)
from marketframe.endpoints._selection import (
    check_dataset,
    check_range,
    check_symbols,
    latest_only,
    symbol_list,
)
from marketframe.endpoints._table import ENDPOINTS, get
from marketframe.endpoints._vocab import FROM, SYMBOL, TO
from marketframe.endpoints._windows import (
    MAX_LEAD,
    Interval,
    earliest,
    fetch_start,
    final_until,
    intersect,
    merge,
    plan,
    split,
    subtract,
)

__all__ = [
    "DATE_SPAN",
    "EARLIEST",
    "ENDPOINTS",
    "FRESHNESS",
    "FROM",
    "FUTOPT_FIELDS",
    "HISTORICAL_FIELDS",
    "MARKETS",
    "MAX_LEAD",
    "MINUTE_TIMEFRAMES",
    "PLANS",
    "SYMBOL",
    "TIMEFRAMES",
    "TO",
    "Endpoint",
    "Interval",
    "MinuteRange",
    "Param",
    "Technical",
    "aliases",
    "board_name",
    "check_dataset",
    "check_range",
    "check_symbols",
    "in_order",
    "earliest",
    "encode",
    "fetch_start",
    "final_until",
    "get",
    "intersect",
    "is_request_value",
    "latest_only",
    "merge",
    "plan",
    "say_if_answer_closed",
    "say_if_closed",
    "split",
    "subtract",
    "symbol_list",
    "spelled",
    "to_date",
    "validate",
    "vocabulary",
]
