"""Calls to the course platform's API with the stored tokens (the resource server)."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from typing import Any

from marketframe.academy._account import Account
from marketframe.academy._frame import Backend, to_frame
from marketframe.academy._http import json_body
from marketframe.academy._openapi import Operation, operations
from marketframe.academy._resource import api_url, error_for_response, send
from marketframe.exceptions import AcademyError

log = logging.getLogger("marketframe.academy")


class Api(Account):
    """GET with the bearer token (refreshed once on a 401), frames, the OpenAPI listing."""

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
            resp = send(
                self.session, "GET", url, access_token=None, params=params, timeout=self.timeout
            )
        else:
            resp = send(
                self.session,
                "GET",
                url,
                access_token=self.access_token(),
                params=params,
                timeout=self.timeout,
            )
            if resp.status_code == 401 and self.tokens().refresh_token:
                log.debug("api answered 401; refreshing once and retrying")
                tokens = self.refresh()
                resp = send(
                    self.session,
                    "GET",
                    url,
                    access_token=tokens.access_token,
                    params=params,
                    timeout=self.timeout,
                )
        if not resp.ok:
            raise error_for_response(resp)
        return json_body(resp)

    def load(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        backend: Backend = "pandas",
        anonymous: bool = False,
    ) -> Any:
        """A list response as a pandas (default) or polars DataFrame."""
        return to_frame(self.get(path, params, anonymous=anonymous), backend)

    def frame(
        self,
        path: str,
        params: Mapping[str, Any] | None = None,
        *,
        backend: Backend = "pandas",
        anonymous: bool = False,
    ) -> Any:
        """Deprecated name of :meth:`load` (docs/glossary.md: ``load`` is service -> frame)."""
        warnings.warn(
            "AcademyClient.frame() is deprecated: use AcademyClient.load()",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.load(path, params, backend=backend, anonymous=anonymous)

    def openapi(self) -> dict[str, Any]:
        body = self.get("/openapi.json", anonymous=True)
        if not isinstance(body, dict):
            raise AcademyError("openapi.json is not a JSON object")
        return body

    def operations(self) -> list[Operation]:
        """The operations listed in the platform's ``openapi.json``."""
        return operations(self.openapi())
