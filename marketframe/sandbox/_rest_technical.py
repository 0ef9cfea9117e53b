"""Stock technical routes (beta): one route per indicator, all answered by one function."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from . import _technical as tech
from ._payloads import num
from ._query import Json, Match, Query
from ._rest_historical import _daily_rows, _minute_rows, _range
from ._service import MINUTE_FRAMES, TIMEFRAMES, Route, Service

#: indicator -> its parameters, in the order the service echoes them
INDICATORS = {
    "sma": ("period",),
    "rsi": ("period",),
    "kdj": ("rPeriod", "kPeriod", "dPeriod"),
    "macd": ("fast", "slow", "signal"),
    "bb": ("period",),
}


def technical(name: str, params: tuple[str, ...], svc: Service, m: Match, q: Query) -> Json:
    """Indicator ``name`` over the candles of the range, warm-up bars omitted."""
    inst = svc.instrument(m["symbol"])
    tf = q.need("timeframe", TIMEFRAMES)
    values = {p: q.whole(p, minimum=1) for p in params}
    if tf in MINUTE_FRAMES:
        start, end = q.need_day("from"), q.need_day("to")
        rows = _minute_rows(svc, inst, int(tf), ("open", "high", "low", "close"))
    else:
        start, end = _range(svc, inst, q, required=True)
        rows = _daily_rows(svc, inst, start, end, tf, ("open", "high", "low", "close"))
    high = np.array([r["high"] for r in rows], dtype=float)
    low = np.array([r["low"] for r in rows], dtype=float)
    close = np.array([r["close"] for r in rows], dtype=float)
    series = tech.compute(name, high, low, close, values)
    data = []
    for k, row in enumerate(rows):
        item = {"date": row["date"]}
        ok = True
        for out_name, arr in series.items():
            v = arr[k]
            if v != v:  # warm-up
                ok = False
                break
            item[out_name] = num(float(v))
        if ok:
            data.append(item)
    out: dict[str, Any] = {
        "symbol": inst.symbol,
        "from": str(start),
        "to": str(end),
        "timeframe": tf,
    }
    out.update(values)
    out["data"] = data
    return out


ROUTES = tuple(
    Route(f"/stock/technical/{name}/{{symbol}}", partial(technical, name, params))
    for name, params in INDICATORS.items()
)
