"""Schemas of the four ``stock.ownership`` endpoints: long frames, one row per (date, item).

No recorded payload of the real service exists (sdk-parity section 1): the fields follow the
official SDKs' types, and every numeric field is nullable (the Rust SDK makes them all
``number | null``), so a missing number is a null, never 0. The items of ``data[].components``,
``data[].directors`` and ``data[].distributions`` become rows (``explode``), their date and the
envelope repeated on each. A bare envelope (``{"symbol": "0050"}``, which the SDKs accept) is
an empty frame.
"""

from __future__ import annotations

from marketframe.schemas._core import Col, snake
from marketframe.schemas._core import col as _col
from marketframe.schemas._core import env as _env
from marketframe.schemas._core import many as _many
from marketframe.schemas._core import schema as _schema

#: every SDK makes type/exchange/market optional; the symbol is the request's when absent
_HEADER = [
    _env("type", "cat"),
    _env("exchange", "cat"),
    _env("market", "cat"),
    _env("symbol", "str", req=True, param="symbol"),
]


def _items(
    key: str, specs: str, kind: str, unit: str | None = None, *, prefix: str = "", req: bool = False
) -> list[Col]:
    """Columns read from each element of the exploded list ``key`` of a ``data`` item."""
    return [Col(prefix + snake(s), (key, s), kind, unit, required=req) for s in specs.split()]


ETF_HOLDINGS = _schema(
    [
        *_HEADER,
        Col("date", ("date",), "date", required=True),
        *_items("components", "symbol name", "str", prefix="component_", req=True),
        *_items("components", "quantity", "int", "shares"),
        *_items("components", "weight", "float"),  # percent of the portfolio
        # absent on the first disclosure of a holding (no previous one): null, not 0
        *_items("components", "quantityChange", "int", "shares"),
        *_items("components", "weightChange", "float"),  # percentage points
    ],
    rows=True,
    explode="components",
    data_optional=True,
)

INSTITUTIONAL_TRADES = _schema(
    [
        *_HEADER,
        Col("date", ("date",), "date", required=True),
        # foreign_buy ... dealer_net: net = buy - sell; total = the three nets
        *_many(
            "int",
            " ".join(
                f"{who}.{what}"
                for who in ("foreign", "trust", "dealer")
                for what in ("buy", "sell", "net")
            ),
            "shares",
        ),
        _col("total", "int", "shares"),
    ],
    rows=True,
    data_optional=True,
)

DIRECTOR_HOLDINGS = _schema(
    [
        *_HEADER,
        Col("date", ("date",), "month", required=True),  # "YYYY-MM" -> the month's first day
        *_items("directors", "order", "int"),
        *_items("directors", "title name", "str", req=True),
        *_items("directors", "electedShares heldShares pledgedShares", "int", "shares"),
        *_items("directors", "pledgeRatio", "float"),  # percent; null when nothing is held
        *_items("directors", "relatedHeldShares relatedPledgedShares", "int", "shares"),
        *_items("directors", "relatedPledgeRatio", "float"),
    ],
    rows=True,
    explode="directors",
    data_optional=True,
)

TDCC_DISTRIBUTION = _schema(
    [
        *_HEADER,
        Col("date", ("date",), "date", required=True),
        *_items("distributions", "range", "str", req=True),  # bracket label, as sent
        *_items("distributions", "holders", "int"),
        *_items("distributions", "shares", "int", "shares"),
        *_items("distributions", "proportion", "float"),  # percent of the shares held
    ],
    rows=True,
    explode="distributions",
    data_optional=True,
)
