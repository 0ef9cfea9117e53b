"""The schema vocabulary: :class:`Col`, :class:`Schema`, the Arrow type of each kind, units.

See the package docstring (:mod:`marketframe.schemas`) for paths, kinds and units.
"""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass, field

import pyarrow as pa

from marketframe._time import TZ_NAME
from marketframe.exceptions import DefinitionError

#: the zone of every timestamp column
TZ = TZ_NAME

#: kind -> Arrow type of the column (``date_or_time`` is a date for D/W/M, a timestamp otherwise).
ARROW_TYPES: dict[str, pa.DataType] = {
    "float": pa.float64(),
    "int": pa.int64(),
    "int_str": pa.int64(),  # an integer that may arrive as a zero-padded string ("00379320")
    "time_us": pa.timestamp("us", tz=TZ),  # epoch microseconds
    "iso_time": pa.timestamp("us", tz=TZ),  # ISO 8601 with offset
    "hhmmss": pa.timestamp("us", tz=TZ),  # snapshot "133500" combined with the envelope date
    "date": pa.date32(),
    "date_or_time": pa.date32(),
    "month": pa.date32(),  # "YYYY-MM": the first day of the month
    "str": pa.string(),
    "cat": pa.dictionary(pa.int32(), pa.string()),
    "flag": pa.bool_(),  # sent only when true: absent means False
    "bool": pa.bool_(),  # true, false or absent (null): pandas "boolean", polars Boolean
}

#: kind -> Arrow type of the JSON value as read, before the kind's final conversion
JSON_TYPES: dict[str, pa.DataType] = {
    "float": pa.float64(),
    "int": pa.int64(),
    "int_str": pa.int64(),
    "time_us": pa.int64(),
    "flag": pa.bool_(),
    "bool": pa.bool_(),
    "str": pa.string(),
    "cat": pa.string(),
    "date": pa.string(),
    "month": pa.string(),
    "iso_time": pa.string(),
    "date_or_time": pa.string(),
    "hhmmss": pa.string(),
}


def resolve_unit(unit: str, type_: str | None, market: str | None, oddlot: bool) -> str:
    """The unit of a ``lots`` column in one response (others are fixed)."""
    if unit != "lots":
        return unit
    if type_ == "INDEX":
        return "TWD"
    if oddlot or market in ("ESB", "PSB"):
        return "shares"
    return "lots"


def snake(name: str) -> str:
    """camelCase -> snake_case: ``isLimitUpPrice`` -> ``is_limit_up_price``."""
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s)
    return s.lower()


@dataclass(frozen=True)
class Col:
    """One output column."""

    name: str
    path: tuple[str | int, ...]
    kind: str
    unit: str | None = None
    _: KW_ONLY  # the flags are named at every call: Col(..., envelope=True, required=True)
    envelope: bool = False
    required: bool = False
    param: str | None = None  # envelope value missing -> take this request parameter's value

    @property
    def arrow_type(self) -> pa.DataType:
        return ARROW_TYPES[self.kind]

    @property
    def wire_name(self) -> str:
        return ".".join(str(p) for p in self.path)


@dataclass(frozen=True)
class Schema:
    """The columns of one endpoint's frame and how the payload holds them."""

    columns: tuple[Col, ...]
    rows: bool  # True: one row per item of ``data``; False: the payload is one row
    ignore: frozenset[str] = field(default_factory=frozenset)  # envelope echoes not kept
    #: a key of each ``data`` item holding a list: one row per element of that list (the
    #: item's other keys repeated), read by paths ``(explode, field)``; None: one row per item
    explode: str | None = None
    #: ``data`` absent or null means no rows (the ownership endpoints' SDKs accept a bare
    #: envelope); otherwise a missing ``data`` is a SchemaError
    data_optional: bool = False

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def arrow(self, minute: bool = False) -> pa.Schema:
        """The Arrow schema (``minute``: date_or_time columns are timestamps)."""
        fields = []
        for c in self.columns:
            t = c.arrow_type
            if c.kind == "date_or_time" and minute:
                t = ARROW_TYPES["iso_time"]
            meta = {"unit": c.unit} if c.unit else None
            fields.append(pa.field(c.name, t, nullable=not c.required, metadata=meta))
        return pa.schema(fields)

    @property
    def units(self) -> dict[str, str]:
        return {c.name: c.unit for c in self.columns if c.unit}


# --- a small vocabulary to write schemas as data (used by the group modules) ---------------


def col(
    spec: str,
    kind: str,
    unit: str | None = None,
    *,
    env: bool = False,
    req: bool = False,
    name: str | None = None,
    param: str | None = None,
) -> Col:
    path = tuple(spec.split("."))
    return Col(
        name or "_".join(snake(p) for p in path),
        path,
        kind,
        unit,
        envelope=env,
        required=req,
        param=param,
    )


def env(
    spec: str,
    kind: str,
    unit: str | None = None,
    *,
    req: bool = False,
    name: str | None = None,
    param: str | None = None,
) -> Col:
    """An envelope column: ``col(..., env=True)``."""
    return col(spec, kind, unit, env=True, req=req, name=name, param=param)


def many(kind: str, specs: str, unit: str | None = None, env: bool = False) -> list[Col]:
    return [col(s, kind, unit, env=env) for s in specs.split()]


def book(unit: str) -> list[Col]:
    cols = []
    for side, short in (("bids", "bid"), ("asks", "ask")):
        for i in range(5):
            cols.append(Col(f"{short}_price_{i + 1}", (side, i, "price"), "float", envelope=True))
            cols.append(Col(f"{short}_size_{i + 1}", (side, i, "size"), "int", unit, envelope=True))
    return cols


def trade_obj(prefix: str, unit: str, serial: str = "int") -> list[Col]:
    return [
        *many("float", f"{prefix}.bid {prefix}.ask {prefix}.price", env=True),
        env(f"{prefix}.size", "int", unit),
        env(f"{prefix}.time", "time_us"),
        env(f"{prefix}.serial", serial),
    ]


def trade_row(unit: str, serial: str = "int") -> list[Col]:
    """The columns of a trades endpoint's row: one trade and the volume traded so far."""
    return [
        *many("float", "bid ask price"),
        col("size", "int", unit),
        col("volume", "int", unit),
        col("time", "time_us", req=True),
        col("serial", serial),
    ]


def schema(
    cols: list[Col],
    rows: bool,
    ignore: str = "",
    explode: str | None = None,
    data_optional: bool = False,
) -> Schema:
    """A :class:`Schema` from columns; two columns with one name fail at import (TypeError),
    as does an ``explode`` key on a one-row schema."""
    names = [c.name for c in cols]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DefinitionError(f"a schema has duplicate columns {dup}")
    if explode is not None and not rows:
        raise DefinitionError(f"explode={explode!r} needs a rows schema")
    return Schema(tuple(cols), rows, frozenset(ignore.split()), explode, data_optional)
