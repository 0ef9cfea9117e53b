"""The exception tree of :mod:`marketframe.academy`.

Every exception says what went wrong *and what to do next*; none of them ever carries a token,
a client secret or an authorization code in its text.

``AcademyError`` derives from :class:`marketframe.exceptions.MarketframeError`.

Texts that come from the platform (``error_description``, challenges, bodies) are scrubbed of
every secret this process holds for it (:func:`hold_secret`): a server that echoes its input
cannot put a refresh token or the client secret into an exception.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from marketframe.exceptions._base import MarketframeError, redact, with_next_step

__all__ = [  # in the order they are defined
    "AcademyError",
    "DiscoveryError",
    "RegistrationError",
    "TokenStoreError",
    "NotLoggedIn",
    "LoginTimeout",
    "AuthorizationError",
    "StateMismatch",
    "IssuerMismatch",
    "OAuthError",
    "InvalidRequest",
    "InvalidClient",
    "InvalidGrant",
    "UnauthorizedClient",
    "UnsupportedGrantType",
    "InvalidScope",
    "InvalidTarget",
    "ResourceError",
    "InvalidToken",
    "InsufficientScope",
]

# --- secrets held by this process, scrubbed from every exception ----------------------------

#: Shorter values are not treated as secrets (they would match ordinary words).
_MIN_SECRET = 8
#: The most recent secrets kept (tokens rotate; old ones stay scrubbed for a while).
_MAX_HELD = 512
_held: dict[str, None] = {}
_held_lock = threading.Lock()


def hold_secret(*values: str | None) -> None:
    """Remember values (tokens, client secret, code, verifier, state) to scrub from errors."""
    with _held_lock:
        for value in values:
            if isinstance(value, str) and len(value) >= _MIN_SECRET:
                _held.pop(value, None)
                _held[value] = None
        while len(_held) > _MAX_HELD:
            del _held[next(iter(_held))]


def scrub(value: Any) -> Any:
    """``value`` (text, or JSON-like dicts and lists of it) with every held secret masked."""
    if isinstance(value, str):
        with _held_lock:
            secrets = sorted(_held, key=len, reverse=True)  # longest first: no partial leftovers
        for secret in secrets:
            value = redact(value, secret)
        return value
    if isinstance(value, Mapping):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


class AcademyError(MarketframeError):
    """Root of every error raised by :mod:`marketframe.academy`.

    ``hint`` tells the user what to do next; ``next_step()`` ends ``str(exc)`` with it, as
    in every marketframe error.
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        if hint is not None:
            self.hint = hint
        self.message = message = scrub(message)
        super().__init__(with_next_step(message, self))


class DiscoveryError(AcademyError):
    """The platform's metadata could not be fetched or is inconsistent."""

    hint = "check the platform URL (it must be the origin serving /.well-known/ metadata)"


class RegistrationError(AcademyError):
    """Dynamic client registration (RFC 7591) was refused."""

    hint = (
        "the platform refused to register this client; "
        "check the client metadata or ask the platform"
    )


class TokenStoreError(AcademyError):
    """The token file could not be read or written."""

    hint = "check MARKETFRAME_ACADEMY_HOME (or --home) points to a private, writable directory"


class NotLoggedIn(AcademyError):
    """No usable tokens are stored for this platform."""

    hint = "log in first: `marketframe academy login` or `marketframe.academy.login(url)`"


class LoginTimeout(AcademyError):
    """The browser never came back to the loopback redirect listener."""

    hint = "finish the login in the browser within the time limit, or use no-browser mode"


# --- the authorization response (the browser leg) -------------------------------------------


class AuthorizationError(AcademyError):
    """The authorization server redirected back with ``error`` (RFC 6749 section 4.1.2.1).

    No token request is made after such a redirect.
    """

    hint = "the login was not approved; start it again and approve it in the browser"

    def __init__(self, error: str, description: str | None = None, *, hint: str | None = None):
        self.error = error = scrub(error)
        self.description = description = scrub(description)
        text = f"authorization failed: {error}"
        if description:
            text += f" ({description})"
        super().__init__(text, hint=hint)


class StateMismatch(AuthorizationError):
    """The redirect's ``state`` is not the one this client sent: a possible CSRF/forgery."""

    hint = "the redirect did not come from the login this client started; start the login again"

    def __init__(self) -> None:
        super().__init__("state_mismatch", "the redirect's state does not match the request")


class IssuerMismatch(AuthorizationError):
    """The redirect's RFC 9207 ``iss`` is missing or not the expected issuer (mix-up attack)."""

    hint = "the redirect came from a different authorization server; start the login again"

    def __init__(self, expected: str, got: str | None) -> None:
        self.expected = expected
        self.got = got
        desc = f"expected iss {expected!r}, got {got!r}"
        super().__init__("issuer_mismatch", desc)


# --- token endpoint errors (RFC 6749 section 5.2) -------------------------------------------


class OAuthError(AcademyError):
    """An error response from an OAuth endpoint (token, revocation, introspection)."""

    hint = "see the error description; start the login again if it persists"

    def __init__(
        self,
        error: str,
        description: str | None = None,
        *,
        status: int | None = None,
        endpoint: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.error = error = scrub(error)
        self.description = description = scrub(description)
        self.status = status
        self.endpoint = endpoint
        text = f"{endpoint or 'OAuth endpoint'} returned {error}"
        if status is not None:
            text += f" (HTTP {status})"
        if description:
            text += f": {description}"
        super().__init__(text, hint=hint)


class InvalidRequest(OAuthError):
    hint = "the request was malformed; this is likely a bug in marketframe, please report it"


class InvalidClient(OAuthError):
    hint = (
        "the platform no longer knows this client; log in again with a fresh registration "
        "(`marketframe academy login --reregister`)"
    )


class InvalidGrant(OAuthError):
    hint = (
        "the code or refresh token is invalid, expired or revoked; log in again "
        "(`marketframe academy login`)"
    )


class UnauthorizedClient(OAuthError):
    hint = "this client may not use that grant; re-register it (`login --reregister`)"


class UnsupportedGrantType(OAuthError):
    hint = "the platform does not support this grant type; check its metadata"


class InvalidScope(OAuthError):
    hint = "ask only for scopes listed in the platform metadata (`scopes_supported`)"


class InvalidTarget(OAuthError):
    hint = "the resource indicator (RFC 8707) is not accepted; check the platform URL"


_OAUTH_ERRORS: dict[str, type[OAuthError]] = {
    "invalid_request": InvalidRequest,
    "invalid_client": InvalidClient,
    "invalid_grant": InvalidGrant,
    "unauthorized_client": UnauthorizedClient,
    "unsupported_grant_type": UnsupportedGrantType,
    "invalid_scope": InvalidScope,
    "invalid_target": InvalidTarget,
}


def oauth_error(
    error: str,
    description: str | None = None,
    *,
    status: int | None = None,
    endpoint: str | None = None,
) -> OAuthError:
    """The typed exception for an RFC 6749 ``error`` code (unknown codes -> :class:`OAuthError`)."""
    cls = _OAUTH_ERRORS.get(error, OAuthError)
    return cls(error, description, status=status, endpoint=endpoint)


# --- the protected resource (RFC 6750 section 3) --------------------------------------------


class ResourceError(AcademyError):
    """The platform's API answered with an error status."""

    hint = "see the status and body; the request may be wrong or the platform may be down"

    def __init__(
        self,
        message: str,
        *,
        status: int,
        url: str,
        challenge: Mapping[str, str] | None = None,
        body: object = None,
        hint: str | None = None,
    ) -> None:
        self.status = status
        self.url = scrub(url)
        self.challenge: dict[str, str] = scrub(dict(challenge or {}))
        self.body = scrub(body)
        super().__init__(message, hint=hint)

    @property
    def error(self) -> str | None:
        return self.challenge.get("error")

    @property
    def resource_metadata(self) -> str | None:
        """The RFC 9728 ``resource_metadata`` URL named by the ``WWW-Authenticate`` challenge."""
        return self.challenge.get("resource_metadata")


class InvalidToken(ResourceError):
    """401 ``invalid_token``: the token is expired, revoked, malformed or not for this API."""

    hint = "log in again (`marketframe academy login`); the stored token is no longer accepted"


class InsufficientScope(ResourceError):
    """403 ``insufficient_scope``: the token is valid but lacks a scope this call needs."""

    hint = "log in again asking for the missing scope (`marketframe academy login --scope`)"

    @property
    def scope(self) -> str | None:
        """The scope(s) the resource says it needs, if it named them."""
        return self.challenge.get("scope")
