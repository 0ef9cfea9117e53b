"""Futures/options streaming over real sockets against the sandbox: v1.0 and v1.1, trial
frames, aliases, the after-hours session, and no lost trade across reconnects."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson
import pandas as pd
import pyarrow.compute as pc
import pytest

from marketframe import Client, InvalidParams, StreamError
from marketframe.sandbox import Sandbox
from marketframe.stream import AsyncStream, Stream, read_recorded, ws_url

# the Saturday after Friday 2026-11-20: its day session and the night session that started
# that evening (15:00 to 05:00) are both complete, on the stream and on REST
NOW = "2026-11-21T06:00:00+08:00"
FRONT = "TXFL6"  # TXF December 2026, the front month on 2026-11-20 (TXF1!)
OPEN = pd.Timestamp("2026-11-20T08:45:00+08:00")
NIGHT_OPEN = pd.Timestamp("2026-11-20T15:00:00+08:00")


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    """The sandbox at :data:`NOW` (conftest's ``client`` is bound to it)."""
    with Sandbox(seed=7, now=NOW, rate_limit=None) as s:
        yield s


def rest(
    client: Client, endpoint: str, symbol: str, after_hours: bool = False, **params: Any
) -> dict[str, Any]:
    if after_hours:
        params["session"] = "afterhours"
    body = (
        client.fetch(f"futopt.intraday.{endpoint}", symbol=symbol, refresh=True, **params)
        .responses[0]
        .body
    )
    return orjson.loads(body)


def rest_trades(client: Client, symbol: str, after_hours: bool = False) -> list[dict[str, Any]]:
    """The contract's REST trades of the session, oldest first."""
    return rest(client, "trades", symbol, after_hours, limit=100_000)["data"][::-1]


def one_channel(
    client: Client, channel: str, symbol: str, version: str, after_hours: bool = False
) -> pd.DataFrame:
    """Everything of one subscription (each connection replays the day from its start)."""
    with client.stream(market="futopt", version=version) as s:
        s.subscribe(channel, symbol, after_hours=after_hours)
        return s.read(channel, idle=1.5)


def test_the_product_and_version_are_chosen_in_the_call(sb: Sandbox, client: Client) -> None:
    base = "https://api.fugle.tw/marketdata/v1.0"
    assert ws_url(base, "futopt") == "wss://api.fugle.tw/marketdata/v1.1/futopt/streaming"
    assert ws_url(base, "futopt", "v1.0").endswith("/marketdata/v1.0/futopt/streaming")
    assert ws_url(base).endswith("/marketdata/v1.0/stock/streaming")
    with pytest.raises(InvalidParams, match="v1.0 only"):
        client.stream(version="v1.1")  # stocks stream on v1.0 only (refused before sending)
    with pytest.raises(InvalidParams, match="v1.0, v1.1"):
        client.stream(market="futopt", version="v2")
    with pytest.raises(InvalidParams, match="stock, futopt"):
        client.stream(market="options")
    with pytest.raises(StreamError, match="404"):  # the server refuses a v1.1 stock stream
        Stream(sb.api_key, sb.ws_url.replace("v1.0", "v1.1")).connect()
    s = client.stream(async_=True, market="futopt")
    assert isinstance(s, AsyncStream) and s.url == sb.futopt_ws_url("v1.1")
    assert s.market == "futopt"
    by_url = client.stream(async_=True, url=sb.futopt_ws_url("v1.0"))
    assert by_url.market == "futopt"  # the product of an explicit URL
    with client.stream(market="futopt") as fs:
        with pytest.raises(InvalidParams, match="futures/options"):
            fs.subscribe("indices", "IX0001")  # no indices channel on futures/options
        with pytest.raises(InvalidParams, match="odd_lot"):
            fs.subscribe("trades", FRONT, odd_lot=True)
    with client.stream() as st, pytest.raises(InvalidParams, match="after_hours"):
        st.subscribe("trades", "2330", after_hours=True)


@pytest.mark.parametrize("version", ["v1.0", "v1.1"])
def test_ping_pong_and_heartbeats_as_for_stocks(sb: Sandbox, client: Client, version: str) -> None:
    sb.configure(heartbeat=0.1)
    try:
        with client.stream(market="futopt", version=version) as s:
            assert s.ping("fo")["state"] == "fo"
            for _ in range(300):  # the server's heartbeats reach the futopt stream
                assert s.next_batch(timeout=0.2) is None  # no subscription: no data
                if s.stats.heartbeats >= 2:
                    break
            assert s.stats.heartbeats >= 2 and s.last_heartbeat is not None
            assert s.stats.reconnects == 0
    finally:
        sb.configure(heartbeat=30.0)


@pytest.mark.parametrize("version", ["v1.0", "v1.1"])
def test_streamed_trades_are_the_rest_trades_and_trials_come_only_on_v11(
    client: Client, version: str
) -> None:
    df = one_channel(client, "trades", FRONT, version)
    regular, trial = df[~df["is_trial"]], df[df["is_trial"]]
    want = rest_trades(client, FRONT)
    assert regular["price"].tolist() == [r["price"] for r in want]
    assert regular["size"].tolist() == [r["size"] for r in want]
    assert [t.value // 1000 for t in regular["time"]] == [r["time"] for r in want]
    assert regular["frame_serial"].tolist() == [int(r["serial"]) for r in want]
    assert (regular["symbol"] == FRONT).all() and (regular["type"] == "FUTURE").all()
    if version == "v1.0":
        assert trial.empty and regular["serial"].isna().all()
        assert regular["is_replaced"].isna().all()
        return
    # v1.1: the per-trade serial is the REST serial string, padding and all
    assert regular["serial"].tolist() == [r["serial"] for r in want]
    assert all(len(s) == 8 for s in regular["serial"])
    assert not regular["is_replaced"].any() and regular["is_replaced"].notna().all()
    assert len(trial) >= 5 and (trial["time"] < OPEN).all() and (regular["time"] >= OPEN).all()
    assert trial["price"].iloc[-1] == want[0]["price"]  # the last trial match is the open
    assert trial["is_replaced"].tolist()[1:] == [True] * (len(trial) - 1)


@pytest.mark.parametrize("version", ["v1.0", "v1.1"])
def test_books_have_trial_frames_and_derived_levels_only_on_v11(
    client: Client, version: str
) -> None:
    df = one_channel(client, "books", FRONT, version)
    trial = df[df["is_trial"]]
    assert df["bid_price_1"].notna().all() and (df["bid_price_1"] < df["ask_price_1"]).all()
    if version == "v1.0":
        assert trial.empty and df["derived_bid_price"].isna().all()
        return
    assert len(trial) >= 5 and (trial["time"] < OPEN).all()
    derived = df[df["derived_bid_price"].notna()]
    assert 0 < len(derived) < len(df)  # only some frames carry the derived level
    assert (derived["derived_bid_price"] == derived["bid_price_1"]).all()


@pytest.mark.parametrize("version", ["v1.0", "v1.1"])
def test_candles_are_the_rest_candles_with_no_trial_candles(client: Client, version: str) -> None:
    df = one_channel(client, "candles", FRONT, version)
    assert (df["date"] >= OPEN).all()
    last = df.groupby("date", sort=True).tail(1)  # the candle as its minute ends
    want = rest(client, "candles", FRONT)["data"]
    assert [d.isoformat() for d in last["date"]] == [
        pd.Timestamp(r["date"]).isoformat() for r in want
    ]
    for col in ("open", "high", "low", "close", "volume", "average"):
        assert last[col].tolist() == [r[col] for r in want], col


@pytest.mark.parametrize("version", ["v1.0", "v1.1"])
def test_aggregates_carry_the_trial_price_on_every_version(client: Client, version: str) -> None:
    df = one_channel(client, "aggregates", FRONT, version)
    trial = df[df["is_trial"]]
    assert len(trial) >= 5 and (trial["last_updated"] < OPEN).all()
    assert (trial["last_price"] == trial["last_trial_price"]).all()
    assert trial["last_trade_price"].isna().all()
    quote = rest(client, "quote", FRONT)
    last = df.iloc[-1]
    assert not last["is_trial"] and last["last_price"] == quote["lastPrice"]
    assert last["total_trade_volume"] == quote["total"]["tradeVolume"]
    assert last["last_trade_serial"] == int(quote["lastTrade"]["serial"])


def test_an_alias_and_its_contract_are_one_subscription(client: Client) -> None:
    with client.stream(market="futopt") as s:
        alias = s.subscribe("trades", "TXF1!")
        contract = s.subscribe("trades", FRONT)
        assert alias[0].id == contract[0].id and alias[0].symbol == "TXF1!"
        assert [x.id for x in s.subscriptions()] == [alias[0].id]
        df = s.read("trades", idle=1.5)
    assert set(df["symbol"]) == {FRONT}  # frames name the resolved contract
    regular = df[~df["is_trial"]]
    assert regular["serial"].is_unique  # one subscription: each trade once
    with client.stream(market="futopt") as s:
        second = s.subscribe("trades", "MXF2!")
        assert second[0].id == s.subscribe("trades", "MXFA7")[0].id
        s.unsubscribe(second[0].id)  # one id: unsubscribing it ends both
        assert s.subscriptions() == [] and s.subscribed == []


def test_an_unknown_contract_or_alias_is_refused_by_name(client: Client) -> None:
    from marketframe import StreamSubscribeError

    with client.stream(market="futopt") as s:
        with pytest.raises(StreamSubscribeError) as info:
            s.subscribe("trades", ["TXF1!", "TXF9!", "TXFZ9", "TXFA7/L6"])
        assert set(info.value.failed) == {"TXF9!", "TXFZ9", "TXFA7/L6"}
        assert [x.symbol for x in info.value.subscribed] == ["TXF1!"]


def test_a_spread_symbol_with_a_slash_streams(client: Client) -> None:
    df = one_channel(client, "trades", "TXFL6/A7", "v1.1")
    regular = df[~df["is_trial"]]
    assert len(regular) > 5 and set(df["symbol"]) == {"TXFL6/A7"}
    # the REST intraday routes serve the same spread, with the same trades (so a gap in a
    # spread's stream is backfilled like a contract's)
    want = rest_trades(client, "TXFL6/A7")
    assert regular["price"].tolist() == [r["price"] for r in want]
    assert regular["frame_serial"].tolist() == [int(r["serial"]) for r in want]


@pytest.mark.parametrize("version", ["v1.0", "v1.1"])
def test_the_after_hours_session(client: Client, version: str) -> None:
    with client.stream(market="futopt", version=version) as s:
        subs = s.subscribe("trades", FRONT, after_hours=True)
        assert subs[0].after_hours and not subs[0].odd_lot
        assert s.subscriptions()[0].after_hours
        batches = list(s.batches(idle=1.5))
    assert batches and all(b.after_hours and b.market == "futopt" for b in batches)
    df = pd.concat([b.to_pandas() for b in batches])
    assert (df["type"] == "FUTURE_AH").all()
    regular, trial = df[~df["is_trial"]], df[df["is_trial"]]
    want = rest_trades(client, FRONT, after_hours=True)
    assert regular["frame_serial"].tolist() == [int(r["serial"]) for r in want]
    assert regular["price"].tolist() == [r["price"] for r in want]
    assert (regular["time"] >= NIGHT_OPEN).all()
    assert regular["time"].max() <= pd.Timestamp("2026-11-21T05:00:00+08:00")
    if version == "v1.1":
        assert len(trial) >= 3 and (trial["time"] < NIGHT_OPEN).all()
        assert (trial["time"] >= pd.Timestamp("2026-11-20T14:50:00+08:00")).all()
    else:
        assert trial.empty


def test_polars_frames_of_the_futopt_stream(client: Client) -> None:
    import polars as pl

    with client.stream(market="futopt", backend="polars") as s:
        s.subscribe("trades", FRONT)
        df = s.read("trades", idle=1.5)
    assert isinstance(df, pl.DataFrame)
    assert df.schema["time"] == pl.Datetime("us", "Asia/Taipei")
    assert df.schema["serial"] == pl.String and df.schema["is_replaced"] == pl.Boolean
    assert df.schema["is_trial"] == pl.Boolean and df.schema["size"] == pl.Int64


@pytest.mark.slow
@pytest.mark.parametrize(
    ("version", "after_hours"), [("v1.0", False), ("v1.1", False), ("v1.1", True)]
)
def test_drops_resubscribe_the_alias_and_backfill_the_session_gap_free(
    make_sandbox: Any, version: str, after_hours: bool, tmp_path: Any
) -> None:
    # the day session: 07:30-13:45 at 3000x lasts ~7.5 s; the night session (15:00 to 05:00
    # the next morning, across midnight): 12:00-05:00 at 6000x lasts ~10 s. The sandbox drops
    # the connection every 120 events and the market clock runs on while the client
    # reconnects (backoff 0.05 s: 75-150 market seconds by day, about 5 trades; 0.3 s: 15-30
    # market minutes at night, about 5-10 trades): trades are missed, then backfilled
    speed, start, backoff = (6000.0, "12:00", 0.3) if after_hours else (3000.0, "07:30", 0.05)
    with make_sandbox(now=NOW, stream_speed=speed, drop_after=120) as (sb, c):
        with c.stream(
            market="futopt",
            version=version,
            backfill=True,
            backoff=backoff,
            max_reconnects=50,
            backend="arrow",
        ) as s:
            # restart the shared market clock well before the session (1.35 s of wall time by
            # day, 1.8 s at night), so the subscription is in place before its first trade
            # even on a busy machine (a subscription never backfills the past)
            sb.configure(stream_from=start)
            s.record(tmp_path)
            s.subscribe("trades", "TXF1!", after_hours=after_hours)
            for _ in s.batches(idle=2.5):
                pass
            assert [x.symbol for x in s.subscribed] == ["TXF1!"]
        # after close(): a gap still open then (the session's last trades fell in a drop) is
        # filled by close() and its rows go to the recorder
        stats, gaps = s.stats, list(s.gaps)
        t = read_recorded(tmp_path, "trades", market="futopt", after_hours=after_hours)
        assert stats.reconnects >= 1
        assert gaps and all(g.error is None for g in gaps), [g for g in gaps if g.error]
        assert all(g.symbol == FRONT and not g.trial and g.after_hours == after_hours for g in gaps)
        assert stats.backfilled > 0 and sum(g.filled or 0 for g in gaps) == stats.backfilled
        regular = t.filter(pc.invert(t["is_trial"]))
        want = rest_trades(c, FRONT, after_hours)
        serials = [
            int(x if x is not None else f)
            for x, f in zip(
                regular["serial"].to_pylist(), regular["frame_serial"].to_pylist(), strict=True
            )
        ]
        assert sorted(serials) == [int(r["serial"]) for r in want]  # complete, no duplicates
        assert pc.any(regular["backfilled"]).as_py()
        if version == "v1.1":  # backfilled rows carry the REST serial string
            assert all(len(x) == 8 for x in regular["serial"].to_pylist())


def test_an_ack_naming_the_resolved_contract_is_still_returned(
    client: Client, scripted: Any
) -> None:
    from .scripted import dumps

    async def resolve(conn: Any, body: dict[str, Any]) -> bool:
        if body.get("event") != "subscribe":
            return False
        assert body["data"] == {"channel": "trades", "symbol": "TXF1!", "afterHours": True}
        await conn.send(
            dumps(
                "subscribed", {"id": "t1", "channel": "trades", "symbol": FRONT, "afterHours": True}
            )
        )
        return True

    scripted.on_request = resolve
    with client.stream(url=scripted.url, market="futopt") as s:
        subs = s.subscribe("trades", "TXF1!", after_hours=True)
    assert [(x.id, x.symbol, x.after_hours) for x in subs] == [("t1", FRONT, True)]


def test_recording_a_futopt_stream(client: Client, tmp_path: Any) -> None:
    with client.stream(market="futopt") as s:
        s.record(tmp_path, rows_per_file=200)
        s.subscribe("trades", FRONT, after_hours=True)
        for _ in s.batches(idle=1.5):
            pass
    table = read_recorded(tmp_path, "trades", market="futopt", after_hours=True)
    assert (
        table.num_rows == len(rest_trades(client, FRONT, True)) + pc.sum(table["is_trial"]).as_py()
    )
    assert set(table["type"].to_pylist()) == {"FUTURE_AH"}
    assert (tmp_path / "futopt_trades_afterhours").is_dir()
    empty = read_recorded(tmp_path, "books", market="futopt")
    assert empty.num_rows == 0 and "derived_bid_price" in empty.column_names
