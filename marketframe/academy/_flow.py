"""The browser leg of the Authorization Code flow with PKCE (RFC 7636, S256).

* :func:`new_authorization_request` builds the authorization URL with a fresh ``state`` and
  PKCE verifier (authlib's generators and S256 transform).
* :class:`LoopbackListener` is the RFC 8252 loopback redirect target on 127.0.0.1.
* :func:`parse_authorization_response` checks ``state`` and the RFC 9207 ``iss`` and turns an
  ``error`` redirect into :class:`AuthorizationError` -- so no token request ever follows a
  bad or refused redirect.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

from marketframe.academy._authlib import (
    create_s256_code_challenge,
    generate_token,
    prepare_grant_uri,
)
from marketframe.academy._discovery import PlatformMetadata, normalize_url
from marketframe.academy._registration import REDIRECT_PATH
from marketframe.exceptions import (
    AcademyError,
    AuthorizationError,
    IssuerMismatch,
    LoginTimeout,
    StateMismatch,
    hold_secret,
)

__all__ = [
    "AuthorizationRequest",
    "BrowserOpener",
    "LoopbackListener",
    "new_authorization_request",
    "parse_authorization_response",
]


#: Called with the authorization URL; returns False if it could not open a browser.
BrowserOpener = Callable[[str], object]


@dataclass(frozen=True)
class AuthorizationRequest:
    """One login attempt. ``state`` and ``code_verifier`` are secrets and not in ``repr``."""

    url: str = field(repr=False)
    redirect_uri: str
    issuer: str
    iss_required: bool
    scope: str
    resource: str | None
    state: str = field(repr=False)
    code_verifier: str = field(repr=False)

    def __post_init__(self) -> None:
        hold_secret(self.state, self.code_verifier)


def new_authorization_request(
    metadata: PlatformMetadata,
    *,
    client_id: str,
    redirect_uri: str,
    scope: str,
    resource: str | None,
) -> AuthorizationRequest:
    state = generate_token(32)
    verifier = generate_token(64)  # 64 chars from [A-Za-z0-9]: within RFC 7636's 43..128
    extra: dict[str, str] = {
        "code_challenge": create_s256_code_challenge(verifier),
        "code_challenge_method": "S256",
    }
    if resource:
        extra["resource"] = resource
    url = prepare_grant_uri(
        metadata.authorization_endpoint,
        client_id,
        "code",
        redirect_uri=redirect_uri,
        scope=scope,
        state=state,
        **extra,
    )
    return AuthorizationRequest(
        url=url,
        redirect_uri=redirect_uri,
        issuer=metadata.issuer,
        iss_required=metadata.iss_parameter_supported,
        scope=scope,
        resource=resource,
        state=state,
        code_verifier=verifier,
    )


def _query_of(redirect: str) -> dict[str, str]:
    text = redirect.strip()
    if "://" in text:
        parts = urlsplit(text)
        if parts.path.rstrip("/") != REDIRECT_PATH:
            raise AcademyError(
                "that is not the redirect URL of this login",
                hint=f"paste the whole address the browser shows after login ({REDIRECT_PATH})",
            )
        if parts.fragment and not parts.query:
            text = parts.fragment
        else:
            text = parts.query
    elif text.startswith("?"):
        text = text[1:]
    params = parse_qs(text, keep_blank_values=True)
    return {k: v[0] for k, v in params.items() if v}


def parse_authorization_response(redirect: str, request: AuthorizationRequest) -> str:
    """The authorization ``code`` from a redirect URL (or its query), after every check.

    Order: ``state`` first (a forged redirect is rejected whatever else it says), then the
    RFC 9207 ``iss``, then an ``error`` redirect, then the code.
    """
    params = _query_of(redirect)
    got_state = params.get("state", "")
    if not hmac.compare_digest(got_state.encode(), request.state.encode()):
        raise StateMismatch()
    iss = params.get("iss")
    if iss is not None or request.iss_required:
        if iss is None or normalize_url(iss) != normalize_url(request.issuer):
            raise IssuerMismatch(request.issuer, iss)
    if "error" in params:
        raise AuthorizationError(params["error"], params.get("error_description"))
    code = params.get("code")
    if not code:
        raise AuthorizationError("invalid_request", "the redirect carries neither code nor error")
    hold_secret(code)
    return code


class LoopbackListener:
    """A one-shot HTTP listener on 127.0.0.1 (free port) for the authorization redirect."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        received: list[str] = []
        base: list[str] = []  # "http://127.0.0.1:PORT", known once the socket is bound
        done = threading.Event()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                if urlsplit(self.path).path != REDIRECT_PATH:
                    self.send_error(404)
                    return
                received.append(base[0] + self.path)
                done.set()
                q = parse_qs(urlsplit(self.path).query)
                ok = "code" in q and "error" not in q
                body = (
                    "<!doctype html><meta charset=utf-8><title>marketframe</title><p>"
                    + (
                        "Login complete. You can close this window and return to marketframe."
                        if ok
                        else "Login did not complete. Return to marketframe for details."
                    )
                    + "</p>"
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                # the default writes the request line -- code and state -- to stderr
                return

        self._server = HTTPServer((host, port), Handler)
        self._base = f"http://{host}:{self._server.server_port}"
        base.append(self._base)
        self._server.timeout = 0.2
        self._received = received
        self._done = done
        self._thread = threading.Thread(target=self._serve, name="academy-loopback", daemon=True)
        self._stop = threading.Event()

    @property
    def redirect_uri(self) -> str:
        return self._base + REDIRECT_PATH

    def _serve(self) -> None:
        while not self._stop.is_set() and not self._done.is_set():
            self._server.handle_request()

    def __enter__(self) -> LoopbackListener:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._server.server_close()

    def wait(self, timeout: float) -> str:
        """The full redirect URL the browser was sent to; :class:`LoginTimeout` if none came."""
        deadline = time.monotonic() + timeout
        while not self._done.wait(timeout=0.1):
            if time.monotonic() >= deadline:
                raise LoginTimeout(f"no redirect reached {self.redirect_uri} within {timeout:g} s")
        return self._received[0]
