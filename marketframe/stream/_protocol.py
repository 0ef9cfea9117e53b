"""The streaming wire protocol (``spec/streaming-api.md``): URLs, requests, replies.

Pure functions, no I/O: the async client sends what these build and classifies what it reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import orjson

from marketframe._http.credential import Credential
from marketframe.exceptions import InvalidParams

from ._frames import CHANNELS, FUTOPT_CHANNELS

#: product -> the streaming versions the service has (the first is the default: futures and
#: options default to v1.1, as in the official SDKs; stocks stream on v1.0 only)
VERSIONS: dict[str, tuple[str, ...]] = {"stock": ("v1.0",), "futopt": ("v1.1", "v1.0")}
#: control replies (everything but ``data`` and ``heartbeat``)
REPLIES = ("authenticated", "error", "pong", "subscribed", "unsubscribed", "subscriptions")


@dataclass(frozen=True)
class Subscription:
    """One (channel, symbol) subscription as the server acknowledged it."""

    id: str
    channel: str
    symbol: str  # as subscribed (a continuous alias such as TXF1! stays the alias)
    odd_lot: bool = False
    after_hours: bool = False  # futures/options: the after-hours session

    @property
    def flag(self) -> bool:
        """The subscription's variant: odd lot (stocks) or after hours (futures/options)."""
        return self.odd_lot or self.after_hours


def check_market(market: str, version: str | None = None) -> tuple[str, str]:
    """``(market, version)`` checked; ``version`` None: the product's default."""
    if market not in VERSIONS:
        raise InvalidParams("stream", "market", f"has value {market!r}", ", ".join(VERSIONS))
    allowed = VERSIONS[market]
    if version is None:
        return market, allowed[0]
    if version not in allowed:
        raise InvalidParams(
            "stream",
            "version",
            f"has value {version!r} for {market}",
            ", ".join(sorted(allowed))
            + (" (the service streams stocks on v1.0 only)" if market == "stock" else ""),
        )
    return market, version


def market_of(url: str) -> str:
    """The product a streaming URL is for (``.../futopt/streaming``: futopt)."""
    return "futopt" if urlsplit(url).path.rstrip("/").endswith("/futopt/streaming") else "stock"


def ws_url(base_url: str, market: str = "stock", version: str | None = None) -> str:
    """The streaming URL of a REST ``base_url``: same origin, ws:// for http://, wss:// for
    https://, path ``/marketdata/v1.0/stock/streaming`` (``market="futopt"``:
    ``/marketdata/{version}/futopt/streaming``, ``version`` v1.1 by default, or v1.0)."""
    market, version = check_market(market, version)
    parts = urlsplit(base_url)
    scheme = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}.get(parts.scheme)
    if scheme is None or not parts.netloc:
        raise InvalidParams(
            "stream", "base_url", f"has value {base_url!r}", "an http:// or https:// URL"
        )
    return f"{scheme}://{parts.netloc}/marketdata/{version}/{market}/streaming"


def dumps(event: str, data: Any = None) -> str:
    body: dict[str, Any] = {"event": event}
    if data is not None:
        body["data"] = data
    return orjson.dumps(body).decode()


def auth(credential: Credential) -> str:
    """The ``auth`` frame: ``{"apikey": ...}``, ``{"token": ...}`` (bearer) or
    ``{"sdkToken": ...}`` for the credential's kind."""
    return dumps("auth", credential.ws_auth())


def check_channel(channel: str, market: str = "stock") -> str:
    allowed = FUTOPT_CHANNELS if market == "futopt" else CHANNELS
    if channel not in allowed:
        raise InvalidParams(
            "stream.subscribe",
            "channel",
            f"has value {channel!r}"
            + (" on a futures/options stream" if market == "futopt" else ""),
            ", ".join(allowed),
        )
    return channel


def symbols_of(symbols: str | Sequence[str]) -> list[str]:
    out = [symbols] if isinstance(symbols, str) else [str(s) for s in symbols]
    if not out or not all(out):
        raise InvalidParams(
            "stream.subscribe", "symbols", "is empty", "a symbol or a non-empty list of symbols"
        )
    if len(set(out)) != len(out):
        raise InvalidParams(
            "stream.subscribe", "symbols", f"repeats a symbol ({out})", "distinct symbols"
        )
    return out


def subscribe(channel: str, symbols: list[str], flag: bool, market: str = "stock") -> str:
    """``flag``: odd lot (``intradayOddLot``) on stocks, the after-hours session
    (``afterHours``) on futures/options; sent only when true."""
    data: dict[str, Any] = {"channel": channel}
    if len(symbols) == 1:
        data["symbol"] = symbols[0]
    else:
        data["symbols"] = symbols
    if flag:
        data["afterHours" if market == "futopt" else "intradayOddLot"] = True
    return dumps("subscribe", data)


def unsubscribe(ids: list[str]) -> str:
    return dumps("unsubscribe", {"id": ids[0]} if len(ids) == 1 else {"ids": ids})


def ping(state: str | None) -> str:
    return dumps("ping", {"state": state} if state is not None else None)


def as_list(data: Any) -> list[Any]:
    """Replies carry one object or an array of them."""
    if data is None:
        return []
    return data if isinstance(data, list) else [data]


def refused_symbol(message: str, symbols: Sequence[str]) -> str | None:
    """The symbol an ``error`` reply to a subscribe names, if it names one of ``symbols``."""
    for s in symbols:
        if f"'{s}'" in message or f'"{s}"' in message:
            return s
    return None


def is_refusal(message: str, symbols: Sequence[str]) -> bool:
    """An ``error`` reply that refuses (part of) a subscribe of ``symbols``: it names one of
    them or speaks of a subscription. Other errors (about something else) are not refusals."""
    return refused_symbol(message, symbols) is not None or "subscri" in message.lower()


def reply_ids(reply: dict[str, Any]) -> list[str]:
    """The subscription ids of a ``subscribed``/``unsubscribed`` reply (bad items skipped)."""
    return [
        str(d["id"])
        for d in as_list(reply.get("data"))
        if isinstance(d, dict) and d.get("id") is not None
    ]


def message_of(reply: dict[str, Any]) -> str:
    """The ``data.message`` of an ``error`` reply (the whole reply if it has none)."""
    data = reply.get("data")
    if isinstance(data, dict) and data.get("message") is not None:
        return str(data["message"])
    return str(reply)
