"""What the client's requests return (:class:`Fetched`, :class:`ClientStats`) and the steps
of the one request path after the transport: bytes -> table, many outcomes -> one table or
:class:`BatchError`, and adjusted prices fetched through the fan-out.

Imports run one way: the client (:mod:`marketframe.client._client`) imports this module, never
the reverse.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, cast

import orjson
import pyarrow as pa

from marketframe import adjust
from marketframe._http.fanout import Outcome
from marketframe._http.request import Prepared, prepare
from marketframe._http.transport import Response
from marketframe.convert import Parsed, PyRows, build, concat, oldest_first, parse
from marketframe.exceptions import (
    BatchError,
    MarketframeError,
    RepeatedPage,
)

__all__ = [
    "PAGE",
    "ClientStats",
    "Fetched",
    "adjust_prices",
    "convert",
    "convert_many",
    "gather",
    "paged",
    "send_pages",
]

#: rows asked for per page of an endpoint that pages (one with ``offset`` and ``limit``: the
#: service's default page is the latest 50 rows, so without either every page is fetched)
PAGE = 1000


@dataclass
class Fetched:
    """A table, the metadata of the responses it came from (one per symbol) and their
    envelopes (each body's fields other than its ``data`` rows, parsed once)."""

    table: pa.Table
    responses: list[Response]
    envelopes: list[Mapping[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ClientStats:
    """A snapshot of a client's counters (``client.stats()``), and the rate-limit plan as
    the answers' ``X-RateLimit-*`` headers showed it (None until the first answer)."""

    requests: int = 0  # requests sent over the network (retries included)
    cache_hits: int = 0
    retries: int = 0
    paced_seconds: float = 0.0
    statuses: Mapping[int, int] = field(default_factory=dict)  # responses by HTTP status
    rate_limit: int | None = None  # requests a window
    rate_window: float | None = None  # seconds
    rate_remaining: float | None = None  # requests left in the current window

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __getitem__(self, key: str) -> Any:
        """``stats()["requests"]`` (the dict of earlier versions): use ``.requests``."""
        warnings.warn(
            f'client.stats()["{key}"] is deprecated: use client.stats().{key}',
            DeprecationWarning,
            stacklevel=2,
        )
        return self.as_dict()[key]


def convert(prep: Prepared, resp: Response, decode: bool) -> Fetched:
    """The answer's bytes as the endpoint's table, oldest first (the body is parsed once)."""
    return _built(prep, resp, decode, parse(resp.body, prep.ep))


def _built(prep: Prepared, resp: Response, decode: bool, parsed: Parsed) -> Fetched:
    """A parsed answer typed alone, oldest first."""
    table = build(parsed, prep.ep, prep.values, decode=decode)
    return Fetched(oldest_first(prep.ep, prep.values, table), [resp], [parsed.envelope])


def paged(prepared: Prepared) -> bool:
    """A request of a paged endpoint without ``limit=``/``offset=``: its whole day."""
    values, params = prepared.values, prepared.ep.param_map
    if "offset" not in params or "limit" not in params:
        return False
    return values.get("limit") is None and values.get("offset") is None


def send_pages(prepared: Prepared, fetch: Callable[[Prepared], Fetched]) -> Fetched:
    """Every row of a paged endpoint, page after page (each page sent and converted by
    ``fetch``, the one request path), oldest first (``offset`` counts from the oldest row, so
    trades arriving meanwhile only add rows at the end), until a page comes back empty;
    newest first if asked. A page whose rows were all received before (their keys: the
    serials) means the server ignores ``offset``: :class:`RepeatedPage`, not one request
    after another for ever; rows of a page received before are dropped."""
    ep, kind = prepared.ep, prepared.credential
    pages: list[Fetched] = []
    seen: set[tuple[Any, ...]] = set()
    offset = 0
    while True:
        values = {**prepared.values, "limit": PAGE, "offset": offset}
        if "sort" in ep.param_map:
            values["sort"] = "asc"
        got = fetch(prepare(ep, values, credential=kind, refresh=prepared.refresh))
        if got.table.num_rows == 0:
            pages.append(got)
            break
        fresh = _unseen(got.table, ep.keys, seen)
        if not any(fresh):
            rows = sum(f.table.num_rows for f in pages)
            raise RepeatedPage(
                f"the page at offset {offset} holds only rows of the {len(pages)} page(s) "
                f"before it ({rows} rows): paging stopped",
                endpoint=ep.name,
                params={k: v for k, v in values.items() if k in ("symbol", "limit", "offset")},
            )
        offset += got.table.num_rows
        if not all(fresh):
            got = Fetched(got.table.filter(pa.array(fresh)), got.responses, got.envelopes)
        pages.append(got)
    table = concat([f.table for f in pages])
    if prepared.values.get("sort") == "desc":  # as asked: newest first
        table = table.take(pa.array(range(table.num_rows - 1, -1, -1)))
    return Fetched(table, pages[0].responses, pages[0].envelopes)


def _unseen(table: pa.Table, keys: Sequence[str], seen: set[tuple[Any, ...]]) -> list[bool]:
    """For each row of ``table``, whether its ``keys`` (every column without keys) are new;
    the new ones are added to ``seen``."""
    names = [k for k in keys if k in table.column_names] or table.column_names
    fresh = []
    for key in zip(*(table.column(n).to_pylist() for n in names), strict=True):
        fresh.append(key not in seen)
        seen.add(key)
    return fresh


def convert_many(
    prepared: Sequence[Prepared], responses: Sequence[Response], decode: bool
) -> list[Outcome[Fetched]]:
    """Each answer's table (as :func:`convert` gives it) or its conversion error, typed
    together where they can be: answers of one endpoint whose envelopes and parameters agree
    but for the date range (the windows of one symbol) are one conversion of their joined
    rows, cut back into one table per answer. A conversion's fixed cost (a call per column,
    the schema, the metadata) is then paid once, not per window. When a joined conversion
    fails, each answer is converted alone, so the error is the failing answer's own."""
    out: list[Outcome[Fetched] | None] = [None] * len(prepared)
    groups: dict[tuple[Any, ...], list[tuple[int, Parsed]]] = {}
    for i, (prep, resp) in enumerate(zip(prepared, responses, strict=True)):
        try:
            parsed = parse(resp.body, prep.ep)
        except MarketframeError as exc:
            out[i] = Outcome(error=exc)
            continue
        if not prep.ep.schema.rows or type(parsed.rows) is not PyRows:
            out[i] = _convert_one(prep, resp, decode, parsed)
            continue
        shared = {k: v for k, v in prep.values.items() if k not in (prep.ep.date_range or ())}
        key = (
            prep.ep.name,
            orjson.dumps(parsed.envelope, option=orjson.OPT_SORT_KEYS, default=str),
            repr(sorted(shared.items())),
        )
        groups.setdefault(key, []).append((i, parsed))
    for members in groups.values():
        if len(members) == 1:
            i, parsed = members[0]
            out[i] = _convert_one(prepared[i], responses[i], decode, parsed)
            continue
        first = prepared[members[0][0]]
        rows: list[dict[str, Any]] = []
        for _, parsed in members:
            rows += cast(PyRows, parsed.rows).rows
        envelope = members[0][1].envelope
        try:
            table = build(Parsed(envelope, PyRows(rows)), first.ep, first.values, decode=decode)
        except MarketframeError:
            for i, parsed in members:
                out[i] = _convert_one(prepared[i], responses[i], decode, parsed)
            continue
        at = 0
        for i, parsed in members:
            n = len(parsed.rows)
            part = oldest_first(prepared[i].ep, prepared[i].values, table.slice(at, n))
            out[i] = Outcome(Fetched(part, [responses[i]], [parsed.envelope]))
            at += n
    return [o for o in out if o is not None]


def _convert_one(prep: Prepared, resp: Response, decode: bool, parsed: Parsed) -> Outcome[Fetched]:
    try:
        return Outcome(_built(prep, resp, decode, parsed))
    except MarketframeError as exc:
        return Outcome(error=exc)


def gather(
    name: str, prepared: Sequence[Prepared], outcomes: Sequence[Outcome[Fetched]]
) -> Fetched:
    """One table of the outcomes in order, or :class:`BatchError` (keyed by each request's
    target, its symbol) with the table of those that succeeded."""
    tables: list[pa.Table] = []
    responses: list[Response] = []
    envelopes: list[Mapping[str, Any]] = []
    errors: dict[str, BaseException] = {}
    for prep, out in zip(prepared, outcomes, strict=True):
        if out.error is not None:
            errors.setdefault(prep.target, out.error)
        elif out.result is not None and prep.target not in errors:
            tables.append(out.result.table)
            responses += out.result.responses
            envelopes += out.result.envelopes
    if errors:
        raise BatchError(name, concat(tables) if tables else None, errors, len(prepared))
    return Fetched(concat(tables), responses, envelopes)


def adjust_prices(
    prepare: Callable[..., Prepared],
    send_all: Callable[[Sequence[Prepared]], list[Outcome[Fetched]]],
    table: pa.Table,
    mode: str,
    today: dt.date,
    as_of: dt.date | None = None,
) -> pa.Table:
    """``table`` (historical candles) adjusted with the corporate actions from the day after
    its first bar to ``today`` (not after ``as_of`` when given: the actions that had happened
    by then), fetched in one fan-out. A plan without corporate actions raises
    :class:`AdjustmentUnavailable` naming the alternatives."""
    span = adjust.action_span(table, today)
    if as_of is not None and span is not None:
        span = (span[0], min(span[1], as_of)) if span[0] <= as_of else None
    if span is None:
        return table
    capital, dividends, served = adjust.actions_served(prepare, send_all, span[0], span[1], mode)
    end = adjust.happened_by(span[1], served, adjust.bar_days(table).max().astype(dt.date))
    if as_of is not None:  # the actions known on that day, whatever happened since
        end = min(end, as_of)
    return adjust.adjust_table(table, capital, dividends, mode, end)
