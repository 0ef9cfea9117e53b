"""An uncached client's GET, sent straight through the connection pool ``requests`` set up.

``Session.send`` wraps every answer in layers a client of one JSON service does not use: a
cookie jar filled from each answer, response hooks, a redirect generator, a
``requests.Response`` with its own header dict; together about 0.4-0.6 ms of CPU a request,
a third to a half of what sending costs, and a fan-out pays it with the GIL held.
:class:`Direct` takes the same pool (the session's adapter: its proxies, TLS settings and pool
size) and calls ``urlopen`` the way ``HTTPAdapter.send`` does, with the same arguments and the
same mapping of urllib3's errors to ``requests``' exceptions, so the transport's retry loop
sees what it saw before. A redirect is not followed here: the caller sends that request again
through the session, which follows it as before.

A client with an HTTP cache (``requests-cache``) sends through its session; this path is only
for ``cache=False`` clients (``download``'s and the store's default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.exceptions import InvalidHeader, InvalidURL, ProxyError, RetryError, SSLError
from requests.utils import check_header_validity
from urllib3.exceptions import (
    ClosedPoolError,
    ConnectTimeoutError,
    LocationValueError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    ResponseError,
)
from urllib3.exceptions import InvalidHeader as _InvalidHeader
from urllib3.exceptions import ProxyError as _ProxyError
from urllib3.exceptions import SSLError as _SSLError

from marketframe._http.body import read_body

__all__ = ["Answer", "Direct"]

#: statuses the session follows (``allow_redirects``): sent again through it
REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass
class Answer:
    """The parts of an answer the transport reads (named as on ``requests.Response``)."""

    status_code: int
    reason: str
    headers: Any  # urllib3's case-insensitive HTTPHeaderDict
    content: bytes
    from_cache: bool = False

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")


class Direct:
    """GETs to one base URL through ``session``'s adapter, without the session's layers."""

    def __init__(self, session: requests.Session, adapter: HTTPAdapter, base_url: str) -> None:
        self._session = session
        self._adapter = adapter  # mounted on ``session`` for ``base_url``
        self._probe = requests.PreparedRequest()
        self._probe.prepare(method="GET", url=base_url + "/")
        self._url = base_url + "/"
        # through an HTTP proxy the request line holds the whole URL, else only the path
        # (``HTTPAdapter.request_url``'s rule, decided once for the one host)
        absolute = self._adapter.request_url(self._probe, session.proxies) != self._probe.path_url
        self._prefix = base_url if absolute else urlsplit(base_url).path
        self._retries = self._adapter.max_retries  # none: the transport's loop retries

    def _pool(self) -> Any:
        """The pool ``HTTPAdapter.send`` would use (looked up per request, as it does: a
        pool closed by ``Session.close`` or evicted is never reused)."""
        s = self._session
        try:
            pool = self._adapter.get_connection_with_tls_context(
                self._probe, s.verify, proxies=s.proxies, cert=s.cert
            )
        except LocationValueError as exc:
            raise InvalidURL(exc) from None
        self._adapter.cert_verify(pool, self._url, s.verify, s.cert)
        return pool

    def get(self, wire: str, timeout: tuple[float, float], ends: float) -> Answer | None:
        """The answer to ``GET base_url + wire`` with its body read before ``ends``
        (monotonic), or None for a redirect. Raises ``requests``' exceptions as
        ``Session.send`` would."""
        headers = self._session.headers
        for header in headers.items():
            check_header_validity(header)  # as PreparedRequest.prepare_headers does
        try:
            raw = self._pool().urlopen(
                method="GET",
                url=self._prefix + wire,
                headers=headers,
                redirect=False,
                assert_same_host=False,
                preload_content=False,
                decode_content=False,
                retries=self._retries,
                timeout=urllib3.Timeout(connect=timeout[0], read=timeout[1]),
                chunked=False,
            )
        except (ProtocolError, OSError) as exc:
            raise requests.ConnectionError(exc) from None
        except MaxRetryError as exc:
            reason = exc.reason
            if isinstance(reason, ConnectTimeoutError) and not isinstance(
                reason, NewConnectionError
            ):
                raise requests.ConnectTimeout(exc) from None
            if isinstance(reason, ResponseError):
                raise RetryError(exc) from None
            if isinstance(reason, _ProxyError):
                raise ProxyError(exc) from None
            if isinstance(reason, _SSLError):
                raise SSLError(exc) from None
            raise requests.ConnectionError(exc) from None
        except ClosedPoolError as exc:
            raise requests.ConnectionError(exc) from None
        except _ProxyError as exc:
            raise ProxyError(exc) from None
        except _SSLError as exc:
            raise SSLError(exc) from None
        except ReadTimeoutError as exc:
            raise requests.ReadTimeout(exc) from None
        except _InvalidHeader as exc:
            raise InvalidHeader(exc) from None
        if raw.status in REDIRECTS:
            raw.drain_conn()
            raw.release_conn()
            return None

        def close() -> None:
            raw.close()
            raw.release_conn()

        body = read_body(raw, ends, close)
        raw.release_conn()
        return Answer(raw.status, raw.reason or "", raw.headers, body)
