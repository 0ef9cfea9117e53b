"""The endpoint row and its parts: :class:`Param`, :class:`Technical`, :class:`Endpoint`, with
the vocabulary of values they are checked against (timeframes, markets, plans, freshness)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from marketframe._time import TAIPEI as TAIPEI
from marketframe.exceptions import DefinitionError
from marketframe.indicators import registry
from marketframe.schemas import Schema

#: Timeframes of historical and technical endpoints; the first seven are minutes.
MINUTE_TIMEFRAMES = ("1", "3", "5", "10", "15", "30", "60")
TIMEFRAMES = (*MINUTE_TIMEFRAMES, "D", "W", "M")
MARKETS = ("TSE", "OTC", "ESB", "TIB", "PSB")


def spelled(item: object, allowed: Iterable[str]) -> str | None:
    """``item`` as ``allowed`` spells it, matched in any case (``"tpex"`` -> ``"TPEx"``),
    else None."""
    if not isinstance(item, str):
        return None
    return next((a for a in allowed if a.upper() == item.upper()), None)


def board_name(item: object) -> str | None:
    """The board (of :data:`MARKETS`) that ``item`` names in any case (``"tse"`` ->
    ``"TSE"``), else None: no symbol is spelt like a board."""
    return spelled(item, MARKETS)


HISTORICAL_FIELDS = ("open", "high", "low", "close", "volume", "turnover", "change")
FUTOPT_FIELDS = ("open", "high", "low", "close", "volume", "average", "transaction", "change")

#: Earliest data: stocks from 2010, indices (symbols starting with IX) from 2015.

EARLIEST = MappingProxyType({"stock": dt.date(2010, 1, 1), "index": dt.date(2015, 1, 1)})

#: Cache freshness classes, in seconds (None: decided per request; see ``_transport``).
FRESHNESS = MappingProxyType(
    {
        "snapshot": 5,  # snapshots refresh every five seconds
        "intraday": 2,  # live data: short
        "historical": None,  # permanent when the range ends before today, else 60 s
        "reference": None,  # until the next trading day's 08:00 Asia/Taipei
    }
)
PLANS = ("basic", "developer", "advanced")

#: What a minute timeframe does to a row's date range: ``checked`` like any range,
#: ``forbidden`` (the service returns the latest 30 days and refuses from/to), ``ignored``
#: (required on the wire, but the service returns the latest 30 days whatever they say).
MinuteRange = Literal["checked", "forbidden", "ignored"]


@dataclass(frozen=True, kw_only=True)
class Param:
    """One query or path parameter."""

    name: str  # Python name (``from_``)
    type: str  # str, int, float, bool, date, enum, fields
    required: bool = False
    allowed: tuple[str, ...] | None = None
    doc: str = ""
    wire: str | None = None  # name on the wire when it differs (``from``)
    in_path: bool = False
    minimum: int = 0  # smallest value of an int parameter (``limit``/``period`` need 1)
    #: a str parameter's form (a full-match regular expression), and what to do instead: a
    #: text, or a function of the refused value (e.g. a contract code -> product and month)
    pattern: str | None = None
    fix: str | Callable[[str], str] = field(default="", compare=False)
    #: an enum accepted in any letter case and sent in the spelling of ``allowed`` (the
    #: futopt list endpoints want ``AFTERHOURS`` and silently return no rows for lower case)
    fold_case: bool = False
    #: what the service takes when the parameter is left out (frames fill an identifying
    #: column the envelope does not echo with it: historical candles are daily by default)
    default: str | None = None

    @property
    def wire_name(self) -> str:
        return self.wire or self.name


@dataclass(frozen=True, kw_only=True)
class Technical:
    """What a technical-indicator row adds: how the package recomputes and audits it. The
    local indicator's kernel, inputs, periods' defaults and scale are its row of the
    indicator table (:mod:`marketframe.indicators.registry`)."""

    local: str  # the indicator's name in the table (and its kernel's in marketframe.indicators)
    #: the service's names of the indicator's periods, in the order of its row's (the first
    #: ones: Bollinger's ``period`` is the row's ``n``; the service has no ``mult``)
    params: tuple[str, ...]
    #: bars the service omits at the start of a range (its warm-up), from the parameters
    warmup: Callable[[Mapping[str, Any]], int]
    #: the kernel result's fields in the order of the row's outputs (empty: one array)
    results: tuple[str, ...] = ()

    @property
    def indicator(self) -> registry.Indicator:
        """The local indicator's row."""
        return registry.get(self.local)

    @property
    def defaults(self) -> Mapping[str, int]:
        """Every service parameter of the indicator -> the usual value (its row's default)."""
        pairs = zip(self.params, self.indicator.defaults, strict=False)
        return MappingProxyType({name: int(v) for name, v in pairs})

    def problems(self) -> list[str]:
        """What does not fit the local indicator's row (the endpoint row names them)."""
        if self.local not in registry.names():
            return [f"technical.local {self.local!r} is not an indicator of the table"]
        row = self.indicator
        out = []
        if len(self.params) > len(row.periods):
            out.append(f"technical.params are more than the periods of {self.local}")
        fields = getattr(row.result, "_fields", ())
        if not set(self.results) <= set(fields):
            out.append(f"technical.results are not fields of {self.local}'s result {fields}")
        return out


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    """One REST endpoint, described as data; every rule of its own is a field here."""

    name: str  # dotted name mirroring the SDK: ``stock.intraday.quote``
    path: str  # relative to base_url, with ``{symbol}``-style placeholders
    params: tuple[Param, ...]
    schema: Schema  # the object itself: a misspelt schema fails at import
    freshness: str  # a key of FRESHNESS
    plan: str = "basic"  # basic, developer or advanced (the cheapest plan that has it)
    date_range: tuple[str, str] | None = None  # (from param, to param): under one year
    minute_range: MinuteRange = "checked"
    minute_fields: tuple[str, ...] | None = None  # ``fields`` allowed with minute timeframes
    minute_refused: tuple[str, ...] = ()  # flags that only daily/weekly/monthly bars take
    adjustable: bool = False  # ``adjust=``: prices adjusted locally (docs/adjusted.md)
    #: days after its date during which a row can still change (the store keeps them open)
    refresh_days: int | None = None
    technical: Technical | None = field(default=None, compare=False)  # (holds a dict)
    keys: tuple[str, ...] = ()  # columns identifying a row in a dataset
    # key columns that only tell apart rows of one date (two actions of a symbol on one day):
    # they identify a row but never order one (ties keep the service's order)
    distinct: tuple[str, ...] = ()
    #: one call that answers with rows (docs and the every-endpoint test use it)
    example: Mapping[str, Any] = field(default_factory=dict, compare=False)
    doc: str = ""
    param_map: Mapping[str, Param] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "param_map", MappingProxyType({p.name: p for p in self.params}))
        object.__setattr__(self, "example", MappingProxyType(dict(self.example)))
        self._check()

    def _check(self) -> None:
        """A row that contradicts itself fails at import, naming the row and the field."""
        names = self.param_map
        problems = []
        if not isinstance(self.schema, Schema):
            problems.append(f"schema is a {type(self.schema).__name__}, not a Schema")
        if self.freshness not in FRESHNESS:
            problems.append(f"freshness {self.freshness!r} is not one of {list(FRESHNESS)}")
        if self.plan not in PLANS:
            problems.append(f"plan {self.plan!r} is not one of {list(PLANS)}")
        for what, used in (
            ("date_range", self.date_range or ()),
            ("example", self.example),
            ("minute_refused", self.minute_refused),
            ("technical.params", self.technical.params if self.technical else ()),
        ):
            problems += [f"{what} names {k!r}, not a parameter" for k in used if k not in names]
        if (
            self.minute_range != "checked" or self.minute_fields is not None or self.minute_refused
        ) and "timeframe" not in names:
            problems.append("minute rules without a timeframe parameter")
        if self.technical is not None:
            problems += self.technical.problems()
            if len(self.technical.results or ("",)) != len(self.outputs):
                problems.append(f"technical.results do not match the outputs {self.outputs}")
        holes = re.findall(r"{(\w+)}", self.path)
        if holes != [p.name for p in self.params if p.in_path]:
            problems.append(f"path placeholders {holes} are not its path parameters")
        missing = [k for k in self.keys if k not in self.schema.names]
        if missing:
            problems.append(f"keys {missing} are not columns of its schema")
        if self.minute_fields is not None and not set(self.minute_fields) <= set(
            names["fields"].allowed or () if "fields" in names else ()
        ):
            problems.append("minute_fields are not values of its fields parameter")
        if problems:
            raise DefinitionError(f"endpoint row {self.name!r}: " + "; ".join(problems))

    @property
    def kind(self) -> str:
        """Response kind: ``object`` (one row) or ``rows`` (envelope + ``data`` rows)."""
        return "rows" if self.schema.rows else "object"

    @property
    def multi_param(self) -> str | None:
        """The path parameter that may be a list (one request per value)."""
        return next((p.name for p in self.params if p.in_path), None)

    @property
    def group(self) -> str:
        return self.name.split(".")[0]

    @property
    def short_name(self) -> str:
        """The last part of the name (``sma`` for ``stock.technical.sma``)."""
        return self.name.rsplit(".", 1)[-1]

    @property
    def outputs(self) -> tuple[str, ...]:
        """The value columns of a technical row (all of its float row columns)."""
        return tuple(c.name for c in self.schema.columns if not c.envelope and c.kind == "float")
