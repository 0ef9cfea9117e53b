"""Wire shapes shared by the REST routes and the streaming channels.

These turn the market's integer-cent arrays into the JSON the real service sends: whole prices
as integers, others with two decimals; epoch-microsecond times; flags only when true.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from . import _calendar as cal
from ._intraday import KIND_CLOSE, KIND_CONT, KIND_OPEN, Day


def px(cents: int | float | None) -> int | float | None:
    """Cents -> the service's number: ``180500`` -> ``1805``, ``178434`` -> ``1784.34``."""
    if cents is None:
        return None
    c = int(cents)
    return c // 100 if c % 100 == 0 else c / 100


def num(x: float | int | None) -> float | int | None:
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


def header(day_or_inst, d) -> dict:
    inst = getattr(day_or_inst, "inst", day_or_inst)
    return {
        "date": d.isoformat(),
        "type": inst.type,
        "exchange": inst.exchange,
        "market": inst.market,
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


def last_update(day: Day, n: int, t_us: int) -> tuple[int, int] | None:
    """(serial, time) of the latest update of the instrument at ``t_us``, ``n`` trades seen:
    its last trade or a later book update (the books move between trades)."""
    if not n:
        return None
    serial, time_ = int(day.serial[n - 1]), int(day.time[n - 1])
    nb = day.visible_books(t_us) if len(day.book_time) else 0
    if nb and int(day.book_serial[nb - 1]) > serial:
        serial, time_ = int(day.book_serial[nb - 1]), int(day.book_time[nb - 1])
    return serial, time_


def book(day: Day, n: int, seed_rng, serial: int | None = None) -> tuple[list[dict], list[dict]]:
    """Best five bid and ask levels after the ``n``-th trade (as of the update ``serial``,
    the last trade's by default: the sizes move at every update)."""
    if day.inst.type == "INDEX" or n == 0:
        return [], []
    last = n - 1
    bid, ask = int(day.bid[last]), int(day.ask[last])
    if serial is None:
        serial = int(day.serial[last])
    rng = seed_rng(day.inst.symbol, day.date.toordinal(), serial)
    sizes = rng.integers(1, max(2, int(day.mean_size * 4)), 10).tolist()
    bids, asks = [], []
    # locked at a limit: orders queue on the limit side, nothing is offered beyond it
    locked_up = day.limit_up and bid == ask == day.limit_up
    locked_down = day.limit_down and bid == ask == day.limit_down
    p = bid
    for k in range(0 if locked_down else 5):
        if day.limit_down and p < day.limit_down:
            break
        bids.append({"price": px(p), "size": sizes[k] * (20 if locked_up and k == 0 else 1)})
        p = cal.price_below(p, day.etf)
    p = ask
    for k in range(0 if locked_up else 5):
        if day.limit_up and p > day.limit_up:
            break
        asks.append({"price": px(p), "size": sizes[5 + k] * (20 if locked_down and k == 0 else 1)})
        p = cal.price_above(p, day.etf)
    return bids, asks


def quote(day: Day, t_us: int, name: str, seed_rng, *, oddlot: bool = False) -> dict:
    """The stock quote (REST ``intraday/quote`` and the ``aggregates`` channel) at ``t_us``."""
    inst = day.inst
    n = day.visible(t_us)
    nt = day.visible_trials(t_us)
    out: dict = header(day, day.date)
    out["name"] = name
    out["referencePrice"] = px(day.reference)
    out["previousClose"] = px(day.previous_close)
    last_time = None
    run = day.running
    j = n - 1  # the last trade (read once: a stream channel builds a quote per trade)
    close = traded = value = volume = 0
    if n:
        times = day.time
        hi, lo = int(run.high[j]), int(run.low[j])
        close, traded = int(day.price[j]), int(times[j])
        value = day.value(n)
        volume = int(run.volume[j])
        out.update(
            {
                "openPrice": px(day.price[0]),
                "openTime": int(times[0]),
                "highPrice": px(hi),
                "highTime": int(times[run.high_at[j]]),
                "lowPrice": px(lo),
                "lowTime": int(times[run.low_at[j]]),
                "closePrice": px(close),
                "closeTime": traded,
            }
        )
        if inst.type == "INDEX":
            out["avgPrice"] = px(round(float(run.price_sum[j]) / n))
        else:
            unit = day.unit_value / 100
            out["avgPrice"] = num(round(value / (volume * unit) / 100, 2)) if volume else None
        out["change"] = px(close - day.reference)
        out["changePercent"] = ratio((close - day.reference) * 100, day.reference)
        out["amplitude"] = ratio((hi - lo) * 100, day.reference)
        last_time = traded
    last_is_trial = nt and (not n or int(day.trial_time[nt - 1]) > traded)
    if last_is_trial:
        out["lastPrice"] = px(day.trial_price[nt - 1])
        out["lastSize"] = int(day.trial_size[nt - 1])
        last_time = int(day.trial_time[nt - 1])
    elif n:
        out["lastPrice"] = px(close)
        if inst.type != "INDEX":
            out["lastSize"] = int(day.size[j])
    update = last_update(day, n, t_us) if inst.type != "INDEX" else None
    if inst.type != "INDEX":
        bids, asks = book(day, n, seed_rng, update[0] if update else None)
        out["bids"], out["asks"] = bids, asks
    if n:
        total = {"tradeValue": value}
        if inst.type != "INDEX":  # an index has turnover, not a traded volume
            total["tradeVolume"] = volume
            total["tradeVolumeAtBid"] = int(run.at_bid[j])
            total["tradeVolumeAtAsk"] = int(run.at_ask[j])
        total["transaction"] = n
        total["time"] = traded
        out["total"] = total
        if inst.type != "INDEX":
            out["lastTrade"] = {
                "bid": px(day.bid[j]),
                "ask": px(day.ask[j]),
                "price": px(close),
                "size": int(day.size[j]),
                "time": traded,
                "serial": int(day.serial[j]),
            }
    if nt:
        k = nt - 1
        tp = int(day.trial_price[k])
        out["lastTrial"] = {
            "bid": px(cal.price_below(tp, day.etf)),
            "ask": px(tp),
            "price": px(tp),
            "size": int(day.trial_size[k]),
            "time": int(day.trial_time[k]),
            "serial": int(day.trial_serial[k]),
        }
    flags: dict[str, bool] = {}
    if n and inst.type != "INDEX":
        bids, asks = out.get("bids") or [], out.get("asks") or []
        b = int(round(bids[0]["price"] * 100)) if bids else None
        a = int(round(asks[0]["price"] * 100)) if asks else None
        flags.update(limit_flags(day, close, b, a))
    closed = n == len(day.time) and n > 0
    kind = int(day.kind[j]) if n and not closed else None
    # the flags describe the last trade (the real mid-session quote has isContinuous alone,
    # samples/stock_intraday_quote_20260916.json; after the close isClose alone)
    if last_is_trial:
        flags["isTrial"] = True
    elif kind == KIND_CONT:
        flags["isContinuous"] = True
    elif kind == KIND_OPEN:
        flags["isOpen"] = True
    if closed:
        flags["isClose"] = True
    out.update(flags)
    if update is not None and not last_is_trial:
        out["serial"], last_time = update
    elif n and inst.type != "INDEX":
        out["serial"] = int(day.serial[n - 1])
    if last_time is not None:
        out["lastUpdated"] = last_time
    return out


def candles(day: Day, t_us: int, timeframe: int) -> list[dict]:
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


def trade_rows(day: Day, t_us: int, *, trial: bool = False, futopt: bool = False) -> list[dict]:
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


def _all_trade_rows(day: Day, *, trial: bool, futopt: bool) -> list[dict]:
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


def volume_rows(day: Day, t_us: int, *, split: bool = True) -> list[dict]:
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
