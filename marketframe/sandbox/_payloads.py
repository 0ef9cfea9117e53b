"""Wire shapes shared by the REST routes and the streaming channels.

These turn the market's integer-cent arrays into the JSON the real service sends: whole prices
as integers, others with two decimals; epoch-microsecond times; flags only when true.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import TypeVar

import numpy as np

from . import _calendar as cal
from ._instrument import Instrument
from ._intraday import KIND_CLOSE, KIND_CONT, KIND_OPEN, Day
from ._query import Json

_Number = TypeVar("_Number", bound=float | None)


def px(cents: int | float | None) -> int | float | None:
    """Cents -> the service's number: ``180500`` -> ``1805``, ``178434`` -> ``1784.34``."""
    if cents is None:
        return None
    c = int(cents)
    return c // 100 if c % 100 == 0 else c / 100


def num(x: _Number) -> _Number | int:
    """A number as the service writes it: an integral float as an integer (``22530``, not
    ``22530.0``; orjson writes every float with a decimal point)."""
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def pxs(arr: np.ndarray) -> list[int | float]:
    return [c // 100 if c % 100 == 0 else c / 100 for c in arr.tolist()]


def ratio(num_: float, den: float, digits: int = 2) -> float | int:
    return num(round(num_ / den, digits)) if den else 0


def iso_minute(t_us: int) -> str:
    dt = datetime.fromtimestamp(t_us / 1e6, cal.TAIPEI)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}+08:00"


def header(day_or_inst: Day | Instrument, d: date) -> Json:
    inst = day_or_inst.inst if isinstance(day_or_inst, Day) else day_or_inst
    exchange, market = inst.board(d)
    return {
        "date": d.isoformat(),
        "type": inst.type,
        "exchange": exchange,
        "market": market,
        "symbol": inst.symbol,
    }


def limit_flags(day: Day, price: int, bid: int | None, ask: int | None) -> dict[str, bool]:
    out: dict[str, bool] = {}
    if not day.limit_up:
        return out
    if price == day.limit_up:
        out["isLimitUpPrice"] = True
    if price == day.limit_down:
        out["isLimitDownPrice"] = True
    if bid is not None and bid == day.limit_up:
        out["isLimitUpBid"] = True
    if bid is not None and bid == day.limit_down:
        out["isLimitDownBid"] = True
    if ask is not None and ask == day.limit_up:
        out["isLimitUpAsk"] = True
    if ask is not None and ask == day.limit_down:
        out["isLimitDownAsk"] = True
    return out


def trade_flags(day: Day, i: int) -> dict[str, bool]:
    kind = int(day.kind[i])
    bid = int(day.bid[i]) if day.bid[i] >= 0 else None
    ask = int(day.ask[i]) if day.ask[i] >= 0 else None
    flags = limit_flags(day, int(day.price[i]), bid, ask)
    if kind == KIND_CONT:
        flags["isContinuous"] = True
    elif kind == KIND_OPEN:
        flags["isOpen"] = True
    elif kind == KIND_CLOSE:
        flags["isClose"] = True
    return flags


def candles(day: Day, t_us: int, timeframe: int) -> list[Json]:
    """Start-labelled candles of ``timeframe`` minutes from the trades seen by ``t_us``."""
    n = day.visible(t_us)
    if not n:
        return []
    times, prices, sizes = day.time[:n], day.price[:n], day.size[:n]
    t0 = cal.epoch_us(cal.at(day.date, cal.SESSION_OPEN))
    width = timeframe * 60_000_000
    bucket = (times - t0) // width
    starts = np.flatnonzero(np.r_[True, bucket[1:] != bucket[:-1]])
    ends = np.r_[starts[1:], n]
    opens = prices[starts]
    closes = prices[ends - 1]
    highs = np.maximum.reduceat(prices, starts)
    lows = np.minimum.reduceat(prices, starts)
    vols = np.add.reduceat(sizes, starts)
    if day.inst.type == "INDEX":
        cum_avg = np.cumsum(prices)[ends - 1] / ends
    else:
        cum_avg = np.cumsum(prices * sizes)[ends - 1] / np.cumsum(sizes)[ends - 1]
    out = []
    for k, s in enumerate(starts.tolist()):
        out.append(
            {
                "date": iso_minute(t0 + int(bucket[s]) * width),
                "open": px(opens[k]),
                "high": px(highs[k]),
                "low": px(lows[k]),
                "close": px(closes[k]),
                "volume": int(vols[k]),
                "average": num(round(float(cum_avg[k]) / 100, 2)),
            }
        )
    return out


def trade_rows(day: Day, t_us: int, *, trial: bool = False, futopt: bool = False) -> list[Json]:
    """Trades seen by ``t_us``, oldest first (the caller sorts and pages; the rows are shared
    with later calls: never change them). The day's rows are built once per kind, so a page
    of 50 costs a slice, not the ~7,000 rows of a busy stock."""
    if day.inst.type == "INDEX" and not trial:
        return []
    kind = "trial" if trial else "futopt" if futopt else "stock"
    built = day.rows.get(kind)
    if built is None:
        built = day.rows[kind] = _all_trade_rows(day, trial=trial, futopt=futopt)
    if trial:
        return built[: day.visible_trials(t_us)]
    rows = built[: day.visible(t_us)]
    if day.fixed is not None and t_us >= day.fixed[0]:
        ft, fp, fs = day.fixed
        rows.append({"price": px(fp), "size": fs, "time": ft, "serial": 99999999})
    return rows


def _all_trade_rows(day: Day, *, trial: bool, futopt: bool) -> list[Json]:
    if trial:
        return [
            {"price": p, "size": s, "time": t, "serial": sr}
            for p, s, t, sr in zip(
                pxs(day.trial_price),
                day.trial_size.tolist(),
                day.trial_time.tolist(),
                day.trial_serial.tolist(),
                strict=True,
            )
        ]
    cum = np.cumsum(day.size).tolist()
    rows = []
    for b, a, p, s, v, t, sr in zip(
        pxs(day.bid),
        pxs(day.ask),
        pxs(day.price),
        day.size.tolist(),
        cum,
        day.time.tolist(),
        day.serial.tolist(),
        strict=True,
    ):
        if futopt:
            rows.append(
                {"bid": b, "ask": a, "price": p, "size": s, "time": t, "serial": f"{sr:08d}"}
            )
        else:
            rows.append(
                {"bid": b, "ask": a, "price": p, "size": s, "volume": v, "time": t, "serial": sr}
            )
    return rows


def volume_rows(day: Day, t_us: int, *, split: bool = True) -> list[Json]:
    """Price-volume distribution, highest price first."""
    n = day.visible(t_us)
    if not n or day.inst.type == "INDEX":
        return []
    prices, sizes, side = day.price[:n], day.size[:n], day.side[:n]
    levels, inv = np.unique(prices, return_inverse=True)
    vol = np.bincount(inv, weights=sizes).astype(np.int64)
    at_bid = np.bincount(inv, weights=np.where(side < 0, sizes, 0)).astype(np.int64)
    at_ask = np.bincount(inv, weights=np.where(side > 0, sizes, 0)).astype(np.int64)
    out = []
    for k in range(len(levels) - 1, -1, -1):
        row = {"price": px(levels[k]), "volume": int(vol[k])}
        if split:
            row["volumeAtBid"] = int(at_bid[k])
            row["volumeAtAsk"] = int(at_ask[k])
        out.append(row)
    return out
