"""``AcademyClient``: log in to the course platform once, stay logged in, call its API, log out.

It ties the pieces together: discovery (:mod:`._discovery`), dynamic registration
(:mod:`._registration`), the browser leg (:mod:`._flow`), the token endpoint calls
(:mod:`._grants`), the private token file (:mod:`._tokens`) and the API (:mod:`._resource`).

Tokens are bound to the platform's API with an RFC 8707 ``resource`` indicator taken from its
RFC 9728 metadata, and every refresh keeps it. Because the UserInfo endpoint refuses tokens
bound to another audience, :meth:`AcademyClient.userinfo` obtains a separate, unbound access
token with the refresh grant and keeps it in memory only.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import webbrowser
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import requests

from marketframe.academy import _grants
from marketframe.academy._discovery import PlatformMetadata, discover, normalize_url
from marketframe.academy._errors import (
    AcademyError,
    InvalidGrant,
    InvalidScope,
    InvalidToken,
    NotLoggedIn,
)
from marketframe.academy._flow import (
    AuthorizationRequest,
    BrowserOpener,
    LoopbackListener,
    new_authorization_request,
    parse_authorization_response,
)
from marketframe.academy._frame import Backend, to_frame
from marketframe.academy._http import DEFAULT_TIMEOUT, json_body, new_session
from marketframe.academy._openapi import Operation, operations
from marketframe.academy._registration import (
    REDIRECT_URI,
    AuthMethod,
    ClientRegistration,
    register_client,
)
from marketframe.academy._resource import api_url, error_for_response, send
from marketframe.academy._tokens import TokenSet, TokenStore
from marketframe.exceptions import InvalidParams

__all__ = ["DEFAULT_SCOPES", "AcademyClient", "login"]

log = logging.getLogger("marketframe.academy")

#: What a login asks for unless told otherwise.
DEFAULT_SCOPES: tuple[str, ...] = ("openid", "profile", "email", "courses:read")


def _scope_text(scope: str | Iterable[str]) -> str:
    items = scope.split() if isinstance(scope, str) else list(scope)
    seen: dict[str, None] = dict.fromkeys(i for i in items if i)
    return " ".join(seen)


class AcademyClient:
    """An OAuth 2.0 / OpenID Connect client for one course platform.

    ``platform_url`` is the platform origin (its API is the protected resource).
    ``confidential``: ``True`` registers with ``client_secret_post``, ``False`` as a public
    client (``none``); ``None`` reuses whatever registration is stored, else public.
    ``home`` (or ``$MARKETFRAME_ACADEMY_HOME``) is where the private token file lives.
    ``refresh_skew``: refresh this many seconds before the access token expires.
    """

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
        self.scope = _scope_text(scope)
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
                self.session, self.metadata, auth_method=method,
                client_name=self.client_name, timeout=self.timeout,
            )
            # a new client cannot use the old client's tokens
            self.store.update(registration=reg.to_dict(), tokens=None)
            log.info("registered client %s at %s (%s)", reg.client_id, reg.issuer,
                     reg.token_endpoint_auth_method)
            return reg

    def _registration_or_raise(self) -> ClientRegistration:
        reg = self.registration()
        if reg is None:
            raise NotLoggedIn("this platform has no client registration stored")
        return reg

    # --- login ----------------------------------------------------------------------------

    def _check_scope(self, scope: str) -> None:
        """Refuse a scope that neither the authorization server (RFC 8414) nor the API
        (RFC 9728) lists; when neither publishes a list, leave the decision to the server."""
        known = self.metadata.known_scopes
        unknown = [s for s in scope.split() if known and s not in known]
        if unknown:
            raise InvalidScope(
                "invalid_scope",
                f"the platform does not offer {' '.join(unknown)}; "
                f"it lists {' '.join(known)}",
                endpoint="platform metadata",
            )

    def start_login(
        self, *, redirect_uri: str = REDIRECT_URI, scope: str | Iterable[str] | None = None
    ) -> AuthorizationRequest:
        """Step 1 of a two-step login (for notebooks): the request whose ``url`` to open."""
        text = _scope_text(scope) if scope is not None else self.scope
        self._check_scope(text)
        reg = self.register()
        return new_authorization_request(
            self.metadata, client_id=reg.client_id, redirect_uri=redirect_uri,
            scope=text, resource=self.resource,
        )

    def finish_login(self, request: AuthorizationRequest, redirect_url: str) -> TokenSet:
        """Step 2: check the redirect (state, iss, error) and exchange the code."""
        code = parse_authorization_response(redirect_url, request)
        reg = self._registration_or_raise()
        tokens = _grants.exchange_code(
            self.metadata, reg, code=code, redirect_uri=request.redirect_uri,
            code_verifier=request.code_verifier, resource=request.resource,
            scope=request.scope, timeout=self.timeout,
        )
        self.store.save_tokens(tokens)
        self._userinfo_tokens = None
        log.info("logged in to %s (scope: %s)", self.metadata.issuer, tokens.scope)
        return tokens

    def login(
        self,
        *,
        open_browser: BrowserOpener | None = None,
        no_browser: bool = False,
        read_line: Callable[[str], str] | None = None,
        show: Callable[[str], object] | None = None,
        scope: str | Iterable[str] | None = None,
        timeout: float = 300.0,
        reregister: bool = False,
    ) -> TokenSet:
        """Log in with the Authorization Code flow and PKCE.

        Default: a loopback listener on 127.0.0.1 receives the redirect and ``open_browser``
        (``webbrowser.open`` unless given) shows the login page. ``no_browser=True`` prints
        the URL with ``show`` and reads the pasted redirect URL with ``read_line``.
        """
        show = show or print
        if reregister:
            self.register(force=True)
        if no_browser:
            request = self.start_login(scope=scope)
            show("Open this URL in a browser and log in:\n\n" + request.url + "\n")
            show("The browser then lands on a page that does not load (that is expected).")
            pasted = (read_line or input)("Paste the full address of that page here: ")
            return self.finish_login(request, pasted)
        with LoopbackListener() as listener:
            request = self.start_login(redirect_uri=listener.redirect_uri, scope=scope)
            opener = open_browser or webbrowser.open
            if opener(request.url) is False:
                show("Could not open a browser; open this URL to log in:\n\n" + request.url)
            redirect = listener.wait(timeout)
        return self.finish_login(request, redirect)

    # --- tokens ---------------------------------------------------------------------------

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
                    status=401, url=self.platform_url,
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
            raise InvalidParams("introspect", "which", f"has value {which!r}",
                                "access_token, refresh_token")
        tokens = self.tokens()
        token = getattr(tokens, which)
        if not token:
            raise NotLoggedIn(f"no {which} is stored")
        return _grants.introspect(
            self.metadata, self._registration_or_raise(), token, hint=which, timeout=self.timeout
        )

    def logout(self, *, forget_client: bool = False) -> bool:
        """Revoke the tokens (RFC 7009) and delete them locally; ``False`` if none were stored.

        The local copy is removed even when revocation fails; the failure is then raised.
        ``forget_client=True`` also drops the client registration.
        """
        with self.store.locked():
            tokens = self.store.tokens()
            reg = self.registration()
            failure: AcademyError | None = None
            if tokens is not None and reg is not None:
                pairs = [(tokens.access_token, "access_token"),
                         (tokens.refresh_token, "refresh_token")]
                if self._userinfo_tokens is not None:
                    pairs.append((self._userinfo_tokens.access_token, "access_token"))
                for value, hint in pairs:
                    if not value:
                        continue
                    try:
                        _grants.revoke(self.metadata, reg, value, hint=hint, timeout=self.timeout)
                    except AcademyError as exc:
                        failure = failure or exc
            self._userinfo_tokens = None
            if forget_client:
                self.store.delete()
            else:
                self.store.save_tokens(None)
        if failure is not None:
            raise failure
        log.info("logged out of %s", self.platform_url)
        return tokens is not None

    # --- the API --------------------------------------------------------------------------

    def get(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        anonymous: bool = False,
    ) -> Any:
        """GET an API path with the bearer token and return the decoded JSON.

        A 401 is retried once after a refresh (the token may have expired early); a second
        401 raises :class:`InvalidToken`, a 403 ``insufficient_scope`` :class:`InsufficientScope`.
        """
        url = api_url(self.platform_url, path)
        if anonymous:
            resp = send(self.session, "GET", url, access_token=None, params=params,
                        timeout=self.timeout)
        else:
            resp = send(self.session, "GET", url, access_token=self.access_token(),
                        params=params, timeout=self.timeout)
            if resp.status_code == 401 and self.tokens().refresh_token:
                log.debug("api answered 401; refreshing once and retrying")
                tokens = self.refresh()
                resp = send(self.session, "GET", url, access_token=tokens.access_token,
                            params=params, timeout=self.timeout)
        if not resp.ok:
            raise error_for_response(resp)
        return json_body(resp)

    def frame(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        backend: Backend = "pandas",
        anonymous: bool = False,
    ) -> Any:
        """A list response as a pandas (default) or polars DataFrame."""
        return to_frame(self.get(path, params, anonymous=anonymous), backend)

    def openapi(self) -> dict[str, Any]:
        body = self.get("/openapi.json", anonymous=True)
        if not isinstance(body, dict):
            raise AcademyError("openapi.json is not a JSON object")
        return body

    def operations(self) -> list[Operation]:
        """The operations listed in the platform's ``openapi.json``."""
        return operations(self.openapi())


def login(
    platform_url: str,
    *,
    scope: str | Iterable[str] = DEFAULT_SCOPES,
    confidential: bool | None = None,
    home: str | os.PathLike[str] | None = None,
    open_browser: BrowserOpener | None = None,
    no_browser: bool = False,
    read_line: Callable[[str], str] | None = None,
    timeout: float = 300.0,
) -> AcademyClient:
    """Log in (unless tokens are already stored) and return the ready client.

    In a notebook on your own machine the browser opens; on a remote kernel pass
    ``no_browser=True`` and paste the address the browser ends on.
    """
    client = AcademyClient(platform_url, scope=scope, confidential=confidential, home=home)
    stored = client.store.tokens()
    wanted = set(client.scope.split())
    granted = stored.scopes | set(stored.requested_scope.split()) if stored else set()
    if stored is None or client.registration() is None or not wanted <= granted:
        client.login(open_browser=open_browser, no_browser=no_browser, read_line=read_line,
                     timeout=timeout)
    return client
