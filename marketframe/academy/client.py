"""``AcademyClient``: log in to the course platform once, stay logged in, call its API, log out.

It ties the pieces together: discovery, dynamic registration and the stored tokens
(:mod:`._account`), the API calls (:mod:`._api`), and here the browser leg of the login
(:mod:`._flow`) and the logout.

Tokens are bound to the platform's API with an RFC 8707 ``resource`` indicator taken from its
RFC 9728 metadata, and every refresh keeps it. Because the UserInfo endpoint refuses tokens
bound to another audience, :meth:`AcademyClient.userinfo` obtains a separate, unbound access
token with the refresh grant and keeps it in memory only.
"""

from __future__ import annotations

import os
import webbrowser
from collections.abc import Callable, Iterable

from marketframe.academy import _grants
from marketframe.academy._account import DEFAULT_SCOPES, scope_text
from marketframe.academy._api import Api
from marketframe.academy._flow import (
    AuthorizationRequest,
    BrowserOpener,
    LoopbackListener,
    new_authorization_request,
    parse_authorization_response,
)
from marketframe.academy._http import log
from marketframe.academy._registration import REDIRECT_URI
from marketframe.academy._tokens import TokenSet
from marketframe.exceptions import AcademyError, InvalidScope

__all__ = ["DEFAULT_SCOPES", "AcademyClient", "login"]


class AcademyClient(Api):
    """An OAuth 2.0 / OpenID Connect client for one course platform.

    ``platform_url`` is the platform origin (its API is the protected resource).
    ``confidential``: ``True`` registers with ``client_secret_post``, ``False`` as a public
    client (``none``); ``None`` reuses whatever registration is stored, else public.
    ``home`` (or ``$MARKETFRAME_ACADEMY_HOME``) is where the private token file lives.
    ``refresh_skew``: refresh this many seconds before the access token expires.
    """

    # --- login ----------------------------------------------------------------------------

    def _check_scope(self, scope: str) -> None:
        """Refuse a scope that neither the authorization server (RFC 8414) nor the API
        (RFC 9728) lists; when neither publishes a list, leave the decision to the server."""
        known = self.metadata.known_scopes
        unknown = [s for s in scope.split() if known and s not in known]
        if unknown:
            raise InvalidScope(
                "invalid_scope",
                f"the platform does not offer {' '.join(unknown)}; it lists {' '.join(known)}",
                endpoint="platform metadata",
            )

    def start_login(
        self, *, redirect_uri: str = REDIRECT_URI, scope: str | Iterable[str] | None = None
    ) -> AuthorizationRequest:
        """Step 1 of a two-step login (for notebooks): the request whose ``url`` to open."""
        text = scope_text(scope) if scope is not None else self.scope
        self._check_scope(text)
        reg = self.register()
        return new_authorization_request(
            self.metadata,
            client_id=reg.client_id,
            redirect_uri=redirect_uri,
            scope=text,
            resource=self.resource,
        )

    def finish_login(self, request: AuthorizationRequest, redirect_url: str) -> TokenSet:
        """Step 2: check the redirect (state, iss, error) and exchange the code."""
        code = parse_authorization_response(redirect_url, request)
        reg = self._registration_or_raise()
        tokens = _grants.exchange_code(
            self.metadata,
            reg,
            code=code,
            redirect_uri=request.redirect_uri,
            code_verifier=request.code_verifier,
            resource=request.resource,
            scope=request.scope,
            timeout=self.timeout,
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
                pairs = [
                    (tokens.access_token, "access_token"),
                    (tokens.refresh_token, "refresh_token"),
                ]
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
        client.login(
            open_browser=open_browser, no_browser=no_browser, read_line=read_line, timeout=timeout
        )
    return client
