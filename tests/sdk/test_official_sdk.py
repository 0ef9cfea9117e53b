"""The official SDK (``fugle-marketdata`` 2.8.0, a test dependency) against the sandbox.

Every method of its ``RestClient`` is called with realistic parameters, with each credential
kind, and must get a well-formed answer; marketframe's frame for the same call must have the
documented columns and dtypes. Its stock and futures/options ``WebSocketClient`` connect,
authenticate with each kind, subscribe and receive data frames.

The SDK is pointed at the sandbox as at the service: ``base_url`` is the origin and path
prefix without the version (``http://127.0.0.1:PORT/marketdata``); the SDK appends ``/v1.0``
(REST) or the streaming version (``/v1.0`` stock, ``/v1.1`` futopt by default) itself.
"""

from __future__ import annotations

import contextlib
import functools
import socket
import threading
from collections.abc import Iterator
from typing import Any

import orjson
import pyarrow as pa
import pytest
from sandbox.spec_table import ENDPOINTS

from marketframe import Client
from marketframe.endpoints import MINUTE_TIMEFRAMES, get

fugle = pytest.importorskip("fugle_marketdata")  # the `test` extra pins 2.8.0

KINDS = ("api_key", "bearer_token", "sdk_token")
RANGE = {"from_": "2026-09-01", "to": "2026-10-30"}
ACTIONS = {"start_date": "2024-01-01", "end_date": "2024-12-31"}


#: (SDK method path, parameters, marketframe endpoint or None): every RestClient method
REST_CASES = [
    ("stock.intraday.tickers", {"type": "EQUITY"}),
    ("stock.intraday.ticker", {"symbol": "2330"}),
    ("stock.intraday.quote", {"symbol": "2330"}),
    ("stock.intraday.candles", {"symbol": "2330", "timeframe": "5"}),
    ("stock.intraday.trades", {"symbol": "2330", "limit": 50}),
    ("stock.intraday.volumes", {"symbol": "2330"}),
    ("stock.historical.candles", {"symbol": "2330", **RANGE, "timeframe": "D"}),
    ("stock.historical.stats", {"symbol": "2330"}),
    ("stock.snapshot.quotes", {"market": "TSE"}),
    ("stock.snapshot.movers", {"market": "TSE", "direction": "up", "change": "percent"}),
    ("stock.snapshot.actives", {"market": "TSE", "trade": "volume"}),
    ("stock.technical.sma", {"symbol": "2330", **RANGE, "timeframe": "D", "period": 20}),
    ("stock.technical.rsi", {"symbol": "2330", **RANGE, "timeframe": "D", "period": 14}),
    (
        "stock.technical.kdj",
        {"symbol": "2330", **RANGE, "timeframe": "D", "rPeriod": 9, "kPeriod": 3, "dPeriod": 3},
    ),
    (
        "stock.technical.macd",
        {"symbol": "2330", **RANGE, "timeframe": "D", "fast": 12, "slow": 26, "signal": 9},
    ),
    ("stock.technical.bb", {"symbol": "2330", **RANGE, "timeframe": "D", "period": 20}),
    (
        "stock.corporate_actions.capital_changes",
        {"start_date": "2023-01-01", "end_date": "2023-12-31", "sort": "asc"},
    ),
    ("stock.corporate_actions.dividends", ACTIONS),
    ("stock.corporate_actions.listing_applicants", ACTIONS),
    ("stock.ownership.etf_holdings", {"symbol": "0050", **RANGE}),
    ("stock.ownership.institutional_trades", {"symbol": "2330", **RANGE}),
    ("stock.ownership.director_holdings", {"symbol": "2330"}),
    ("stock.ownership.tdcc_distribution", {"symbol": "2330", **RANGE}),
    ("futopt.intraday.products", {"type": "FUTURE", "session": "AFTERHOURS"}),
    ("futopt.intraday.tickers", {"type": "FUTURE", "product": "TXF"}),
    ("futopt.intraday.ticker", {"symbol": "TXFL6"}),
    ("futopt.intraday.quote", {"symbol": "TXFL6/A7"}),  # a spread: the SDK encodes the '/'
    ("futopt.intraday.candles", {"symbol": "TXFL6", "timeframe": "5"}),
    ("futopt.intraday.trades", {"symbol": "MXFL6", "session": "afterhours", "limit": 50}),
    ("futopt.intraday.volumes", {"symbol": "TXFL6"}),
    ("futopt.historical.daily", {"product": "TXF", "date": "2026-11-19"}),
    ("futopt.historical.candles", {"product": "TXF", **RANGE, "timeframe": "D"}),
]


def _sdk_base(sandbox: Any) -> str:
    return sandbox.origin + "/marketdata"  # no version: the SDK appends it


@pytest.fixture(scope="module", params=KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def rest(sandbox: Any, kind: str) -> Any:
    """The SDK's RestClient with the advanced plan's credential of ``kind``."""
    return fugle.RestClient(
        **{kind: sandbox.credentials[kind]["advanced"]}, base_url=_sdk_base(sandbox)
    )


def _call(root: Any, name: str, params: dict[str, Any]) -> Any:
    target = root
    for part in name.split("."):
        target = getattr(target, part)
    return target(**params)


def _check_frame(client: Client, name: str, params: dict[str, Any], answer: dict) -> None:
    """marketframe's frame of the same call: the documented columns and types (Arrow), the
    same time dtypes on pandas and polars (tests/convert/test_frame_conventions.py), and as
    many rows as the SDK's answer has (items of its nested lists, where the frame is long)."""
    ep = get(name)
    table = client.fetch_table(name, **params)
    minute = params.get("timeframe") in MINUTE_TIMEFRAMES
    documented = ep.schema.arrow(minute)
    assert [(f.name, f.type) for f in table.schema] == [(f.name, f.type) for f in documented]
    rows = answer["data"] if isinstance(answer.get("data"), list) else [answer]
    if ep.schema.explode:  # ownership: one row per item of each date's list
        rows = [item for row in rows for item in row[ep.schema.explode]]
    assert table.num_rows == len(rows)
    pandas_frame = client.load(name, backend="pandas", **params)
    polars_frame = client.load(name, backend="polars", **params)
    assert list(pandas_frame.columns) == list(polars_frame.columns) == ep.schema.names
    for f in documented:
        if pa.types.is_timestamp(f.type):
            assert str(pandas_frame[f.name].dtype) == "datetime64[us, Asia/Taipei]"
            assert (
                str(polars_frame.schema[f.name]) == "Datetime(time_unit='us', "
                "time_zone='Asia/Taipei')"
            )
        elif pa.types.is_date32(f.type):
            assert str(pandas_frame[f.name].dtype) == "datetime64[us]"
            assert str(polars_frame.schema[f.name]) == "Date"


@pytest.mark.parametrize(("name", "params"), REST_CASES)
def test_every_rest_method(
    rest: Any, client: Client, kind: str, name: str, params: dict[str, Any]
) -> None:
    answer = _call(rest, name, dict(params))
    assert isinstance(answer, dict)
    data = answer.get("data")
    if data is not None:  # a list endpoint: rows, each an object
        assert isinstance(data, list) and data and all(isinstance(r, dict) for r in data)
    else:  # one object (quote, ticker, stats): about the symbol asked for
        assert answer["symbol"] == params["symbol"]
    if "symbol" in params and "symbol" in answer:
        assert answer["symbol"] == params["symbol"]
    if name in ENDPOINTS:  # the fields the spec marks required, whatever was asked
        assert set(ENDPOINTS[name][2]) <= set(answer), sorted(set(ENDPOINTS[name][2]) - set(answer))
    if kind == "api_key":  # marketframe's side once (it does not depend on the SDK's kind)
        _check_frame(client, name, params, answer)


def test_the_sdk_resolves_the_version_itself(sandbox: Any) -> None:
    rest = fugle.RestClient(api_key=sandbox.api_key, base_url=_sdk_base(sandbox))
    assert rest.stock.base_url == sandbox.base_url + "/stock"
    with pytest.raises(TypeError, match="must not include a version segment"):
        fugle.RestClient(api_key=sandbox.api_key, base_url=sandbox.base_url).stock  # noqa: B018


def test_a_wrong_credential_gets_the_services_401(sandbox: Any, kind: str) -> None:
    rest = fugle.RestClient(**{kind: "not-a-credential"}, base_url=_sdk_base(sandbox))
    with pytest.raises(fugle.FugleAPIError) as info:
        rest.stock.intraday.quote(symbol="2330")
    assert info.value.status_code == 401
    assert orjson.loads(info.value.response_text) == {"statusCode": 401, "message": "Unauthorized"}


# --- WebSocket ----------------------------------------------------------------------------------


class _Inbox:
    """The SDK client's messages, and an event set when a data frame arrives."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.data = threading.Event()

    def __call__(self, raw: str) -> None:
        message = orjson.loads(raw)
        self.messages.append(message)
        if message.get("event") == "data":
            self.data.set()


def _reachable(url: str) -> None:
    """The SDK's ``connect()`` waits forever when the handshake fails (it spins until an
    auth answer that never comes): check the URL answers a WebSocket handshake first."""
    import websocket

    try:
        websocket.create_connection(url, timeout=60).close()
    except (OSError, websocket.WebSocketException) as exc:
        raise AssertionError(f"no WebSocket endpoint at {url}: {exc}") from None


#: the threads the SDK started in the current test (its WebSocket readers)
_READERS: list[threading.Thread] = []


def _daemon_thread(*args: Any, **kwargs: Any) -> threading.Thread:
    thread = threading.Thread(*args, daemon=True, **kwargs)
    _READERS.append(thread)
    return thread


def _shutdown(client: Any) -> None:
    """Shut the SDK client's socket down: its reader thread sees the end of the stream."""
    sock = client._WebSocketClient__ws.sock  # the SDK's websocket.WebSocketApp's socket
    if sock is not None and sock.sock is not None:
        with contextlib.suppress(OSError):
            sock.sock.shutdown(socket.SHUT_RDWR)


def _end(client: Any) -> None:
    """Disconnect without leaving the reader thread behind. ``disconnect()`` alone closes the
    socket while that thread may wait in ``select`` on it, which then never returns
    (websocket-client 1.9): shut the socket down, let the reader end, then disconnect."""
    _shutdown(client)
    for t in _READERS:
        t.join(10)
    client.disconnect()


def _stop_reader(client: Any, *_: Any) -> None:
    """On the reader thread itself (an event listener): stop its loop and shut the socket,
    so that ``connect()`` closing it from the test's thread cannot strand the reader."""
    client._WebSocketClient__ws.keep_running = False
    _shutdown(client)


def _stream(
    sandbox: Any, kind: str, product: str, channel: str, symbol: str, **options: Any
) -> list[dict[str, Any]]:
    ws = fugle.WebSocketClient(
        **{kind: sandbox.credentials[kind]["advanced"]},
        base_url=sandbox.origin.replace("http://", "ws://") + "/marketdata",
        **options,
    )
    client = getattr(ws, product)
    _reachable(client.url)
    inbox = _Inbox()
    client.on("message", inbox)
    client.connect()
    try:
        client.subscribe({"channel": channel, "symbol": symbol})
        assert inbox.data.wait(60), inbox.messages
    finally:
        _end(client)
    return inbox.messages


def test_the_stock_websocket_client(sandbox: Any, kind: str) -> None:
    messages = _stream(sandbox, kind, "stock", "trades", "2330")
    events = [m["event"] for m in messages]
    assert events[0] == "authenticated" and "subscribed" in events
    frame = next(m for m in messages if m["event"] == "data")
    assert frame["channel"] == "trades" and frame["data"]["symbol"] == "2330"


@pytest.mark.parametrize("version", [None, {"futopt": "v1.0"}])  # None: the SDK's v1.1
def test_the_futopt_websocket_client(sandbox: Any, kind: str, version: Any) -> None:
    options = {} if version is None else {"version": version}
    messages = _stream(sandbox, kind, "futopt", "trades", "TXFL6", **options)
    frame = next(m for m in messages if m["event"] == "data")
    assert frame["channel"] == "trades" and frame["data"]["symbol"] == "TXFL6"


def test_a_wrong_websocket_credential_is_refused(sandbox: Any, kind: str) -> None:
    ws = fugle.WebSocketClient(
        **{kind: "not-a-credential"},
        base_url=sandbox.origin.replace("http://", "ws://") + "/marketdata",
    )
    inbox = _Inbox()
    ws.stock.on("message", inbox)
    # the refusal is handled on the SDK's reader thread: end that thread there (connect()
    # then closes the socket from this one)
    ws.stock.on("unauthenticated", functools.partial(_stop_reader, ws.stock))
    with pytest.raises(Exception, match="Invalid authentication credentials"):
        ws.stock.connect()
    ws.stock.disconnect()
    assert inbox.messages[-1] == {
        "event": "error",
        "data": {"message": "Invalid authentication credentials"},
    }  # the real refusal: the SDK matches on data.message, there is no code


@pytest.fixture(autouse=True)
def _no_leftover_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every SDK WebSocket thread ends with its test. (Its threads are made daemons here, so
    that a stuck one could never keep the test process from exiting.)"""
    monkeypatch.setattr("fugle_marketdata.websocket.client.Thread", _daemon_thread)
    _READERS.clear()
    yield
    for t in _READERS:
        t.join(10)
        assert not t.is_alive(), f"the SDK left {t.name} running"
