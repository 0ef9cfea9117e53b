"""The three credential kinds (issue 13, sdk-parity.md §6): ``api_key`` (``X-API-KEY``),
``bearer_token`` (``Authorization: Bearer``) and ``sdk_token`` (``X-SDK-TOKEN``), exactly one
per client, on REST and in the WebSocket ``auth`` frame; none ever in a log, an exception, a
repr, the HTTP cache or a Parquet file.

The sandbox accepts each plan's credential of each kind only as that kind, so a call that
succeeds proves the credential went out in its own header (or auth field).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import requests

from marketframe import (
    AuthenticationError,
    Client,
    ConfigurationError,
    PlanError,
    StreamAuthError,
)
from marketframe._http.credential import Credential
from marketframe.store import Store

KINDS = ("api_key", "bearer_token", "sdk_token")
ENV = {
    "api_key": "MARKETFRAME_API_KEY",
    "bearer_token": "MARKETFRAME_BEARER_TOKEN",
    "sdk_token": "MARKETFRAME_SDK_TOKEN",
}
HEADER = {"api_key": "X-API-KEY", "bearer_token": "Authorization", "sdk_token": "X-SDK-TOKEN"}
CANDLES = {"symbol": "0050", "from_": "2024-01-01", "to": "2024-03-31", "timeframe": "D"}


@pytest.fixture(autouse=True)
def _no_credential_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV.values():
        monkeypatch.delenv(name, raising=False)


def _client(sandbox: Any, kind: str, plan: str = "advanced", **options: Any) -> Client:
    return Client(
        **{kind: sandbox.credentials[kind][plan]},
        base_url=sandbox.base_url,
        **{"cache": False, **options},
    )


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_loads_with_its_plan(sandbox: Any, kind: str) -> None:
    with _client(sandbox, kind) as c:
        assert c.stock.intraday.quote("2330")["symbol"][0] == "2330"
        assert len(c.stock.snapshot.quotes(market="TSE")) > 0  # the advanced plan's
    with _client(sandbox, kind, "basic") as basic:  # the plan follows the credential
        assert len(basic.stock.historical.candles(**CANDLES)) > 0
        with pytest.raises(PlanError):
            basic.stock.snapshot.quotes(market="TSE")


@pytest.mark.parametrize("kind", KINDS)
def test_the_wire_header_of_each_kind(sandbox: Any, kind: str) -> None:
    """The exact header (checked against the sandbox over a real socket with ``requests``,
    independently of marketframe): the right value in the right header, nothing else."""
    value = sandbox.credentials[kind]["advanced"]
    url = sandbox.base_url + "/stock/intraday/quote/2330"
    wire = f"Bearer {value}" if kind == "bearer_token" else value
    assert requests.get(url, headers={HEADER[kind]: wire}, timeout=30).status_code == 200
    with _client(sandbox, kind) as c:
        assert dict(c._transport.session.headers)[HEADER[kind]] == wire
        assert not {h for h in HEADER.values() if h != HEADER[kind]} & set(
            c._transport.session.headers
        )


@pytest.mark.parametrize("kind", KINDS)
def test_a_value_is_refused_as_another_kind(sandbox: Any, kind: str) -> None:
    """A bearer token sent as an API key (and so on) is a wrong credential: 401, with the
    service's body."""
    other = KINDS[(KINDS.index(kind) + 1) % 3]
    value = sandbox.credentials[other]["advanced"]
    with Client(**{kind: value}, base_url=sandbox.base_url, cache=False) as c:
        with pytest.raises(AuthenticationError) as info:
            c.stock.intraday.quote("2330")
    assert info.value.status == 401 and "): Unauthorized." in str(info.value)
    assert value not in str(info.value) + repr(info.value)


def test_the_sandbox_401_body_and_ambiguous_requests(sandbox: Any) -> None:
    url = sandbox.base_url + "/stock/intraday/quote/2330"
    creds = sandbox.credentials
    wrong = requests.get(url, headers={"Authorization": "Bearer nope"}, timeout=30)
    assert wrong.status_code == 401
    assert wrong.json() == {"statusCode": 401, "message": "Unauthorized"}
    both = {
        "X-API-KEY": creds["api_key"]["advanced"],
        "X-SDK-TOKEN": creds["sdk_token"]["advanced"],
    }
    assert requests.get(url, headers=both, timeout=30).status_code == 401  # several: refused
    basic_scheme = {"Authorization": "Basic " + creds["bearer_token"]["advanced"]}
    assert requests.get(url, headers=basic_scheme, timeout=30).status_code == 401
    lower = {"Authorization": "bearer " + creds["bearer_token"]["advanced"]}
    assert requests.get(url, headers=lower, timeout=30).status_code == 200  # scheme: any case


@pytest.mark.parametrize(
    "given",
    [
        {},
        {"api_key": "a", "bearer_token": "b"},
        {"bearer_token": "b", "sdk_token": "s"},
        {"api_key": "a", "bearer_token": "b", "sdk_token": "s"},
    ],
)
def test_none_or_several_credentials_are_refused_before_any_request(
    sandbox: Any, given: dict[str, str]
) -> None:
    before = sandbox.requests_served
    with pytest.raises(ConfigurationError) as info:
        Client(**given, base_url=sandbox.base_url, cache=False)
    text = str(info.value)
    assert all(k in text for k in KINDS) and all(v in text for v in ENV.values())
    assert "Client.sandbox()" in text
    assert sandbox.requests_served == before


def test_environment_variables_and_their_precedence(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    creds = sandbox.credentials
    for kind in KINDS:  # each variable alone
        monkeypatch.setenv(ENV[kind], creds[kind]["basic"] + "\n")  # a .env line ending
        with Client(base_url=sandbox.base_url, cache=False) as c:
            assert c._transport.credential.kind == kind
            assert len(c.stock.historical.candles(**CANDLES)) > 0
        monkeypatch.delenv(ENV[kind])
    # several variables: refused, naming them (a guess could send the wrong account's)
    monkeypatch.setenv(ENV["api_key"], creds["api_key"]["basic"])
    monkeypatch.setenv(ENV["sdk_token"], creds["sdk_token"]["basic"])
    with pytest.raises(ConfigurationError, match="MARKETFRAME_API_KEY, MARKETFRAME_SDK_TOKEN"):
        Client(base_url=sandbox.base_url, cache=False)
    # an argument wins: the environment is then not read at all
    with Client(
        bearer_token=creds["bearer_token"]["advanced"], base_url=sandbox.base_url, cache=False
    ) as c:
        assert c._transport.credential.kind == "bearer_token"
        assert len(c.stock.snapshot.quotes(market="TSE")) > 0
    # a blank variable counts as unset
    monkeypatch.setenv(ENV["sdk_token"], "  ")
    with Client(base_url=sandbox.base_url, cache=False) as c:
        assert c._transport.credential.kind == "api_key"


def test_an_empty_argument_is_no_credential(sandbox: Any) -> None:
    for kind in KINDS:
        with pytest.raises(ConfigurationError, match=f"{kind} is empty"):
            Client(**{kind: " \n"}, base_url=sandbox.base_url, cache=False)


@pytest.mark.parametrize("kind", KINDS)
def test_a_malformed_token_is_refused_without_showing_it(kind: str) -> None:
    secret = "tok3n-" + "x" * 20
    with pytest.raises(Exception, match="whitespace inside") as info:
        Client(**{kind: secret[:8] + " " + secret[8:]}, base_url="http://127.0.0.1:9", cache=False)
    assert secret[9:] not in str(info.value) + repr(info.value)


def test_a_credential_never_shows_its_secret() -> None:
    c = Credential("bearer_token", "s3cr3t-value-123")
    assert "s3cr3t" not in repr(c) + str(c) + f"{c}" and "bearer_token" in repr(c)
    with Client(sdk_token="s3cr3t-value-123", base_url="http://127.0.0.1:9", cache=False) as cl:
        assert "s3cr3t" not in repr(cl) + repr(cl._transport.credential)


@pytest.mark.parametrize("kind", KINDS)
def test_no_secret_in_debug_logs_or_errors(
    sandbox: Any, kind: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Every log record (marketframe's, requests', urllib3's, at DEBUG) and every error of a
    run with a good and a wrong credential of the kind: the secret appears in none."""
    good = sandbox.credentials[kind]["advanced"]
    wrong = f"wrong-{kind}-0123456789"
    shown: list[str] = []
    with caplog.at_level(logging.DEBUG):
        with _client(sandbox, kind, cache=tmp_path / "c.sqlite") as c:
            c.stock.historical.candles(**CANDLES)
            c.stock.historical.candles(**CANDLES)  # from the cache
            shown.append(repr(c.fetch("stock.intraday.quote", symbol="2330").responses))
            with pytest.raises(Exception) as info:
                c.stock.intraday.quote("2330", limit=1)  # not a parameter: InvalidParams
            shown.append(str(info.value))
        with Client(**{kind: wrong}, base_url=sandbox.base_url, cache=False) as bad:
            with pytest.raises(AuthenticationError) as auth:
                bad.stock.intraday.quote("2330")
            shown += [str(auth.value), repr(auth.value), repr(auth.value.args)]
    text = caplog.text + "\n".join(shown) + "".join(str(r.args) for r in caplog.records)
    assert "GET" in caplog.text  # the transport did log at DEBUG
    assert good not in text and wrong not in text


@pytest.mark.parametrize("kind", ["bearer_token", "sdk_token"])
def test_the_cache_never_crosses_credentials(sandbox: Any, kind: str, tmp_path: Path) -> None:
    """An answer stored for one credential never goes to another: not to the API key of the
    same plan, not to a wrong token, not to a basic token; and no secret is stored."""
    path = tmp_path / "http_cache.sqlite"
    creds = sandbox.credentials
    with _client(sandbox, kind, cache=path) as c:
        c.stock.historical.candles(**CANDLES)  # past days: kept for good
        c.stock.historical.candles(**CANDLES)
        assert c.stats().cache_hits == 1  # the same credential is served from the cache
    with _client(sandbox, "api_key", cache=path) as key:  # same plan, other kind
        key.stock.historical.candles(**CANDLES)
        assert key.stats().cache_hits == 0 and key.stats().requests == 1
    with _client(sandbox, kind, "basic", cache=path) as basic:
        basic.stock.historical.candles(**CANDLES)
        assert basic.stats().cache_hits == 0
    with Client(**{kind: "wrong-token-0123"}, base_url=sandbox.base_url, cache=path) as bad:
        with pytest.raises(AuthenticationError):
            bad.stock.historical.candles(**CANDLES)
        assert bad.stats().cache_hits == 0
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for secret in (
        creds[kind]["advanced"],
        creds[kind]["basic"],
        "wrong-token-0123",
        creds["api_key"]["advanced"],
    ):
        assert secret.encode() not in data


@pytest.mark.parametrize("kind", ["bearer_token", "sdk_token"])
def test_no_secret_in_the_parquet_store(sandbox: Any, kind: str, tmp_path: Path) -> None:
    with _client(sandbox, kind, backend="arrow") as c, Store(tmp_path / "st", client=c) as st:
        st.sync("stock.historical.candles", ["2330"], "2024-01-01", "2024-02-29")
        assert len(st.read("stock.historical.candles", "2330")) > 0
    files = [p for p in (tmp_path / "st").rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files)
    secret = sandbox.credentials[kind]["advanced"].encode()
    assert not [p for p in files if secret in p.read_bytes()]


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_authenticates_the_stream(
    sandbox: Any, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        with _client(sandbox, kind) as c, c.stream(connect_timeout=60, reply_timeout=60) as s:
            s.subscribe("trades", "2330")
            batch = s.next_batch(timeout=60)
            assert batch is not None and batch.channel == "trades" and batch.num_rows > 0
            shown = repr(s) + repr(s.stats) + repr(s.malformed)
    secret = sandbox.credentials[kind]["advanced"]
    assert secret not in caplog.text + shown


@pytest.mark.parametrize("kind", KINDS)
def test_a_wrong_stream_credential_raises_without_showing_it(
    sandbox: Any, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    secret = f"not-a-{kind}-0123456789"
    with (
        caplog.at_level(logging.DEBUG),
        Client(**{kind: secret}, base_url=sandbox.base_url, cache=False) as bad,
    ):
        s = bad.stream(connect_timeout=60, reply_timeout=60)
        with pytest.raises(StreamAuthError) as info:
            s.connect()
    assert "Invalid authentication credentials" in str(info.value)
    assert secret not in str(info.value) + repr(info.value) + repr(s) + caplog.text


@pytest.mark.parametrize(
    ("field", "kind"), [("apikey", "api_key"), ("token", "bearer_token"), ("sdkToken", "sdk_token")]
)
def test_the_sandbox_ws_auth_fields_and_its_refusal(sandbox: Any, field: str, kind: str) -> None:
    """Each field with its own kind's value is accepted; a wrong value (or another kind's)
    gets the real refusal frame (event and data, no code), then the connection is closed."""
    value = sandbox.credentials[kind]["advanced"]
    other = sandbox.credentials[KINDS[(KINDS.index(kind) + 1) % 3]]["advanced"]
    ws_url = sandbox.base_url.replace("http://", "ws://") + "/stock/streaming"

    async def auth(data: dict[str, str]) -> tuple[Any, Any]:
        async with aiohttp.ClientSession() as http, http.ws_connect(ws_url) as ws:
            await ws.send_json({"event": "auth", "data": data})
            reply = await ws.receive_json(timeout=60)
            after = await ws.receive(timeout=60) if reply["event"] == "error" else None
            return reply, after

    ok, _ = asyncio.run(auth({field: value}))
    assert ok == {"event": "authenticated", "data": {"message": "Authenticated successfully"}}
    for data in (
        {field: other},
        {field: "nope"},
        {field: value, "apikey" if field != "apikey" else "token": "x"},
    ):
        refused, after = asyncio.run(auth(data))
        assert refused == {
            "event": "error",
            "data": {"message": "Invalid authentication credentials"},
        }
        assert after.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


def test_commands_use_whichever_credential_variable_is_set(
    sandbox: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``marketframe load/download/store`` reach the service with a bearer or SDK token set in
    the environment, not only with MARKETFRAME_API_KEY."""
    from marketframe.client import connect

    for kind in ("bearer_token", "sdk_token"):
        monkeypatch.setenv(ENV[kind], sandbox.credentials[kind]["basic"])
        with connect(base_url=sandbox.base_url, quiet=True, cache=False) as c:
            assert c._transport.credential.kind == kind
            with pytest.raises(PlanError):  # the basic plan's token, not the sandbox's key
                c.stock.snapshot.quotes(market="TSE")
        monkeypatch.delenv(ENV[kind])


@pytest.mark.parametrize("kind", ["bearer_token", "sdk_token"])
def test_a_stream_made_without_a_client_takes_any_kind(sandbox: Any, kind: str) -> None:
    from marketframe.stream import Stream, ws_url

    url = ws_url(sandbox.base_url)
    with Stream(
        None,
        url,
        **{kind: sandbox.credentials[kind]["advanced"]},
        connect_timeout=60,
        reply_timeout=60,
    ) as s:
        s.subscribe("trades", "2330")
        assert s.next_batch(timeout=60) is not None
    with pytest.raises(ConfigurationError, match="several credentials"):
        Stream("k", url, **{kind: "t"})
