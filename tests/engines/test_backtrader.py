"""A sandbox store through backtrader: one feed per symbol on its own sessions, and a
buy-and-hold over a universe with a delisted stock sees that stock's feed end."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from marketframe.engines import backtrader_feeds, to_backtrader
from marketframe.exceptions import InvalidParams

from .conftest import DELISTED, LAST_SESSION

bt = pytest.importorskip("backtrader")  # .ci/run installs it (the engines extra)


class BuyAndHold(bt.Strategy):  # type: ignore[misc]
    """Buys 1000 shares of each stock at its first bar; records each feed's last date and
    whether the strategy saw it end before the run did."""

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}
        self.ended: dict[str, bool] = {}

    def _step(self) -> None:
        for d in self.datas:
            if len(d) == 0:
                continue
            if d._name not in self.seen:
                self.buy(data=d, size=1000)
            self.seen[d._name] = d.datetime.date(0)
            self.ended[d._name] = len(d) == d.buflen()

    prenext = _step
    next = _step


def test_a_buy_and_hold_sees_the_delisted_feed_end(raw) -> None:
    cerebro = bt.Cerebro()
    cerebro.broker.setcash(1e8)
    for feed in backtrader_feeds(raw).values():
        cerebro.adddata(feed)
    cerebro.addstrategy(BuyAndHold)
    strat = cerebro.run()[0]
    assert pd.Timestamp(strat.seen[DELISTED]) == LAST_SESSION
    assert pd.Timestamp(strat.seen["2330"]) == raw["date"].max()
    assert all(strat.ended.values())
    # every position is valued at its own last close: the delisted one at 2025-08-29's
    last = raw.sort_values("date").groupby("symbol")["close"].last()
    held = {d._name: strat.getposition(d) for d in strat.datas}
    assert all(p.size == 1000 for p in held.values())
    marked = cerebro.broker.getcash() + sum(1000 * last[s] for s in held)
    assert cerebro.broker.getvalue() == pytest.approx(marked)


def test_one_feed_holds_the_symbols_bars(raw) -> None:
    feed = to_backtrader(raw, DELISTED)
    bars = raw[raw["symbol"] == DELISTED]
    assert list(feed.p.dataname.index) == list(bars["date"])
    assert feed.p.dataname["close"].tolist() == bars["close"].tolist()
    with pytest.raises(InvalidParams, match="not in bars"):
        to_backtrader(raw, "9999")
