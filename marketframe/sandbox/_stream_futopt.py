"""The sandbox's futures/options stream (``/{version}/futopt/streaming``): what is subscribed
and what each channel sends, built from the futures/options market of ``_futopt``.

Symbols: a listed contract (``TXFL6``, ``TXO22400L6``), a continuous alias ``TXF1!`` (the
``n``-th nearest month of a futures product: the same subscription as that contract), or a
calendar spread ``TXFL6/A7`` as the REST intraday routes serve it (``_futopt``: the nearest
month against each later one, with the same trades). ``afterHours`` selects the night session
that starts on the replay day (15:00 to 05:00 the next morning, types ``FUTURE_AH`` /
``OPTION_AH``).

Frames (see docs/sandbox.md, "Futures/options streaming", for what had to be guessed): the
regular trades are the REST intraday trades of the same contract and session, one trade per
``trades`` frame whose ``serial`` (a number) is the trade's serial; ``candles`` are the REST
candles as they form; ``aggregates`` is the REST quote at each trade. On ``v1.1`` only, trial
matches (TAIFEX 試撮) before the open are sent on ``trades`` and ``books`` with
``isTrial: true`` at the top of ``data``; per-trade ``time``, ``serial`` (a zero-padded string)
and ``isReplaced`` are added, and some book frames of futures carry ``derivedBid`` /
``derivedAsk``. ``aggregates`` show the trial matches on every version (``lastPrice`` and
``isTrial`` during the trial session), as the real service writes one object for both.
"""

from __future__ import annotations

import re
from datetime import date

import numpy as np

from . import _payloads as wire
from . import _quote
from ._futopt import FutOpt, _otick, with_trials
from ._intraday import Day
from ._query import Json
from ._rest_futopt import quote_at
from ._stream_events import Events, Rng, event_rows, pack

CHANNELS = ("trades", "candles", "books", "aggregates")
VERSIONS = ("v1.0", "v1.1")

_ALIAS = re.compile(r"^([A-Z]{3})([1-3])!$")


def resolve(futopt: FutOpt, symbol: str, d: date, after_hours: bool = False) -> str | None:
    """The contract ``symbol`` names on ``d``: a listed contract or calendar spread (the ones
    the REST intraday routes serve, ``TXFL6/A7``), the contract of a continuous alias (in the
    night session of a settlement day, past the expired month); None otherwise."""
    alias = _ALIAS.match(symbol)
    if alias:
        front = futopt.nth_future(alias[1], d, int(alias[2]), after_hours)
        return None if front is None else front.symbol
    c = futopt.contract(symbol, d)
    return c.symbol if c is not None else None


def day_of(futopt: FutOpt, symbol: str, d: date, after_hours: bool) -> Day | None:
    """The session of a resolved ``symbol`` (see :func:`resolve`) on ``d``."""
    c = futopt.contract(symbol, d)
    return futopt.day(c, d, after_hours) if c is not None else None


def _head(day: Day) -> Json:
    inst = day.inst
    return {"symbol": inst.symbol, "type": inst.type, "exchange": inst.exchange}


def _tick(day: Day, price: int) -> int:
    return _otick(price) if day.inst.type.startswith("OPTION") else 100


def _trades(day: Day, v11: bool) -> list[tuple[int, Json]]:
    rows: list[tuple[int, Json]] = []
    sizes, side = day.size, day.side
    cum = np.cumsum(sizes).tolist()
    at_bid = np.cumsum(np.where(side < 0, sizes, 0)).tolist()
    at_ask = np.cumsum(np.where(side > 0, sizes, 0)).tolist()
    for i, t in enumerate(day.time.tolist()):
        serial = int(day.serial[i])
        trade: Json = {
            "price": wire.px(day.price[i]),
            "size": int(sizes[i]),
            "bid": wire.px(day.bid[i]),
            "ask": wire.px(day.ask[i]),
        }
        if v11:
            trade.update({"time": t, "serial": f"{serial:08d}", "isReplaced": False})
        rows.append(
            (
                t,
                {
                    **_head(day),
                    "trades": [trade],
                    "total": {
                        "tradeVolume": cum[i],
                        "totalBidMatch": at_bid[i],
                        "totalAskMatch": at_ask[i],
                    },
                    "time": t,
                    "serial": serial,
                },
            )
        )
    if v11:
        for j, t in enumerate(day.trial_time.tolist()):
            serial = int(day.trial_serial[j])
            p = int(day.trial_price[j])
            trade = {
                "price": wire.px(p),
                "size": int(day.trial_size[j]),
                "bid": wire.px(p - _tick(day, p)),
                "ask": wire.px(p),
                "time": t,
                "serial": f"{serial:08d}",
                "isReplaced": j > 0,
            }
            rows.append(
                (t, {**_head(day), "trades": [trade], "isTrial": True, "time": t, "serial": serial})
            )
    return rows


def _books(day: Day, rng: Rng, v11: bool) -> list[tuple[int, Json]]:
    rows = []
    for t, row in event_rows("books", day, rng):
        row.pop("market", None)
        if v11:
            i = day.visible(t) - 1
            serial = row["serial"] = int(day.serial[i])
            if day.inst.type.startswith("FUTURE") and serial % 5 == 0 and row["bids"]:
                # the exchange's derived (implied) level, on some frames only
                row["derivedBid"] = {"price": row["bids"][0]["price"], "size": 1 + serial % 3}
                row["derivedAsk"] = {"price": row["asks"][0]["price"], "size": 1 + serial % 2}
        rows.append((t, row))
    if v11:
        for j, t in enumerate(day.trial_time.tolist()):
            p = int(day.trial_price[j])
            step = _tick(day, p)
            g = rng("futopt-trial-book", day.inst.symbol, day.date.toordinal(), j)
            sizes = g.integers(1, 30, 10).tolist()
            rows.append(
                (
                    t,
                    {
                        **_head(day),
                        "isTrial": True,
                        "bids": [
                            {"price": wire.px(p - step * (k + 1)), "size": sizes[k]}
                            for k in range(5)
                        ],
                        "asks": [
                            {"price": wire.px(p + step * k), "size": sizes[5 + k]} for k in range(5)
                        ],
                        "time": t,
                        "serial": int(day.trial_serial[j]),
                    },
                )
            )
    return rows


def build(channel: str, day: Day, version: str, rng: Rng) -> Events:
    """The data events of ``channel`` for one contract's session, in time order."""
    v11 = version == "v1.1"
    day = with_trials(day, rng)
    if channel == "trades":
        rows = _trades(day, v11)
    elif channel == "books":
        rows = _books(day, rng, v11)
    elif channel == "candles":
        rows = event_rows("candles", day, rng)  # no trial candles (see docs/sandbox.md)
        for _, row in rows:
            row.pop("market", None)
    else:  # aggregates: the REST quote at each trade and trial match, on every version
        stamps = sorted(set(day.time.tolist()) | set(day.trial_time.tolist()))
        books = _quote.BookSizes.whole_day(day, rng)
        return pack((t, quote_at(day, t, day.inst.name, rng, books)) for t in stamps)
    return pack(rows)


__all__ = ["CHANNELS", "VERSIONS", "build", "day_of", "resolve", "with_trials"]
