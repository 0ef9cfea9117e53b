"""Cross-check the service's beta technical indicators against local recomputation.

The service publishes no conventions for SMA, RSI, KDJ, MACD and Bollinger bands
(``spec/wire-facts.md``). ``crosscheck`` fetches the service's series and the candles it was
computed from, recomputes the indicator locally under every known convention
(``marketframe.indicators.variants``) and two warm-up alignments, and reports which
convention reproduces the service, how closely, and, when none does, where they part.

Alignments: ``range`` computes over the candles of the requested range only; ``warmup``
prepends up to a year of earlier candles (a service that warms its series up before ``from``
matches this one). Agreement means ``max |local - service| / scale <= tolerance`` on every
date the service returned, with ``scale`` = 100 for the bounded oscillators (RSI, KDJ) and
the mean absolute close for indicators in price units (SMA, MACD, Bollinger).
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from marketframe import indicators as ind
from marketframe._time import one_year_after, one_year_before
from marketframe.endpoints import ENDPOINTS, in_order, to_date
from marketframe.exceptions import NotCheckable

if TYPE_CHECKING:
    from marketframe.client import Client

TOLERANCE = 1e-9


@dataclass(frozen=True)
class _Spec:
    """An indicator as the cross-check sees it: its endpoint row, and through ``row`` its
    local indicator's row (``marketframe.indicators.registry``: kernel, inputs, scale)."""

    endpoint: str
    local: str  # name in the indicator table
    params: dict[str, int]  # service parameter -> default
    outputs: tuple[str, ...]  # service output columns (snake_case, as the loaders name them)
    results: tuple[str, ...]  # the kernel result's fields, in the order of ``outputs``

    @property
    def row(self) -> ind.Indicator:
        return ind.registry.get(self.local)


#: every technical row of ENDPOINTS, by its short name (``sma``)
SPECS: dict[str, _Spec] = {
    ep.short_name: _Spec(ep.name, t.local, dict(t.defaults), ep.outputs, t.results)
    for ep in ENDPOINTS.values()
    if (t := ep.technical) is not None
}
ALIASES = {"bbands": "bb", "bollinger": "bb"}
INDICATOR_NAMES = tuple(SPECS)


def _local(
    spec: _Spec, prices: dict[str, np.ndarray], params: dict[str, int], convention: Any
) -> dict[str, np.ndarray]:
    """The indicator recomputed locally, keyed by the service's output column names: the
    row's kernel on its price inputs and parameters (in the row's order)."""
    row = spec.row
    got = row.kernel(
        *(prices[k] for k in row.inputs), *(params[p] for p in spec.params), convention=convention
    )
    if not isinstance(got, tuple):  # one array
        return {spec.outputs[0]: got}
    return {out: getattr(got, f) for out, f in zip(spec.outputs, spec.results, strict=True)}


@dataclass(frozen=True)
class VariantResult:
    """How one (convention, alignment) compares with the service."""

    convention: str
    alignment: str
    compared: int  # service values compared
    missing: int  # service values where the local series is still warming up (NaN)
    max_abs: float
    max_rel: float  # max |diff| / scale
    first_divergence: dt.date | dt.datetime | None
    matches: bool


@dataclass
class CrosscheckReport:
    """The outcome of :func:`crosscheck` (print it, or look at ``frame`` and ``plot()``)."""

    symbol: str
    indicator: str
    timeframe: str
    start: dt.date
    end: dt.date
    params: dict[str, int]
    tolerance: float
    scale: float
    results: list[VariantResult]
    frame: pd.DataFrame  # date, service_<out>, local_<out>, diff_<out> (best variant)
    _series: dict[tuple[str, str], dict[str, np.ndarray]] = field(repr=False, default_factory=dict)

    @property
    def matched(self) -> list[VariantResult]:
        return [r for r in self.results if r.matches]

    @property
    def best(self) -> VariantResult:
        """The first matching result (variants in their listed order), else the closest."""
        if self.matched:
            return self.matched[0]
        return min(self.results, key=lambda r: (r.missing, r.max_rel))

    @property
    def convention(self) -> str | None:
        """The name of the convention that reproduces the service, or None."""
        return self.best.convention if self.matched else None

    @property
    def conventions(self) -> dict[str, str]:
        """``{indicator: convention}`` found to reproduce the service ({} if none did), for
        ``marketframe.options.conventions.update(report.conventions)``."""
        found = self.convention
        return {SPECS[self.indicator].local: found} if found is not None else {}

    def summary(self) -> str:
        head = (
            f"{self.indicator.upper()}{tuple(self.params.values())} {self.symbol} "
            f"{self.timeframe} {self.start}..{self.end}"
        )
        b = self.best
        if self.matched:
            names = sorted(
                {r.convention for r in self.matched}, key=[r.convention for r in self.results].index
            )
            same = (
                f" (indistinguishable on this data: {', '.join(names)})" if len(names) > 1 else ""
            )
            return (
                f"{head}: matches convention '{b.convention}' with alignment "
                f"'{b.alignment}' over {b.compared} values; max abs diff {b.max_abs:.3g}, "
                f"max rel diff {b.max_rel:.3g} <= {self.tolerance:g}{same}"
            )
        return (
            f"{head}: NO known convention matches; closest '{b.convention}' "
            f"({b.alignment}): max rel diff {b.max_rel:.3g}, first divergence on "
            f"{b.first_divergence}"
        )

    def table(self) -> pd.DataFrame:
        """One row per (convention, alignment) with its differences."""
        return pd.DataFrame([r.__dict__ for r in self.results])

    def __str__(self) -> str:
        return self.summary()

    def plot(self, convention: str | None = None, alignment: str | None = None) -> Any:
        """A chart of the service's values against local ones, with their difference."""
        from marketframe.plot import pyplot

        plt = pyplot()
        b = self.best
        key = (convention or b.convention, alignment or b.alignment)
        local = self._series[key]
        dates = self.frame["date"]
        fig, (top, bottom) = plt.subplots(
            2, 1, sharex=True, figsize=(9, 5), gridspec_kw={"height_ratios": [3, 1.4]}
        )
        for out in SPECS[self.indicator].outputs:
            (line,) = top.plot(
                dates, self.frame[f"service_{out}"], linewidth=1.2, label=f"service {out}"
            )
            top.plot(
                dates,
                local[out],
                linestyle="--",
                linewidth=1.0,
                color=line.get_color(),
                label=f"local {out}",
            )
            diff = np.abs(local[out] - self.frame[f"service_{out}"].to_numpy(float))
            bottom.plot(dates, np.maximum(diff, 1e-18), linewidth=1.0, label=out)
        top.set_title(
            f"{self.indicator.upper()} {self.symbol}: service vs local ('{key[0]}', {key[1]})"
        )
        top.legend(fontsize=7, ncol=2)
        bottom.set_yscale("log")
        bottom.axhline(self.tolerance * self.scale, color="0.5", linestyle=":", label="tolerance")
        bottom.set_ylabel("|local - service|", fontsize=8)
        bottom.legend(fontsize=7, ncol=4)
        fig.autofmt_xdate()
        fig.tight_layout()
        return fig


def default_start(end: dt.date, timeframe: str) -> dt.date:
    """The default first date: ~6 months of daily bars; for weekly and monthly bars the longest
    range the service accepts (under a year), so the slower indicators have values."""
    if timeframe in ("W", "M"):
        return one_year_before(end)
    return end - dt.timedelta(days=182)


def _check_range(start: dt.date, end: dt.date) -> None:
    """The service's technical endpoints take ranges under one year; say so before asking."""
    from marketframe.exceptions import InvalidParams

    in_order("crosscheck", start, end)
    if end >= one_year_after(start):
        raise InvalidParams(
            "crosscheck",
            "end",
            f"({end}) makes a range of a year or more from start ({start})",
            "ranges under one year: end <= "
            f"{one_year_after(start) - dt.timedelta(days=1)}, or start >= "
            f"{one_year_before(end)}",
        )


def _candles(
    client: Any, symbol: str, start: dt.date | None, end: dt.date | None, timeframe: str
) -> pd.DataFrame:
    kw: dict[str, Any] = {
        "symbol": symbol,
        "timeframe": timeframe,
        "sort": "asc",
        "fields": ["open", "high", "low", "close", "volume"],
    }
    if start is not None:
        kw.update(from_=start, to=end)
    table = client.fetch_table("stock.historical.candles", **kw)
    df: pd.DataFrame = table.to_pandas()
    return df.sort_values("date").reset_index(drop=True)


def _key(values: Iterable[Any]) -> list[str]:
    return [str(v) for v in values]


def check_tolerance(tolerance: Any) -> float:
    """``tolerance`` as a float, or :class:`~marketframe.InvalidParams`: a finite number > 0
    (NaN compares false, so every difference would "agree"; a negative one agrees with none)."""
    ok = (
        isinstance(tolerance, int | float)
        and not isinstance(tolerance, bool)
        and math.isfinite(tolerance)
        and tolerance > 0
    )
    if not ok:
        from marketframe.exceptions import InvalidParams

        raise InvalidParams(
            "crosscheck", "tolerance", f"has value {tolerance!r}", "a finite number > 0"
        )
    return float(tolerance)


def crosscheck(
    client: Client[Any],
    symbol: str,
    indicator: str,
    start: str | dt.date | None = None,
    end: str | dt.date | None = None,
    timeframe: str = "D",
    *,
    tolerance: float = TOLERANCE,
    **params: int,
) -> CrosscheckReport:
    """Compare the service's ``indicator`` for ``symbol`` with local recomputations.

    ``indicator`` is one of ``sma``, ``rsi``, ``kdj``, ``macd``, ``bb`` (``bbands``);
    ``params`` are the service's parameter names (``period``; ``rPeriod``, ``kPeriod``,
    ``dPeriod``; ``fast``, ``slow``, ``signal``), defaulting to the usual ones. ``end`` defaults
    to today and ``start`` to about 6 months earlier for daily candles, to the longest range the
    service allows (just under a year) for W and M; minute timeframes use the service's latest
    30 days. Raises :class:`NotCheckable` when the service has no value in the range.
    """
    name = ALIASES.get(indicator, indicator)
    if name not in SPECS:
        from marketframe.exceptions import InvalidParams

        raise InvalidParams(
            "crosscheck", "indicator", f"is {indicator!r}", ", ".join(INDICATOR_NAMES)
        )
    spec = SPECS[name]
    unknown = set(params) - set(spec.params)
    if unknown:
        from marketframe.exceptions import InvalidParams

        raise InvalidParams(
            "crosscheck",
            sorted(unknown)[0],
            f"is not a parameter of {name}",
            ", ".join(spec.params),
        )
    check_tolerance(tolerance)
    values = {**spec.params, **params}
    end_d = to_date("crosscheck", "end", end) if end is not None else dt.date.today()
    start_d = (
        to_date("crosscheck", "start", start)
        if start is not None
        else default_start(end_d, timeframe)
    )
    _check_range(start_d, end_d)
    minute = timeframe not in ("D", "W", "M")
    service = client.fetch_table(
        spec.endpoint, symbol=symbol, from_=start_d, to=end_d, timeframe=timeframe, **values
    ).to_pandas()
    service = service.sort_values("date").reset_index(drop=True)
    if service.empty:
        raise NotCheckable(
            f"the service returned no {name} values for {symbol} {start_d}..{end_d} ({timeframe})"
        )
    base = _candles(client, symbol, None if minute else start_d, end_d, timeframe)
    alignments: dict[str, pd.DataFrame] = {"range": base}
    if not minute:
        earlier_end = start_d - dt.timedelta(days=1)
        earlier = _candles(client, symbol, one_year_before(start_d), earlier_end, timeframe)
        if not earlier.empty:
            alignments["warmup"] = pd.concat([earlier, base], ignore_index=True)
    close_scale = float(np.nanmean(np.abs(base["close"].to_numpy(float)))) if len(base) else 1
    scale = 100.0 if spec.row.bounded else max(close_scale, 1e-12)
    wanted = _key(service["date"])
    results: list[VariantResult] = []
    series: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for align, candles in alignments.items():
        pos = {k: i for i, k in enumerate(_key(candles["date"]))}
        idx = np.array([pos.get(k, -1) for k in wanted])
        prices = {k: candles[k].to_numpy(float) for k in spec.row.inputs}
        for conv in ind.variants(spec.local):
            local = _local(spec, prices, values, conv)
            picked = {
                out: np.where(idx >= 0, arr[np.maximum(idx, 0)], np.nan)
                for out, arr in local.items()
            }
            series[(conv, align)] = picked
            results.append(_compare(conv, align, service, picked, spec.outputs, scale, tolerance))
    report = CrosscheckReport(
        symbol,
        name,
        timeframe,
        start_d,
        end_d,
        values,
        tolerance,
        scale,
        results,
        pd.DataFrame(),
        series,
    )
    best = report.best
    frame = pd.DataFrame({"date": service["date"]})
    local = series[(best.convention, best.alignment)]
    for out in spec.outputs:
        frame[f"service_{out}"] = service[out].to_numpy(float)
        frame[f"local_{out}"] = local[out]
        frame[f"diff_{out}"] = local[out] - frame[f"service_{out}"]
    report.frame = frame
    return report


def _compare(
    conv: str,
    align: str,
    service: pd.DataFrame,
    local: dict[str, np.ndarray],
    outputs: Sequence[str],
    scale: float,
    tolerance: float,
) -> VariantResult:
    worst = np.zeros(len(service))
    missing = np.zeros(len(service), dtype=bool)
    for out in outputs:
        svc = service[out].to_numpy(float)
        diff = np.abs(local[out] - svc)
        missing |= np.isnan(local[out]) & ~np.isnan(svc)
        worst = np.fmax(worst, diff)
    bad = missing | (worst / scale > tolerance)
    first = service["date"].iloc[int(np.argmax(bad))] if bad.any() else None
    finite = worst[~missing]
    max_abs = float(finite.max()) if finite.size else math.inf
    return VariantResult(
        conv,
        align,
        int((~missing).sum()),
        int(missing.sum()),
        max_abs,
        max_abs / scale,
        first,
        not bad.any(),
    )
