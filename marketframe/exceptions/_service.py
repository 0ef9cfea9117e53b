"""The service gave no usable answer (an error status, or none at all); the stream."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from marketframe.exceptions._base import MarketframeError

__all__ = [
    "ServiceError",
    "APIError",
    "BadRequest",
    "AuthenticationError",
    "PlanError",
    "AdjustmentUnavailable",
    "SymbolNotFound",
    "RateLimited",
    "ServerError",
    "RepeatedPage",
    "TransportError",
    "DeadlineExceeded",
    "Forbidden",
    "NotFound",
    "STATUS_ERRORS",
    "error_for_status",
    "BatchError",
    "PartialResult",
    "StreamError",
    "StreamTimeout",
    "StreamAuthError",
    "StreamSubscribeError",
    "StreamClosed",
    "GapUnavailable",
]


class ServiceError(MarketframeError):
    """The service gave no usable answer: an error status (:class:`APIError`) or no answer
    at all (:class:`TransportError`)."""

    status: int | None = None
    hint = "retry later"

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        endpoint: str | None = None,
        params: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
        plan: str | None = None,
    ):
        self.status = status if status is not None else type(self).status
        #: the plan the endpoint needs ("basic", "developer", "advanced"), when the raiser knew it
        self.plan = plan
        self.endpoint = endpoint
        self.params = dict(params or {})
        self.service_message = message
        self.retry_after = retry_after
        where = f"{endpoint} {self._describe_params()}".strip() if endpoint else ""
        head = " ".join(p for p in (f"HTTP {self.status}" if self.status else "", where) if p)
        super().__init__(f"{head + ': ' if head else ''}{message}. {self.next_step()}")

    def _describe_params(self) -> str:
        if not self.params:
            return ""
        return "(" + ", ".join(f"{k}={v}" for k, v in self.params.items()) + ")"


class APIError(ServiceError):
    """The service answered with an error status."""

    hint = "check the parameters against docs/endpoints.md"


class BadRequest(APIError):
    """The service refused the request's parameters (400, or another 4xx)."""

    status = 400
    hint = "the service refused the parameters; check them against docs/endpoints.md"


class AuthenticationError(APIError):
    """The service could not authenticate the credential (401). (No credential at all is a
    :class:`ConfigurationError`: nothing is sent.)"""

    status = 401
    hint = (
        "the credential was not accepted: pass Client(api_key=...) or set "
        "MARKETFRAME_API_KEY to a v1.0 market-data key (keys of version 0.3 are not "
        "accepted), or check the bearer_token / sdk_token given instead"
    )


class PlanError(APIError):
    """The key's plan does not include the endpoint (403): snapshot and corporate actions
    need the developer or advanced plan."""

    status = 403
    hint = "your plan does not include this endpoint"

    def next_step(self) -> str:
        plans = {"developer": "the developer or advanced plan", "advanced": "the advanced plan"}
        plan = plans.get(self.plan or "", plans["developer"])
        return f"Your plan does not include this endpoint: it needs {plan}; upgrade the key's plan."


class AdjustmentUnavailable(PlanError):
    """``adjust=`` needs the corporate-actions endpoints, which the key's plan lacks (403)."""

    hint = "local price adjustment needs the corporate-actions endpoints"

    def next_step(self) -> str:
        return (
            "adjust= computes factors from the corporate-actions endpoints, which need the "
            "developer or advanced plan. Alternatives: pass adjusted=True instead (the "
            "service's own adjusted D/W/M candles; historical candles are on the basic "
            "plan), or upgrade the key's plan."
        )


class SymbolNotFound(APIError):
    """An invalid or nonexistent symbol (or path) (404)."""

    status = 404
    hint = "the symbol or resource does not exist"
    #: "; did you mean '2330'?" when the closest symbol of the ticker list is known
    suggestion = ""

    def next_step(self) -> str:
        sym = self.params.get("symbol") or self.params.get("market")
        base, dot, suffix = str(sym or "").rpartition(".")
        if dot and base and suffix.upper() in ("TW", "TWO"):
            return (
                f"Symbol {sym!r} carries Yahoo's suffix: the service names it {base!r} "
                f"(marketframe.download and marketframe.Ticker accept {sym!r} and drop it)."
            )
        if sym:
            where = (
                "client.stock.intraday.tickers(type=...) or "
                "client.futopt.intraday.tickers(type=...)"
            )
            if self.suggestion:  # "; did you mean '2330'?"
                return f"Symbol {sym!r} is unknown to the service{self.suggestion} ({where})"
            return f"Symbol {sym!r} is unknown to the service: check it with {where}."
        return "The resource does not exist; check the path parameters."


class RateLimited(APIError):
    """The rate limit was reached and retries honouring ``Retry-After`` did not get through
    (429); ``.retry_after`` says when to try again."""

    status = 429
    hint = "the rate limit was reached"

    def next_step(self) -> str:
        when = f"in {self.retry_after:g} s" if self.retry_after is not None else "in a minute"
        return (
            f"Rate limit reached after retries; retry {when}, lower max_workers, "
            "or upgrade the plan."
        )


class ServerError(APIError):
    """The service kept failing (5xx) after the retries with backoff."""

    status = 500
    hint = "the service failed after retries; retry later"


class RepeatedPage(ServiceError):
    """A paged endpoint's page (a day's trades) brought only rows already received: the
    server, or a proxy before it, ignores ``offset``. Paging stops there instead of asking
    for the same page forever; nothing is returned, since the rest of the day is unknown."""

    hint = (
        "the server (or a proxy before it) ignores the offset parameter; check base_url and "
        "any HTTPS_PROXY, or ask for one page with limit= and offset="
    )


class TransportError(ServiceError):
    """No HTTP answer at all (connection refused, timeout) after retries: a sibling of
    :class:`APIError`, which means the service did answer."""

    hint = "could not reach the service after retries; check base_url and the network, then retry"


class DeadlineExceeded(TransportError, TimeoutError):
    """A call did not get its answer within the client's total ``deadline`` (all retries and
    their waits included); the message lists what was tried."""

    hint = (
        "no answer within the deadline; check base_url and the network, or raise "
        "Client(deadline=...)"
    )


# Aliases matching the names of the HTTP statuses.
Forbidden = PlanError
NotFound = SymbolNotFound

STATUS_ERRORS: dict[int, type[APIError]] = {
    400: BadRequest,
    401: AuthenticationError,
    403: PlanError,
    404: SymbolNotFound,
    429: RateLimited,
}


def error_for_status(status: int) -> type[APIError]:
    """The exception class for an HTTP status (5xx -> ServerError, other 4xx -> BadRequest)."""
    if status in STATUS_ERRORS:
        return STATUS_ERRORS[status]
    if status >= 500:
        return ServerError
    return BadRequest


class BatchError(MarketframeError):
    """Some symbols of a multi-symbol call failed.

    ``.frame`` holds the concatenated frame of the symbols that succeeded (or ``None``) and
    ``.errors`` maps each failed symbol to its exception. Nothing is dropped silently.
    """

    def __init__(self, endpoint: str, frame: Any, errors: Mapping[str, BaseException], total: int):
        self.endpoint = endpoint
        self.frame = frame
        self.errors = dict(errors)
        lines = "; ".join(f"{s}: {type(e).__name__}: {e}" for s, e in self.errors.items())
        super().__init__(
            f"{endpoint}: {len(self.errors)} of {total} symbols failed ({lines}). The frame of "
            "the symbols that succeeded is in .frame and each symbol's error in .errors."
        )


PartialResult = BatchError


class StreamError(MarketframeError):
    """A problem with the WebSocket stream (see docs/streaming.md)."""


class StreamTimeout(StreamError, TimeoutError):
    """The server did not answer in time (WebSocket handshake, auth, or a request's reply)."""


class StreamAuthError(StreamError, AuthenticationError):
    """The streaming server refused the API key (raised at once, never a hang)."""

    status = 401

    def __init__(self, message: str):
        self.status = 401
        self.endpoint = "stream"
        self.params = {}
        self.service_message = message
        self.retry_after = None
        MarketframeError.__init__(
            self, f"stream authentication failed: {message}. {self.next_step()}"
        )


class StreamSubscribeError(StreamError, ValueError):
    """The server refused a subscription (e.g. an unknown symbol).

    ``.failed`` maps each refused symbol to the server's message; ``.subscribed`` lists the
    subscriptions of the same request that were accepted (they stay subscribed)."""

    def __init__(self, channel: str, failed: Mapping[str, str], subscribed: list[Any]):
        self.channel = channel
        self.failed = dict(failed)
        self.subscribed = list(subscribed)
        lines = "; ".join(f"{s}: {m}" for s, m in self.failed.items())
        super().__init__(
            f"subscribe {channel}: {len(self.failed)} symbol(s) refused ({lines}). "
            "Check the symbols with client.stock.intraday.tickers(type=...); "
            "indices (IX...) are only on the 'indices' channel."
        )


class StreamClosed(StreamError):
    """The stream is closed and will deliver nothing more.

    ``.code`` and ``.reason`` are the WebSocket close code and reason (``None`` when the
    connection was lost without a close frame)."""

    def __init__(self, message: str, code: int | None = None, reason: str | None = None):
        self.code = code
        self.reason = reason
        why = f" (close code {code}{': ' + reason if reason else ''})" if code else ""
        super().__init__(f"{message}{why}")


class GapUnavailable(StreamError):
    """The gap's trading day is no longer served by the intraday endpoint."""
