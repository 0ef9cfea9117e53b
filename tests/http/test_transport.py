"""Transport against real sockets: retries, Retry-After, pacing, the cache, and the key's secrecy.

Tests that change faults or limits start their own Sandbox so parallel tests are not disturbed.
"""

from __future__ import annotations

import datetime as dt
import http.server
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from marketframe import (
    AuthenticationError,
    BatchError,
    Client,
    PlanError,
    RateLimited,
    ServerError,
    SymbolNotFound,
    TransportError,
)
from marketframe._http.pacer import Pacer
from marketframe._http.transport import NEVER_EXPIRE, expire_after
from marketframe.endpoints import ENDPOINTS
from marketframe.sandbox import Sandbox

NOW = "2026-11-20T14:00:00+08:00"
WRONG_KEY = "wrong-key-that-must-stay-secret-4f2a"


def _sandbox(**kw: Any) -> Sandbox:
    settings = {
        "seed": 7,
        "now": NOW,
        "rate_limit": 1_000_000,
        "latency": 0.0,
        "fault_rate": 0.0,
        **kw,
    }
    return Sandbox(**settings)


def test_5xx_are_retried_until_success() -> None:
    with (
        _sandbox(fault_rate=0.4) as sb,
        Client(sb.api_key, base_url=sb.base_url, cache=False, backoff=0.01, retries=12) as c,
    ):
        symbols = ["2330", "2317", "2454", "0050", "0056", "2412", "2881", "2882"] * 2
        df = c.stock.intraday.quote(symbol=symbols)
        assert len(df) == len(symbols)
        stats = c.stats()
        assert stats.retries > 0
        assert sum(v for k, v in stats.statuses.items() if k >= 500) == stats.retries
        assert stats.requests == len(symbols) + stats.retries


def test_dropped_connections_are_retried() -> None:
    with (
        _sandbox(reset_rate=0.3) as sb,
        Client(sb.api_key, base_url=sb.base_url, cache=False, backoff=0.01, retries=12) as c,
    ):
        df = c.stock.intraday.volumes(symbol=["2330", "2317", "2454", "0050", "0056", "2412"])
        assert df["symbol"].nunique() == 6
        assert c.stats().retries > 0


def test_persistent_5xx_raise_server_error_after_retries() -> None:
    with (
        _sandbox(fault_rate=1.0) as sb,
        Client(sb.api_key, base_url=sb.base_url, cache=False, backoff=0.01, retries=2) as c,
    ):
        with pytest.raises(ServerError, match="retry later") as info:
            c.stock.intraday.quote(symbol="2330")
        assert info.value.status in (500, 502, 503)
        assert c.stats().requests == 3 and sb.requests_served == 3


def test_429_beyond_max_retry_after_raises_rate_limited_with_retry_after() -> None:
    with (
        _sandbox(rate_limit=3) as sb,
        Client(sb.api_key, base_url=sb.base_url, cache=False, max_retry_after=0.5, pace=False) as c,
    ):
        for _ in range(3):
            c.stock.intraday.quote(symbol="2330")
        with pytest.raises(RateLimited) as info:
            c.stock.intraday.quote(symbol="2330")
        err = info.value
        assert err.status == 429 and 1 <= err.retry_after <= 60
        assert f"retry in {err.retry_after:g} s" in str(err)
        assert sb.requests_served == 4  # the refused request was not hammered


class _RetryAfterOnce(http.server.BaseHTTPRequestHandler):
    """A minimal server answering 429 + Retry-After: 1 once, then the sandbox's payload.

    The sandbox's rate window is a fixed 60 s, so its Retry-After is ~60 s: too long to honour in
    a test. This server only stands in for that one header; the body is a real sandbox payload.
    """

    times: list[float] = []
    body = b""

    def do_GET(self) -> None:  # noqa: N802
        self.times.append(time.monotonic())
        if len(self.times) == 1:
            self.send_response(429)
            self.send_header("Retry-After", "1")
            payload = b'{"statusCode":429,"message":"Rate limit exceeded"}'
        else:
            self.send_response(200)
            payload = self.body
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def retry_after_once(sandbox: Any, api_key: str) -> Iterator[tuple[str, type[_RetryAfterOnce]]]:
    """(base_url, handler class) of a server answering 429 + Retry-After: 1 once."""
    import requests

    body = requests.get(
        f"{sandbox.base_url}/stock/intraday/quote/2330", headers={"X-API-KEY": api_key}, timeout=10
    ).content
    handler = type("H", (_RetryAfterOnce,), {"times": [], "body": body})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/marketdata/v1.0", handler
    server.shutdown()
    server.server_close()


def test_retry_after_is_honoured(retry_after_once: tuple[str, Any], api_key: str) -> None:
    base, handler = retry_after_once
    with Client(api_key, base_url=base, cache=False, backoff=0.01) as c:
        df = c.stock.intraday.quote(symbol="2330")
        assert df["symbol"][0] == "2330"
        assert c.stats().retries == 1 and c.stats().statuses == {429: 1, 200: 1}
    first, second = handler.times
    assert second - first >= 1.0  # waited for Retry-After, not the 10 ms backoff


def test_a_retry_after_past_the_deadline_raises_rate_limited_at_once(
    retry_after_once: tuple[str, Any], api_key: str
) -> None:
    base, handler = retry_after_once
    with Client(api_key, base_url=base, cache=False, deadline=0.5) as c:
        with pytest.raises(RateLimited) as info:
            c.stock.intraday.quote(symbol="2330")
    assert info.value.retry_after == 1
    assert len(handler.times) == 1  # the 1 s wait would end past the 0.5 s deadline


def test_pacer_slows_down_before_the_limit(sandbox: Any, api_key: str) -> None:
    import requests

    with _sandbox(rate_limit=20) as sb:
        pacer = Pacer(reserve=0.1)
        url = f"{sb.base_url}/stock/intraday/quote/2330"
        delays = []
        for _ in range(19):
            resp = requests.get(url, headers={"X-API-KEY": sb.api_key}, timeout=10)
            pacer.update(resp.headers)
            delays.append(pacer.delay())
        assert delays[0] == (0.0, True)  # plenty left: no pacing
        (second_last, counted), (last, counted_too) = delays[-2:]
        assert counted and counted_too  # 2 left, then 1 left: spread over the window
        # at most the window, plus the guard the pacer leaves after a reset (its millisecond
        # rounding and clock drift: 0.002 s + 0.1% of the 60 s window)
        assert 0 < second_last < last <= 60 + 0.002 + 0.06
        resp = requests.get(url, headers={"X-API-KEY": sb.api_key}, timeout=10)
        pacer.update(resp.headers)  # Remaining: 0 -> wait for the reset, then ask again
        reset = int(resp.headers["X-RateLimit-Reset"]) / 1000
        wait, counted = pacer.delay()
        assert not counted and wait == pytest.approx(reset - time.time(), abs=1.0)


class _Clock:
    """The pacer's wall clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def time(self) -> float:
        return self.now


def _headers(limit: int, remaining: int, reset: float) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": str(limit),
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": str(int(reset * 1000)),
    }


def test_a_guessed_window_waits_for_its_answer_and_a_lost_request_stalls_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A window our side opened on a guess (the service opens it at the first request it
    counts, later) is not followed by another until an answer shows where it really ends;
    a request lost without a word holds the rest back for one window at most."""
    import marketframe._http.pacer as pacer_module

    clock = _Clock()
    monkeypatch.setattr(pacer_module, "time", clock)
    pacer = Pacer(reserve=0.1)
    assert pacer.delay() == (0.0, True)  # no headers yet: it goes out
    pacer.update(_headers(4, 1, clock.now + 10))
    assert pacer.delay() == (0.0, True)  # the window's last request
    wait, counted = pacer.delay()  # spent: wait for the reset (and its guard), then ask again
    assert not counted and 10 < wait < 10.1
    clock.now += wait
    assert pacer.delay() == (0.0, True)  # a new window, its end guessed (10 s from now)
    clock.now += 10.1  # the guess ran out and neither request was answered
    wait, counted = pacer.delay()
    assert not counted and 0 < wait < 1  # wait for an answer
    pacer.update(_headers(4, 0, clock.now + 2))  # the window began later: it ends in 2 s
    wait, counted = pacer.delay()
    assert not counted and 2 < wait < 2.1  # until that end
    clock.now += wait
    assert pacer.delay() == (0.0, True)  # guessed again: 10 s
    clock.now += 10.1
    assert not pacer.delay()[1]  # no answer yet (the last request may still be in flight)
    clock.now += 10  # a whole window more: that request is taken as lost
    assert pacer.delay() == (0.0, True)


def test_freshness_per_endpoint() -> None:
    now = dt.datetime(2026, 11, 20, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=8)))
    d = dt.date
    assert expire_after(ENDPOINTS["stock.snapshot.quotes"], {}, now) == 5
    assert expire_after(ENDPOINTS["stock.intraday.quote"], {}, now) == 2
    past = {"from_": d(2024, 1, 1), "to": d(2024, 6, 30), "timeframe": "D"}
    assert expire_after(ENDPOINTS["stock.historical.candles"], past, now) == NEVER_EXPIRE
    today = {"from_": d(2026, 6, 1), "to": d(2026, 11, 20), "timeframe": "D"}
    assert expire_after(ENDPOINTS["stock.historical.candles"], today, now) == 60
    # reference data: until 08:00 of the next trading day (a Friday: Monday's)
    assert expire_after(ENDPOINTS["stock.intraday.ticker"], {}, now) == 66 * 3600


@pytest.mark.parametrize(
    ("now", "until"),
    [
        ("2026-11-19T14:00", "2026-11-20T08:00"),  # a Thursday: Friday's 08:00
        ("2026-11-20T07:00", "2026-11-20T08:00"),  # before a trading day's 08:00: that one
        ("2026-11-20T08:30", "2026-11-23T08:00"),  # after it, before the open: Monday's
        ("2026-11-21T12:00", "2026-11-23T08:00"),  # a Saturday
        ("2026-10-08T14:00", "2026-10-12T08:00"),  # before National Day's long weekend
        ("2027-06-01T14:00", "2027-06-02T08:00"),  # past the calendar's coverage: next day
    ],
)
def test_reference_data_lives_until_the_next_trading_days_8am(now: str, until: str) -> None:
    tz = dt.timezone(dt.timedelta(hours=8))
    at = dt.datetime.fromisoformat(now).replace(tzinfo=tz)
    end = dt.datetime.fromisoformat(until).replace(tzinfo=tz)
    got = expire_after(ENDPOINTS["stock.intraday.ticker"], {}, at)
    assert got == int((end - at).total_seconds())


def _cache_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_cache_serves_repeats_and_never_stores_the_key(
    tmp_path: Path, sandbox: Any, api_key: str
) -> None:
    path = tmp_path / "http_cache.sqlite"
    with Client(api_key, base_url=sandbox.base_url, cache=path) as c:
        args = {"symbol": "0050", "from_": "2024-01-01", "to": "2024-06-30", "timeframe": "D"}
        before = sandbox.requests_served
        a = c.stock.historical.candles(**args)
        b = c.stock.historical.candles(**args)
        assert a.equals(b)
        assert sandbox.requests_served == before + 1
        assert c.stats().cache_hits == 1
        c.stock.historical.candles(**args, refresh=True)  # bypasses the stored answer
        assert sandbox.requests_served == before + 2
        c.stock.snapshot.quotes(market="TSE")
        c.stock.intraday.ticker(symbol="2330")
        expires = {
            r.url.split("/v1.0")[1].split("?")[0]: r.expires
            for r in c._transport.session.cache.responses.values()
        }  # type: ignore[attr-defined]
        for r in c._transport.session.cache.responses.values():  # type: ignore[attr-defined]
            assert r.request.headers.get("X-API-KEY") in (None, "REDACTED")
            assert api_key not in str(r.request.headers)
    assert expires["/stock/historical/candles/0050"] is None  # past days: permanent
    snap = expires["/stock/snapshot/quotes/TSE"]
    assert snap is not None and snap - dt.datetime.now(dt.UTC) <= dt.timedelta(seconds=5)
    data = _cache_bytes(path)
    assert len(data) > 10_000 and b"0050" in data
    assert api_key.encode() not in data


def test_the_key_is_absent_from_logs_and_errors(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    caplog.set_level(logging.DEBUG)
    with _sandbox(fault_rate=0.3) as sb:
        texts: list[str] = []
        with Client(
            WRONG_KEY, base_url=sb.base_url, cache=tmp_path / "c.sqlite", backoff=0.01, retries=10
        ) as c:
            with pytest.raises(AuthenticationError) as auth:
                c.stock.intraday.quote(symbol="2330")
            assert "MARKETFRAME_API_KEY" in str(auth.value)
            texts += [str(auth.value), repr(auth.value), repr(auth.value.args)]
        with Client(
            sb.keys["basic"], base_url=sb.base_url, cache=False, backoff=0.01, retries=10
        ) as c:
            with pytest.raises(PlanError, match="developer or advanced plan") as plan:
                c.stock.snapshot.quotes(market="TSE")
            with pytest.raises(SymbolNotFound, match="'NOPE' is unknown") as missing:
                c.stock.intraday.quote(symbol="NOPE")
            texts += [str(plan.value), str(missing.value)]
            secrets = [sb.keys["basic"], WRONG_KEY]
        with Client(
            WRONG_KEY,
            base_url="http://127.0.0.1:9/marketdata/v1.0",
            cache=False,
            retries=1,
            backoff=0.01,
            timeout=1,
        ) as c:
            with pytest.raises(TransportError, match="check base_url") as down:
                c.stock.intraday.quote(symbol="2330")
            texts += [str(down.value), repr(down.value)]
    assert len(caplog.records) > 3 and "GET http://" in caplog.text
    for secret in secrets:
        assert secret not in caplog.text
        assert all(secret not in t for t in texts)
    assert WRONG_KEY.encode() not in _cache_bytes(tmp_path / "c.sqlite")


@pytest.fixture
def many_symbols_sandbox() -> Iterator[Sandbox]:
    with _sandbox(latency=0.02) as sb:
        yield sb


def test_symbol_lists_run_concurrently_on_one_pool(many_symbols_sandbox: Sandbox) -> None:
    sb = many_symbols_sandbox
    with Client(sb.api_key, base_url=sb.base_url, cache=False, max_workers=8) as c:
        symbols = ["2330", "2317", "2454", "0050", "0056", "2412", "2881", "2882"] * 3
        df = c.stock.intraday.quote(symbol=symbols)
        assert list(df["symbol"]) == symbols  # order of the request is kept
        pool = c._transport.session.adapters["http://"].poolmanager  # type: ignore[attr-defined]
        conns = sum(p.num_connections for p in pool.pools._container.values())
        assert 1 < conns <= 8  # concurrent, and connections are reused, not one per request


def test_bulk_work_is_paced_below_the_limit_instead_of_refused(make_sandbox: Any) -> None:
    """End to end: 8 workers against a limit of 10 requests a half-second window. Paced by
    the X-RateLimit headers, nothing is refused; unpaced, the same work is (the control, with
    a window long enough that a busy machine cannot spread 30 requests over two windows)."""
    symbols = ["2330", "2317", "2454", "0050", "0056", "2412", "2881", "2882", "1301", "2002"] * 3
    with make_sandbox(
        rate_limit=10, rate_window=0.5, client_options={"pace": True, "max_retry_after": 5}
    ) as (sb, c):
        df = c.stock.intraday.ticker(symbol=symbols)
        assert len(df) == len(symbols)
        assert sb.stats.by_status.get(429, 0) == 0, sb.stats.by_status
        assert c.stats().paced_seconds > 0
    with make_sandbox(
        rate_limit=10, rate_window=600, client_options={"pace": False, "max_retry_after": 5}
    ) as (sb, c):
        with pytest.raises(BatchError) as refusal:  # refusals that outlast max_retry_after
            c.stock.intraday.ticker(symbol=symbols)
        assert all(isinstance(e, RateLimited) for e in refusal.value.errors.values())
        assert sb.stats.by_status.get(429, 0) > 0, sb.stats.by_status


def test_more_workers_than_the_limit_wait_for_each_window_to_open(make_sandbox: Any) -> None:
    """16 workers against a limit of 10 a half-second window, once one answer has shown the
    headers: the requests left over in each window wait for its end and ask again, so none
    goes out on a guessed window end. The service opens a window at the first request it
    counts, a little after our side saw the last one end; a request timed by our guess lands
    in the window before, already full."""
    symbols = ["2330", "2317", "2454", "0050", "0056", "2412", "2881", "2882", "1301", "2002"] * 4
    with make_sandbox(
        rate_limit=10, rate_window=0.5, client_options={"max_workers": 16, "max_retry_after": 5}
    ) as (sb, c):
        c.stock.intraday.ticker(symbol="2330")  # the headers: every request after is paced
        sb.stats.by_status.clear()
        df = c.stock.intraday.ticker(symbol=symbols)
        assert len(df) == len(symbols)
        assert sb.stats.by_status == {200: len(symbols)}


class _BrokenRedirects(http.server.BaseHTTPRequestHandler):
    """One symbol's quote answered with a rate-limited 200 (a limit of 3 a 0.3 s window),
    any other with a redirect to a malformed URL: following it raises ``ValueError`` ("Invalid
    IPv6 URL"), neither a connection failure nor a timeout, after the pacer counted the
    request."""

    body = b""

    def do_GET(self) -> None:  # noqa: N802
        if self.path.endswith("/2330"):
            self.send_response(200)
            self.send_header("X-RateLimit-Limit", "3")
            self.send_header("X-RateLimit-Remaining", "2")
            self.send_header("X-RateLimit-Reset", str(int((time.time() + 0.3) * 1000)))
            payload = self.body
        else:
            self.send_response(307)
            self.send_header("Location", "http://[malformed")
            payload = b""
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


def test_requests_failing_with_any_error_leave_the_pacers_budget(
    sandbox: Any, api_key: str
) -> None:
    """A counted request that fails with an error other than a connection failure or a
    timeout is no longer in flight either. Before, each such failure kept one unit of every
    later window's budget; after as many as the limit, no window had room and the next
    request waited for ever."""
    import requests

    body = requests.get(
        f"{sandbox.base_url}/stock/intraday/quote/2330", headers={"X-API-KEY": api_key}, timeout=10
    ).content
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), type("H", (_BrokenRedirects,), {"body": body})
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/marketdata/v1.0"
    # in a process of its own: a request that waits for ever cannot be stopped from here
    # (the client's close would wait for it too), so the test fails on a timeout, not a hang
    script = f"""
import pytest
from marketframe import Client, TransportError
with Client({api_key!r}, base_url={base!r}, cache=False, pace=True, max_workers=1) as c:
    c.stock.intraday.quote(symbol="2330")  # the headers: paced from here on
    for _ in range(4):
        with pytest.raises(TransportError, match="Invalid IPv6 URL"):
            c.stock.intraday.quote(symbol="2317")
    print(c.stock.intraday.quote(symbol="2330")["symbol"].tolist())
"""
    try:
        # a window is 0.3 s: the requests after the failures wait at most a few of them
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
        )
    except subprocess.TimeoutExpired:
        pytest.fail("a request after the failures never went out")
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['2330']"


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8000/marketdata/v1.0",
        "HTTP://LocalHost:8000/Market%7EData/v1.0/",
        "https://api.example.com/x y/marketdata/v1.0",
    ],
)
def test_the_sent_url_is_the_one_requests_would_prepare(base_url: str) -> None:
    """The transport sends the prepared path and query as they are, after the base URL it
    canonicalised once: the same URL ``requests`` builds when it encodes the query and
    re-quotes the whole URL itself (and so the same cache key)."""
    import requests

    from marketframe._http.transport import _canonical

    with Client("k", base_url="http://127.0.0.1:9/marketdata/v1.0", cache=False) as c:
        requests_made = [
            c.prepare("stock.historical.candles", symbol="2330", start="2024-01-01",
                      end="2024-12-31", fields=["open", "close"]),
            c.prepare("futopt.historical.candles", product="TXF", contractMonth="1!",
                      timeframe="5"),
            c.prepare("futopt.intraday.trades", symbol="TXFL6/A7"),
            c.prepare("stock.intraday.tickers", type="EQUITY", exchange="TWSE"),
            c.prepare("stock.intraday.quote", symbol="2330"),
        ]  # fmt: skip
    for prep in requests_made:
        own = requests.PreparedRequest()
        own.prepare(method="GET", url=base_url.rstrip("/") + prep.path, params=prep.query)
        assert _canonical(base_url) + prep.wire == own.url, prep.shown()


class _MovedOnce(http.server.BaseHTTPRequestHandler):
    """Answers every GET with ``307`` to the same path and query on ``target``."""

    target = ""
    seen: list[str] = []

    def do_GET(self) -> None:  # noqa: N802
        self.seen.append(self.path)
        self.send_response(307)
        self.send_header("Location", self.target + self.path.removeprefix("/marketdata/v1.0"))
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("cache", [False, True])
def test_a_redirect_is_followed_with_or_without_the_cache(
    sandbox: Any, api_key: str, cache: bool, tmp_path: Path
) -> None:
    """An uncached client sends below the session's layers; a redirect still goes through the
    session, which follows it as a cached client's does."""
    handler = type("H", (_MovedOnce,), {"target": sandbox.base_url, "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/marketdata/v1.0"
    try:
        with Client(api_key, base_url=base, cache=tmp_path / "c.sqlite" if cache else False) as c:
            df = c.stock.intraday.quote(symbol="2330")
        assert df["symbol"].tolist() == ["2330"]
        # (the uncached path asks the moved URL again through the session, which follows it)
        assert set(handler.seen) == {"/marketdata/v1.0/stock/intraday/quote/2330"}
    finally:
        server.shutdown()
        server.server_close()
