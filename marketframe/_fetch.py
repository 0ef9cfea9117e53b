"""What the client's requests return (:class:`Fetched`, :class:`ClientStats`) and the steps
of the one request path after the transport: bytes -> table, many outcomes -> one table or
:class:`BatchError`, and adjusted prices fetched through the fan-out.

Imports run one way: :mod:`marketframe.client` imports this module, never the reverse.
"""

from __future__ import annotations

import datetime as dt
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import pyarrow as pa

from marketframe import adjust
from marketframe._http.fanout import Outcome
from marketframe._http.request import Prepared
from marketframe._http.transport import Response
from marketframe.convert import build, concat, oldest_first, parse
from marketframe.exceptions import AdjustmentUnavailable, BatchError, PlanError

__all__ = ["ClientStats", "Fetched", "adjust_prices", "convert", "gather"]


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
    parsed = parse(resp.body, prep.ep)
    table = build(parsed, prep.ep, prep.values, decode=decode)
    return Fetched(oldest_first(prep.ep, prep.values, table), [resp], [parsed.envelope])


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
) -> pa.Table:
    """``table`` (historical candles) adjusted with the corporate actions from the day after
    its first bar to ``today``, fetched in one fan-out. A plan without corporate actions
    raises :class:`AdjustmentUnavailable` naming the alternatives."""
    span = adjust.action_span(table, today)
    if span is None:
        return table
    capital, dividends, served = _actions(prepare, send_all, span[0], span[1], mode)
    end = span[1]
    if served is not None:
        # the service's day (the answers' Date) says which actions have happened: a dividend
        # it still lists as announced (no previous close) has not, whatever this machine's
        # clock says; a day the table has a bar on has happened whatever that day
        end = max(min(end, served), adjust.bar_days(table).max().astype(dt.date))
    return adjust.adjust_table(table, capital, dividends, mode, end)


def fetch_actions(
    prepare: Callable[..., Prepared],
    send_all: Callable[[Sequence[Prepared]], list[Outcome[Fetched]]],
    start: dt.date,
    end: dt.date,
    mode: str,
) -> tuple[pa.Table, pa.Table | None]:
    """The capital changes (and, for ``mode="all"``, the dividends) from ``start`` to
    ``end``, in one fan-out of under-one-year windows. A plan without corporate actions
    raises :class:`AdjustmentUnavailable` naming the alternatives."""
    capital, dividends, _ = _actions(prepare, send_all, start, end, mode)
    return capital, dividends


def _actions(
    prepare: Callable[..., Prepared],
    send_all: Callable[[Sequence[Prepared]], list[Outcome[Fetched]]],
    start: dt.date,
    end: dt.date,
    mode: str,
) -> tuple[pa.Table, pa.Table | None, dt.date | None]:
    """:func:`fetch_actions` and the service's day as its latest answer gave it (``None``
    without a ``Date`` header)."""
    windows = adjust.action_windows(start, end, mode)
    jobs = [prepare(n, start_date=lo, end_date=hi) for n, lo, hi in windows]
    got: dict[str, list[pa.Table]] = {}
    served: list[dt.date] = []
    for (name, _, _), out in zip(windows, send_all(jobs), strict=True):
        if isinstance(out.error, PlanError):
            raise AdjustmentUnavailable(
                out.error.service_message, endpoint=out.error.endpoint, plan=out.error.plan
            ) from None
        if out.error is not None:
            raise out.error
        assert out.result is not None
        got.setdefault(name, []).append(out.result.table)
        served += [r.served for r in out.result.responses if r.served is not None]
    dividends = concat(got[adjust.DIVIDENDS]) if adjust.DIVIDENDS in got else None
    return concat(got[adjust.CAPITAL]), dividends, max(served, default=None)
