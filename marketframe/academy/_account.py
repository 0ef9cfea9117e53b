"""The account of :class:`~marketframe.academy.AcademyClient` on one platform: discovery,
client registration (RFC 7591), and the stored tokens (refresh keeping the RFC 8707
``resource``, an unbound token for UserInfo, RFC 7662 introspection).

Split from :mod:`marketframe.academy.client` (which adds the login flow and logout) and
extended by :mod:`._api` (calls to the platform's API).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Iterable
from typing import Any

import requests

from marketframe.academy import _grants
from marketframe.academy._discovery import PlatformMetadata, discover, normalize_url
from marketframe.academy._http import DEFAULT_TIMEOUT, json_body, log, new_session
from marketframe.academy._registration import AuthMethod, ClientRegistration, register_client
from marketframe.academy._resource import error_for_response
from marketframe.academy._tokens import TokenSet, TokenStore
from marketframe.exceptions import (
    AcademyError,
    InvalidGrant,
    InvalidParams,
    InvalidToken,
    NotLoggedIn,
)

#: What a login asks for unless told otherwise.
DEFAULT_SCOPES: tuple[str, ...] = ("openid", "profile", "email", "courses:read")


def scope_text(scope: str | Iterable[str]) -> str:
    """Scopes as one space-separated string, each once, in order."""
    items = scope.split() if isinstance(scope, str) else list(scope)
    seen: dict[str, None] = dict.fromkeys(i for i in items if i)
    return " ".join(seen)


class Account:
    """Discovery, registration and tokens (see :class:`AcademyClient` for the options)."""

    def __init__(
        self,
        platform_url: str,
        *,
        scope: str | Iterable[str] = DEFAULT_SCOPES,
        confidential: bool | None = None,
        home: str | os.PathLike[str] | None = None,
        client_name: str = "marketframe",
        refresh_skew: float = 60.0,
        timeout: float = DEFAULT_TIMEOUT,
        bind_resource: bool = True,
        session: requests.Session | None = None,
    ) -> None:
        self.platform_url = normalize_url(platform_url)
        self.scope = scope_text(scope)
        self.confidential = confidential
        self.client_name = client_name
        self.refresh_skew = float(refresh_skew)
        self.timeout = float(timeout)
        self.bind_resource = bind_resource
        self.session = session or new_session()
        self.store = TokenStore(self.platform_url, home)
        self._metadata: PlatformMetadata | None = None
        self._userinfo_tokens: TokenSet | None = None

    def __repr__(self) -> str:
        return f"AcademyClient({self.platform_url!r}, store={str(self.store.path)!r})"

    # --- discovery and registration -------------------------------------------------------

    @property
    def metadata(self) -> PlatformMetadata:
        if self._metadata is None:
            self._metadata = discover(self.platform_url, self.session, timeout=self.timeout)
            log.debug("discovered issuer %s for %s", self._metadata.issuer, self.platform_url)
        return self._metadata

    @property
    def resource(self) -> str | None:
        """The RFC 8707 resource indicator tokens are bound to (``None`` when not binding)."""
        return self.metadata.resource if self.bind_resource else None

    def registration(self) -> ClientRegistration | None:
        """The stored registration, if it is for this issuer and of the wanted kind."""
        reg = self.store.section("registration", ClientRegistration.from_dict)
        if reg is None:
            return None
        if reg.issuer != self.metadata.issuer:
            return None
        if self.confidential is not None and reg.confidential != self.confidential:
            return None
        if reg.expired(time.time()):
            return None
        return reg

    def register(self, *, force: bool = False) -> ClientRegistration:
        """Register this client (RFC 7591) unless a usable registration is stored."""
        with self.store.locked():
            reg = None if force else self.registration()
            if reg is not None:
                return reg
            method: AuthMethod = "client_secret_post" if self.confidential else "none"
            reg = register_client(
                self.session,
                self.metadata,
                auth_method=method,
                client_name=self.client_name,
                timeout=self.timeout,
            )
            # a new client cannot use the old client's tokens
            self.store.update(registration=reg.to_dict(), tokens=None)
            log.info(
                "registered client %s at %s (%s)",
                reg.client_id,
                reg.issuer,
                reg.token_endpoint_auth_method,
            )
            return reg

    def _registration_or_raise(self) -> ClientRegistration:
        reg = self.registration()
        if reg is None:
            raise NotLoggedIn("this platform has no client registration stored")
        return reg

    def tokens(self) -> TokenSet:
        """The stored tokens as they are (maybe expired); :class:`NotLoggedIn` if none."""
        tokens = self.store.tokens()
        if tokens is None:
            raise NotLoggedIn(f"not logged in to {self.platform_url}")
        return tokens

    @property
    def logged_in(self) -> bool:
        return self.store.tokens() is not None

    def refresh(self, *, force: bool = True) -> TokenSet:
        """Refresh with the ``refresh_token`` grant, keeping the RFC 8707 ``resource``.

        Under the store's lock the file is re-read first: when another process refreshed in
        the meantime (and ``force`` is false), its fresh tokens are used as they are.
        """
        with self.store.locked():
            tokens = self.tokens()
            if not force and not tokens.expiring(self.refresh_skew):
                return tokens
            reg = self._registration_or_raise()
            try:
                new = _grants.refresh(
                    self.metadata, reg, tokens, resource=tokens.resource, timeout=self.timeout
                )
            except InvalidGrant:
                # the refresh token is dead: what is stored is useless now
                self.store.save_tokens(None)
                raise
            self.store.save_tokens(new)
            return new

    def access_token(self) -> str:
        """A valid access token for the API, refreshed first if it expires within the skew."""
        tokens = self.tokens()
        if tokens.expiring(self.refresh_skew):
            if not tokens.refresh_token:
                raise InvalidToken(
                    "the access token has expired and there is no refresh token",
                    status=401,
                    url=self.platform_url,
                )
            tokens = self.refresh(force=False)
        return tokens.access_token

    def _userinfo_access_token(self) -> str:
        tokens = self.tokens()
        if tokens.resource is None:
            return self.access_token()
        cached = self._userinfo_tokens
        if cached is not None and not cached.expiring(self.refresh_skew):
            return cached.access_token
        # the API-bound token is refused by UserInfo: get an unbound one with the refresh grant
        with self.store.locked():
            tokens = self.tokens()
            reg = self._registration_or_raise()
            try:
                unbound = _grants.refresh(
                    self.metadata, reg, tokens, resource=None, timeout=self.timeout
                )
            except InvalidGrant:
                self.store.save_tokens(None)
                raise
            if unbound.refresh_token and unbound.refresh_token != tokens.refresh_token:
                # rotated: the old refresh token is spent, keep the new one
                self.store.save_tokens(
                    dataclasses.replace(tokens, refresh_token=unbound.refresh_token)
                )
        self._userinfo_tokens = dataclasses.replace(unbound, refresh_token=None)
        return unbound.access_token

    # --- OpenID Connect / RFC 7662 / RFC 7009 ---------------------------------------------

    def userinfo(self) -> dict[str, Any]:
        """The UserInfo claims of the logged-in user."""
        for attempt in (1, 2):
            token = self._userinfo_access_token()
            resp = _grants.userinfo(self.metadata, self.session, token, timeout=self.timeout)
            if resp.ok:
                body = json_body(resp)
                if not isinstance(body, dict):
                    raise AcademyError("the userinfo endpoint returned no JSON object")
                return body
            if resp.status_code == 401 and attempt == 1:
                self._userinfo_tokens = None
                if self.tokens().resource is None:
                    self.refresh()
                continue
            raise error_for_response(resp)
        raise AssertionError("unreachable")  # pragma: no cover

    def introspect(self, which: str = "access_token") -> dict[str, Any]:
        """RFC 7662 introspection of the stored ``access_token`` or ``refresh_token``."""
        if which not in ("access_token", "refresh_token"):
            raise InvalidParams(
                "introspect", "which", f"has value {which!r}", "access_token, refresh_token"
            )
        tokens = self.tokens()
        token = getattr(tokens, which)
        if not token:
            raise NotLoggedIn(f"no {which} is stored")
        return _grants.introspect(
            self.metadata, self._registration_or_raise(), token, hint=which, timeout=self.timeout
        )
