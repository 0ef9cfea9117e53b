"""The promise of issue 17, end to end: a replayed day plus the next day's open, streamed
through forced drops, malformed frames and a full buffer, recorded to Parquet, equals REST's
trades serial for serial for both days."""

from __future__ import annotations

import datetime as dt
import time
from collections import defaultdict
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import orjson
import pytest

from marketframe import Client
from marketframe.sandbox import Sandbox
from marketframe.stream import read_recorded

from .conftest import NOW

pytestmark = pytest.mark.slow  # end to end: `pytest -m 'not slow'` skips it

#: day 1's replay is over (after-hours fixed-price trading ends at 14:30, Asia/Taipei)
DAY1_OVER_US = int(
    dt.datetime(2026, 11, 20, 14, 31, tzinfo=ZoneInfo("Asia/Taipei")).timestamp() * 1_000_000
)

SYMBOLS = ("2330", "2454")
NEXT_OPEN = "2026-11-23T09:10:00+08:00"  # the next trading day (a Monday), after its open


def keys(rows: list[dict[str, Any]]) -> dict[str, list[tuple[bool, int, float]]]:
    """symbol -> sorted (trial?, serial, price) of recorded rows."""
    out: dict[str, list[tuple[bool, int, float]]] = defaultdict(list)
    for r in rows:
        out[str(r["symbol"])].append((bool(r["is_trial"]), int(r["serial"]), float(r["price"])))
    return {k: sorted(v) for k, v in out.items()}


def rest_keys(client: Client) -> dict[str, list[tuple[bool, int, float]]]:
    """The same for REST's trades of the sandbox's current day (trial matches: isTrial)."""
    out: dict[str, list[tuple[bool, int, float]]] = {}
    for sym in SYMBOLS:
        out[sym] = sorted(
            (trial, r["serial"], float(r["price"]))
            for trial in (False, True)
            for r in orjson.loads(
                client.fetch(
                    "stock.intraday.trades",
                    symbol=sym,
                    limit=100000,
                    refresh=True,
                    **({"isTrial": True} if trial else {}),
                )
                .responses[0]
                .body
            )["data"]
        )
    return out


def test_two_days_through_drops_garbage_and_a_full_buffer_equal_rest(tmp_path: Path) -> None:
    with (
        Sandbox(
            seed=7, now=NOW, rate_limit=None, stream_speed=6000.0, drop_after=150, garbage_every=37
        ) as sb,
        Client(sb.api_key, base_url=sb.base_url, cache=False) as c,
    ):
        day1 = rest_keys(c)
        seen: dict[str, set[int]] = {s: set() for s in SYMBOLS}
        with c.stream(
            backfill=True,
            backoff=0.01,
            max_reconnects=100,
            max_buffer=100,
            batch_rows=50,
            backend="arrow",
        ) as s:
            rec = s.record(tmp_path / "rec", rows_per_file=500)
            # the market clock restarts at 07:30 (0.6 s before the first trial match at
            # 6000x), so the subscription is in place before the day's first trade
            sb.configure(stream_from="07:30")
            s.subscribe("trades", list(SYMBOLS))
            for _ in range(3000):  # a full buffer first: nothing is read until it pauses
                if s.stats.paused:
                    break
                time.sleep(0.01)
            # day 1 until each symbol's after-hours fixed-price trade (the day's last)
            while not all(99999999 in v for v in seen.values()):
                batch = s.next_batch(timeout=60)
                if batch is None:
                    # a drop came after the day's last streamed trade (a client behind a
                    # replay of ~7,000 trades of 2330 reconnects when the market is past
                    # 14:30): the reconnected stream fills that gap from REST while REST
                    # still serves the day, so its fixed-price trade arrives backfilled; no
                    # batch at all is a stream that lost it, which the equality below shows
                    assert sb.streaming.market_now_us() > DAY1_OVER_US, s.stats
                    break
                for sym, serial in zip(
                    batch.table["symbol"].to_pylist(),
                    batch.table["serial"].to_pylist(),
                    strict=True,
                ):
                    seen[sym].add(serial)
            s.wait_backfills()
            # the next trading day opens; the connection drops at its first event of the
            # day (it has sent more than 20), and so does each later one after 20 events
            sb.set_now(NEXT_OPEN)
            sb.configure(stream_from="08:30", drop_after=20)
            day2 = rest_keys(c)
            # day 2's first trades, however long the reconnect takes on a loaded machine
            # (an idle wait of 2 s could end before them: then no day-2 trade, and no gap to
            # fill at close, was ever seen); then until the stream is idle (a gap a later
            # drop leaves open is filled at close)
            while (batch := s.next_batch(timeout=60)) is not None:
                if any(
                    t.date().isoformat() == "2026-11-23" for t in batch.table["time"].to_pylist()
                ):
                    break
            assert batch is not None, f"no trade of 2026-11-23 within 60 s: {s.stats}"
            for _ in s.batches(idle=2.0):
                pass
        stats, gaps = s.stats, list(s.gaps)  # with the gaps closed (and filled) at close()
        recorded = read_recorded(tmp_path / "rec", "trades").to_pylist()
    by_day: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in recorded:
        by_day[r["time"].date().isoformat()].append(r)
    assert sorted(by_day) == ["2026-11-20", "2026-11-23"]
    assert keys(by_day["2026-11-20"]) == day1  # serial for serial, price for price
    assert keys(by_day["2026-11-23"]) == day2
    assert all(len(day1[x]) > 1000 and len(day2[x]) > 50 for x in SYMBOLS)
    assert stats.reconnects >= 3 and stats.paused > 0 and stats.backfilled > 0
    assert stats.malformed > 0 and stats.quarantined > 0  # skipped, never fatal
    assert gaps and all(g.error is None for g in gaps), [g for g in gaps if g.error]
    assert {g.date for g in gaps} == {"2026-11-20", "2026-11-23"}
    # the drop across the day change: the rest of day 1 (nothing after its fixed-price
    # trade) and the start of day 2 (filled from REST) are two gaps
    assert [g for g in gaps if g.date == "2026-11-20" and g.before is None]
    assert sum(g.filled or 0 for g in gaps if g.date == "2026-11-23") > 0
    assert len(rec.files) >= 2 and not list((tmp_path / "rec").rglob("*.tmp"))


def test_a_gap_on_a_day_rest_no_longer_serves_reports_an_error_not_zero(make_sandbox: Any) -> None:
    from marketframe.stream import AsyncStream
    from marketframe.stream._ledger import TradeLedger
    from marketframe.stream._protocol import Subscription

    # the opening trades of 2330 on 2026-11-20 and 2026-11-23 (seed 7); day2's is its 6th
    # trade, so the gap before it holds five
    day1 = {"symbol": "2330", "time": 1795136401249688, "serial": 98575}  # 2026-11-20 09:00
    day2 = {"symbol": "2330", "time": 1795395601695105, "serial": 328247}
    ledger = TradeLedger()
    assert ledger.accept(day1, False) == (True, [])
    ledger.dropped([Subscription("x", "trades", "2330")])
    keep, gaps = ledger.accept(day2, False)
    assert keep and [(g.date, g.after, g.before) for g in gaps] == [
        ("2026-11-20", 98575, None),
        ("2026-11-23", None, 328247),
    ]
    with make_sandbox(now=NEXT_OPEN) as (sb, c):
        import asyncio

        async def fill() -> None:
            s = AsyncStream(sb.api_key, sb.ws_url, rest=c, backfill=True)
            for g in gaps:
                await s._backfill(g)

        asyncio.run(fill())
    old, new = gaps
    assert old.filled is None and "2026-11-23" in (old.error or "")  # not "filled=0"
    assert new.error is None and new.filled and new.filled > 0
