"""Calls to the authorization server's back-channel endpoints, built on authlib's OAuth2Session:
the code exchange, the refresh grant, revocation (RFC 7009), introspection (RFC 7662) and
UserInfo. Every token request is form-encoded.

authlib pitfalls covered here:
* its automatic refresh (``ensure_active_token``) sends no ``resource`` (RFC 8707), which would
  turn an API token into one the API refuses; so the session is never given a token or a token
  endpoint, and :func:`refresh` always passes the ``resource`` explicitly;
* its errors are re-raised as the typed exceptions of :mod:`._errors` (without secrets).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import requests

from marketframe.academy._authlib import AuthlibBaseError, OAuth2Session
from marketframe.academy._discovery import PlatformMetadata
from marketframe.academy._http import USER_AGENT, json_body, log, raise_for_oauth_error
from marketframe.academy._registration import ClientRegistration
from marketframe.academy._tokens import TokenSet
from marketframe.exceptions import AcademyError, OAuthError, oauth_error

__all__ = ["exchange_code", "introspect", "refresh", "revoke", "userinfo"]

T = TypeVar("T")


def _session(reg: ClientRegistration) -> OAuth2Session:
    s = OAuth2Session(
        client_id=reg.client_id,
        client_secret=reg.client_secret,
        token_endpoint_auth_method=reg.token_endpoint_auth_method,
        revocation_endpoint_auth_method=reg.token_endpoint_auth_method,
    )
    s.headers["User-Agent"] = USER_AGENT
    s.headers["Accept"] = "application/json"
    return s


@contextmanager
def _mapped(endpoint: str) -> Iterator[None]:
    """Turn authlib / requests failures into typed, secret-free exceptions."""
    try:
        yield
    except AcademyError:
        raise
    except AuthlibBaseError as exc:
        raise oauth_error(
            str(getattr(exc, "error", None) or "server_error"),
            getattr(exc, "description", None),
            endpoint=endpoint,
        ) from None
    except requests.HTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        raise OAuthError(
            "server_error",
            "the server failed",
            status=status,
            endpoint=endpoint,
            hint="the platform may be down; try again later",
        ) from None
    except requests.RequestException as exc:
        raise OAuthError(
            "temporarily_unavailable",
            f"cannot reach the server ({type(exc).__name__})",
            endpoint=endpoint,
            hint="check the network and the platform URL, then retry",
        ) from None


def _call(reg: ClientRegistration, endpoint: str, fn: Callable[[OAuth2Session], T]) -> T:
    with _session(reg) as s, _mapped(endpoint):
        return fn(s)


def _token_request(
    meta: PlatformMetadata,
    reg: ClientRegistration,
    grant: Callable[..., Any],
    resource: str | None,
    **fields: Any,
) -> Any:
    """A token endpoint request through authlib's ``grant`` (``OAuth2Session.fetch_token``
    or ``refresh_token``), with the RFC 8707 ``resource`` when the token is bound to one."""
    extra: dict[str, Any] = {"resource": resource} if resource else {}
    return _call(reg, "token endpoint", lambda s: grant(s, meta.token_endpoint, **fields, **extra))


def exchange_code(
    meta: PlatformMetadata,
    reg: ClientRegistration,
    *,
    code: str,
    redirect_uri: str,
    code_verifier: str,
    resource: str | None,
    scope: str,
    timeout: float,
) -> TokenSet:
    body = _token_request(
        meta,
        reg,
        OAuth2Session.fetch_token,
        resource,
        grant_type="authorization_code",
        code=code,
        redirect_uri=redirect_uri,
        code_verifier=code_verifier,
        timeout=timeout,
    )
    log.debug("code exchanged at %s", meta.token_endpoint)
    return TokenSet.from_response(body, resource=resource, requested_scope=scope)


def refresh(
    meta: PlatformMetadata,
    reg: ClientRegistration,
    tokens: TokenSet,
    *,
    resource: str | None,
    timeout: float,
) -> TokenSet:
    """The ``refresh_token`` grant, with ``resource`` when the token is bound to one."""
    if not tokens.refresh_token:
        raise OAuthError(
            "invalid_grant",
            "no refresh token is stored",
            endpoint="token endpoint",
            hint="log in again (`marketframe academy login`)",
        )
    body = _token_request(
        meta,
        reg,
        OAuth2Session.refresh_token,
        resource,
        refresh_token=tokens.refresh_token,
        timeout=timeout,
    )
    log.debug("tokens refreshed at %s (resource bound: %s)", meta.token_endpoint, bool(resource))
    return TokenSet.from_response(body, resource=resource, previous=tokens)


def revoke(
    meta: PlatformMetadata,
    reg: ClientRegistration,
    token: str,
    *,
    hint: str,
    timeout: float,
) -> None:
    """RFC 7009 revocation: form fields ``token``, ``token_type_hint`` and ``client_id``."""
    url = meta.revocation_endpoint
    if url is None:
        raise AcademyError(
            "the platform publishes no revocation endpoint",
            hint="the tokens were removed locally but stay valid until they expire",
        )

    def go(s: OAuth2Session) -> requests.Response:
        # authlib's `none` and `client_secret_post` auth both put client_id in the body,
        # as the spec asks: adding it here again would be a duplicate parameter
        resp: requests.Response = s.revoke_token(
            url, token=token, token_type_hint=hint, timeout=timeout
        )
        return resp

    resp = _call(reg, "revocation endpoint", go)
    log.debug("revocation POST %s -> %s", url, resp.status_code)
    raise_for_oauth_error(resp, "revocation endpoint")


def introspect(
    meta: PlatformMetadata,
    reg: ClientRegistration,
    token: str,
    *,
    hint: str,
    timeout: float,
) -> dict[str, Any]:
    url = meta.introspection_endpoint
    if url is None:
        raise AcademyError(
            "the platform's metadata names no introspection endpoint",
            hint="introspection is optional; use userinfo() or call the API instead",
        )
    resp = _call(
        reg,
        "introspection endpoint",
        lambda s: s.introspect_token(url, token=token, token_type_hint=hint, timeout=timeout),
    )
    log.debug("introspection POST %s -> %s", url, resp.status_code)
    raise_for_oauth_error(resp, "introspection endpoint")
    body = json_body(resp)
    if not isinstance(body, dict) or "active" not in body:
        raise OAuthError(
            "invalid_response",
            "introspection returned no 'active' member",
            endpoint="introspection endpoint",
        )
    return body


def userinfo(
    meta: PlatformMetadata,
    session: requests.Session,
    access_token: str,
    *,
    timeout: float,
) -> requests.Response:
    url = meta.userinfo_endpoint
    if url is None:
        raise AcademyError(
            "the platform publishes no userinfo endpoint",
            hint="use the ID token's claims or the API instead",
        )
    try:
        resp = session.get(
            url, headers={"Authorization": f"Bearer {access_token}"}, timeout=timeout
        )
    except requests.RequestException as exc:
        raise OAuthError(
            "temporarily_unavailable",
            f"cannot reach the server ({type(exc).__name__})",
            endpoint="userinfo endpoint",
        ) from None
    log.debug("userinfo GET %s -> %s", url, resp.status_code)
    return resp
