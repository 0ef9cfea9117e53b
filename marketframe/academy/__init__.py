"""Course-platform login: an OAuth 2.0 / OpenID Connect client with PKCE.

>>> from marketframe.academy import login
>>> client = login("https://academy.example")      # opens the browser once
>>> client.userinfo()["email"]
>>> client.frame("/api/courses")                    # a pandas DataFrame
>>> client.logout()

See ``docs/academy.md``. The agent-authentication extension is never attempted.
"""

from __future__ import annotations

from marketframe.academy._challenge import Challenge, parse_www_authenticate
from marketframe.academy._discovery import PlatformMetadata
from marketframe.academy._flow import AuthorizationRequest
from marketframe.academy._openapi import Operation
from marketframe.academy._registration import ClientRegistration
from marketframe.academy._tokens import HOME_ENV, TokenSet, TokenStore
from marketframe.academy.client import DEFAULT_SCOPES, AcademyClient, login
from marketframe.exceptions import (
    AcademyError,
    AuthorizationError,
    DiscoveryError,
    InsufficientScope,
    InvalidClient,
    InvalidGrant,
    InvalidRequest,
    InvalidScope,
    InvalidTarget,
    InvalidToken,
    IssuerMismatch,
    LoginTimeout,
    NotLoggedIn,
    OAuthError,
    RegistrationError,
    ResourceError,
    StateMismatch,
    TokenStoreError,
    UnauthorizedClient,
    UnsupportedGrantType,
)

__all__ = [
    "AcademyClient",
    "AcademyError",
    "AuthorizationError",
    "AuthorizationRequest",
    "Challenge",
    "ClientRegistration",
    "DEFAULT_SCOPES",
    "DiscoveryError",
    "HOME_ENV",
    "InsufficientScope",
    "InvalidClient",
    "InvalidGrant",
    "InvalidRequest",
    "InvalidScope",
    "InvalidTarget",
    "InvalidToken",
    "IssuerMismatch",
    "LoginTimeout",
    "NotLoggedIn",
    "OAuthError",
    "Operation",
    "PlatformMetadata",
    "RegistrationError",
    "ResourceError",
    "StateMismatch",
    "TokenSet",
    "TokenStore",
    "TokenStoreError",
    "UnauthorizedClient",
    "UnsupportedGrantType",
    "login",
    "parse_www_authenticate",
]
