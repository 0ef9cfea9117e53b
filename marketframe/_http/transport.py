"""HTTP transport: pooled session, timeouts, retries within a deadline, and pacing.

Retries are done here rather than by urllib3's ``Retry`` so that one loop can honour
``Retry-After`` (and refuse to sleep longer than ``max_retry_after``), feed the pacer, and count
every retry in :class:`Stats`. Each call ends within its total ``deadline`` (retries, waits and
the reading of the body included). The HTTP cache is set up in :mod:`marketframe._http.cache`. The
credential (:mod:`marketframe._http.credential`) travels only in its header (``X-API-KEY``,
``Authorization: Bearer`` or ``X-SDK-TOKEN``): it is never logged, never put in an exception,
and never stored.

What an answer leaves behind (the :class:`Response`, the :class:`Stats` counters, the headers
read from it) is in :mod:`marketframe._http.response`.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import orjson
import requests
from requests.adapters import HTTPAdapter

from marketframe._http.body import read_within
from marketframe._http.cache import (
    KEY_HEADER,
    NEVER_EXPIRE,
    cached_session,
    default_cache_path,
    expire_after,
)
from marketframe._http.credential import Credential
from marketframe._http.direct import Answer, Direct
from marketframe._http.fanout import Budget
from marketframe._http.pacer import Pacer
from marketframe._http.request import Prepared
from marketframe._http.response import (
    Response,
    Stats,
    rate_headers,
    retry_after_seconds,
    served_day,
)
from marketframe.endpoints import Endpoint
from marketframe.exceptions import (
    APIError,
    DeadlineExceeded,
    TransportError,
    error_for_status,
    redact,
)

log = logging.getLogger("marketframe")
__all__ = [
    "DEFAULT_DEADLINE",
    "KEY_HEADER",
    "NEVER_EXPIRE",
    "Pacer",
    "Response",
    "Stats",
    "Transport",
    "default_cache_path",
    "expire_after",
]
#: Seconds one call may take, all retries and their waits included (``Client(deadline=...)``).
DEFAULT_DEADLINE = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_MAX = 8.0  # seconds, before jitter


class Transport:
    """One client's HTTP side: a pooled (optionally cached) session, retries within a total
    ``deadline`` per call, and pacing. Options arrive already checked (``_checks``) from
    :class:`~marketframe.Client`, whose signature holds the only defaults."""

    def __init__(
        self,
        base_url: str,
        credential: Credential,
        *,
        cache: bool | Path,
        timeout: float | tuple[float, float],
        retries: int,
        backoff: float,
        max_retry_after: float,
        deadline: float,
        pool_size: int,
        pace: bool,
    ):
        self.base_url = _canonical(base_url)
        self.credential = credential
        self._key = credential.secret  # redacted from every message
        self.timeout = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        self.retries = retries
        self.backoff = backoff
        self.max_retry_after = max_retry_after
        self.deadline = deadline
        self.stats = Stats()
        self.pacer = Pacer() if pace else None
        self.session, self.cache_path = cached_session(cache)
        adapter = HTTPAdapter(pool_connections=4, pool_maxsize=pool_size, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        _environment_once(self.session, self.base_url)
        header, value = credential.header
        self.session.headers[header] = value
        self.session.headers["Accept"] = "application/json"
        # an uncached client sends below the session's layers (``direct``)
        self._direct = (
            None if hasattr(self.session, "cache") else Direct(self.session, adapter, self.base_url)
        )

    def close(self) -> None:
        self.session.close()

    def budget(self) -> Budget:
        """One request's own budget: the deadline from its first attempt, the retries."""
        return Budget(self.deadline, self.retries)

    def send(self, prep: Prepared, budget: Budget | None = None) -> Response:
        """GET ``prep`` with retries; raises the mapped :class:`APIError` on a final error.

        The request ends within its ``budget``'s deadline (by default this request's own:
        ``deadline`` seconds from its first attempt, retries and their waits included): each
        attempt's timeouts are cut to the time left, the body is read within it (``_body``),
        and a wait that would end past it is not started. Retries after a connection error
        or a 5xx come out of the budget too (a fan-out shares one among its requests)."""
        budget = budget or self.budget()
        ep, values = prep.ep, prep.values
        url = self.base_url + prep.wire
        shown = redact(self.base_url + prep.shown(), self._key)  # for logs and errors
        kwargs: dict[str, Any] = {}
        if hasattr(self.session, "cache"):
            kwargs["expire_after"] = expire_after(ep, values)
            if prep.refresh:
                kwargs["force_refresh"] = True
        start = time.perf_counter()
        if "expire_after" in kwargs and not prep.refresh:
            # a stored answer costs no request: serve it before the pacer counts one
            hit = self._send(ep, values, url, kwargs, only_if_cached=True)
            assert not isinstance(hit, Answer)  # a cached client sends through its session
            if hit.status_code == 200 and getattr(hit, "from_cache", False):
                self.stats.add(cache_hits=1)
                log.debug("GET %s -> 200 (cache)", shown)
                return Response(
                    shown,
                    200,
                    True,
                    time.perf_counter() - start,
                    0,
                    rate_headers(hit.headers),
                    hit.content,
                    served_day(hit.headers),
                )
        tried: list[str] = []
        attempt = 0
        while True:
            if self.pacer is not None:
                self._pace(ep, values, shown, tried, budget)
            ends = budget.ends()
            left = ends - time.monotonic()
            if left <= 0 or budget.cancelled.is_set():
                if self.pacer is not None:
                    self.pacer.abandon()
                raise self._late(ep, values, shown, tried, "")
            timeout = (min(self.timeout[0], left), min(self.timeout[1], left))
            try:
                resp = self._send(
                    ep,
                    values,
                    url,
                    {**kwargs, "timeout": timeout, "hooks": {"response": read_within(ends)}},
                    direct=(prep.wire, ends),
                )
            except BaseException as exc:
                if self.pacer is not None:
                    self.pacer.abandon()  # counted, and no answer will say it is done
                if not isinstance(exc, requests.ConnectionError | requests.Timeout):
                    raise
                self.stats.add(requests=1)
                tried.append(type(exc).__name__)
                if attempt >= self.retries or not budget.take_retry():
                    if time.monotonic() >= budget.ends():
                        raise self._late(ep, values, shown, tried, "") from None
                    raise TransportError(
                        f"no answer to GET {shown}: {_tally(tried)}",
                        endpoint=ep.name,
                        params=_shown_params(values, self._key),
                    ) from None
                wait = self._backoff(attempt + 1)
                if time.monotonic() + wait >= budget.ends():
                    raise self._late(ep, values, shown, tried, "") from None
                attempt += 1
                self.stats.add(retries=1)
                self._sleep(wait, shown, f"{type(exc).__name__}", budget)
                continue
            cached = bool(getattr(resp, "from_cache", False))
            if cached:
                self.stats.add(cache_hits=1)
                if self.pacer is not None:
                    self.pacer.abandon()  # counted, but the service never saw it
            else:
                self.stats.add(requests=1, status=resp.status_code)
                if self.pacer is not None:
                    self.pacer.update(resp.headers)
            log.debug("GET %s -> %s%s", shown, resp.status_code, " (cache)" if cached else "")
            if resp.status_code == 200:
                budget.heard()
                return Response(
                    shown,
                    200,
                    cached,
                    time.perf_counter() - start,
                    attempt,
                    rate_headers(resp.headers),
                    resp.content,
                    served_day(resp.headers),
                )
            tried.append(f"HTTP {resp.status_code}")
            # the service sends Retry-After on every answer (the rate window's length, 60 s):
            # it is an instruction only on a 429; other statuses back off as configured
            retry_after = retry_after_seconds(resp.headers) if resp.status_code == 429 else None
            if resp.status_code in RETRY_STATUSES and attempt < self.retries:
                wait = retry_after if retry_after is not None else self._backoff(attempt + 1)
                # a wait past the deadline is not started: the service's answer is the error
                if (
                    wait <= self.max_retry_after
                    and time.monotonic() + wait < budget.ends()
                    and (resp.status_code == 429 or budget.take_retry())
                ):
                    attempt += 1
                    self.stats.add(retries=1)
                    self._sleep(wait, shown, f"HTTP {resp.status_code}", budget)
                    continue
            budget.heard()  # an answer, if not the one wanted
            raise self._error(ep, resp, values, retry_after)

    def _send(
        self,
        ep: Endpoint,
        values: Mapping[str, Any],
        url: str,
        kwargs: dict[str, Any],
        direct: tuple[str, float] | None = None,
        **extra: Any,
    ) -> requests.Response | Answer:
        """GET through the session, or for an uncached client (given ``direct``: the wire
        path and the monotonic time its body must be read by) straight through the session's
        pool (:mod:`marketframe._http.direct`; a redirect is then followed by the session); a
        library error other than a connection failure or timeout (which the caller retries)
        becomes a :class:`TransportError` with the key redacted.

        The request is prepared here from the URL :func:`~marketframe._http.request.prepare`
        encoded (``url``: the canonical base and the wire path and query, which ``requests``
        would parse, encode and re-quote again to the same text), with the session's headers,
        cookies and the call's hooks (``PreparedRequest``'s own steps), then sent with the
        session's settings (``requests``' documented prepared-request flow). ``session.get``
        would also merge the session's settings, hooks and environment into every request
        again, for settings read once (:func:`_environment_once`): together about a quarter
        of a small call's CPU."""
        options = {**kwargs, **extra}
        session = self.session
        try:
            if direct is not None and self._direct is not None:
                answer = self._direct.get(direct[0], options["timeout"], direct[1])
                if answer is not None:
                    return answer
            request = requests.PreparedRequest()
            request.prepare_method("GET")
            request.url = url
            request.prepare_headers(session.headers)
            request.prepare_cookies(session.cookies)
            request.prepare_hooks(options.pop("hooks", None))
            return session.send(
                request,
                allow_redirects=True,
                proxies=session.proxies,
                stream=session.stream,
                verify=session.verify,
                cert=session.cert,
                **options,
            )
        except (requests.ConnectionError, requests.Timeout):
            raise
        except (requests.RequestException, ValueError) as exc:
            raise TransportError(
                redact(f"{type(exc).__name__}: {exc}", self._key),
                endpoint=ep.name,
                params=_shown_params(values, self._key),
            ) from None

    def _late(
        self, ep: Endpoint, values: Mapping[str, Any], shown: str, tried: list[str], pending: str
    ) -> DeadlineExceeded:
        what = _tally(tried) if tried else "no attempt"
        more = f", then {pending} would pass it" if pending else ""
        return DeadlineExceeded(
            f"GET {shown} got no answer within the {self.deadline:g} s deadline: {what}{more}",
            endpoint=ep.name,
            params=_shown_params(values, self._key),
        )

    def _pace(
        self, ep: Endpoint, values: Mapping[str, Any], shown: str, tried: list[str], budget: Budget
    ) -> None:
        """Wait as the pacer says until it counts this request against the budget."""
        assert self.pacer is not None
        while True:
            wait, counted = self.pacer.delay()
            if wait > 0:
                if tried and time.monotonic() + wait > budget.ends():
                    if counted:
                        self.pacer.abandon()
                    raise self._late(ep, values, shown, tried, f"pacing {wait:.1f} s")
                if not tried:  # the deadline counts from the end of the first wait
                    budget.paced(wait)
                self.stats.add(paced_seconds=wait)
                log.debug("pacing %.3f s before %s", wait, shown)
                if budget.cancelled.wait(wait):
                    if counted:
                        self.pacer.abandon()
                    raise self._late(ep, values, shown, tried, "")
            if counted:
                return

    def _backoff(self, attempt: int) -> float:
        """Exponential backoff with jitter, at most ``BACKOFF_MAX`` seconds."""
        return min(BACKOFF_MAX, self.backoff * 2.0 ** (attempt - 1)) * (0.5 + random.random())

    @staticmethod
    def _sleep(seconds: float, shown: str, why: str, budget: Budget) -> None:
        log.debug("retrying %s after %s in %.3f s", shown, why, seconds)
        budget.cancelled.wait(seconds)  # a cancelled call stops waiting (then fails late)

    def _error(
        self,
        ep: Endpoint,
        resp: requests.Response | Answer,
        values: Mapping[str, Any],
        retry_after: float | None,
    ) -> APIError:
        try:
            body = orjson.loads(resp.content)
            message = str(body.get("message") or resp.reason)
        except (orjson.JSONDecodeError, AttributeError):
            message = (resp.text or resp.reason or "")[:200]
        cls = error_for_status(resp.status_code)
        return cls(
            redact(message, self._key),
            status=resp.status_code,
            endpoint=ep.name,
            params=_shown_params(values, self._key),
            retry_after=retry_after,
            plan=ep.plan,
        )


def _canonical(base_url: str) -> str:
    """``base_url`` as ``requests`` would send it (scheme and host lower-cased, an
    international host IDNA-encoded, the path re-quoted), without a trailing ``/``: done once,
    so each request's URL is this text plus its prepared path and query."""
    request = requests.PreparedRequest()
    request.prepare_url(base_url.rstrip("/"), None)
    return cast(str, request.url).rstrip("/")


def _environment_once(session: requests.Session, base_url: str) -> None:
    """Read the environment's proxy and CA settings once, for the one host a client talks to,
    instead of on every request (``requests`` re-reads them per call when ``trust_env`` is
    on: a quarter of a small call's CPU). ``NO_PROXY`` is applied to ``base_url`` as
    ``requests`` would; a ``.netrc`` is not read (the credential is always a header)."""
    proxies = requests.utils.get_environ_proxies(base_url)
    session.proxies.update({k: v for k, v in proxies.items() if k != "no"})
    ca_bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if ca_bundle and session.verify is True:
        session.verify = ca_bundle
    session.trust_env = False


def _tally(tried: list[str]) -> str:
    """``3 attempts (ReadTimeout x2, HTTP 503)``."""
    counts: dict[str, int] = {}
    for t in tried:
        counts[t] = counts.get(t, 0) + 1
    parts = [f"{k} x{n}" if n > 1 else k for k, n in counts.items()]
    return f"{len(tried)} attempt{'s' if len(tried) != 1 else ''} ({', '.join(parts)})"


def _shown_params(values: Mapping[str, Any], key: str) -> dict[str, Any]:
    """Parameters as an error shows them: dates as ISO strings, the key redacted (a user may
    pass it as a parameter by mistake)."""
    shown = {k: (v.isoformat() if isinstance(v, dt.date) else v) for k, v in values.items()}
    return {k: redact(v, key) if isinstance(v, str) else v for k, v in shown.items()}
