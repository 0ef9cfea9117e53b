"""Calls to the course platform's API with the stored tokens (the resource server)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any, TypedDict, Unpack

from marketframe.academy._account import Account
from marketframe.academy._frame import Backend, to_frame
from marketframe.academy._http import json_body, log
from marketframe.academy._openapi import Operation, operations
from marketframe.academy._resource import api_url, error_for_response, send
from marketframe.exceptions import AcademyError


class _LoadOptions(TypedDict, total=False):
    """The keyword options of :meth:`Api.load`."""

    backend: Backend
    anonymous: bool


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
        token = None if anonymous else self.access_token()
        resp = send(
            self.session, "GET", url, access_token=token, params=params, timeout=self.timeout
        )
        if not anonymous and resp.status_code == 401 and self.tokens().refresh_token:
            log.debug("api answered 401; refreshing once and retrying")
            token = self.refresh().access_token
            resp = send(
                self.session, "GET", url, access_token=token, params=params, timeout=self.timeout
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
        self, path: str, params: Mapping[str, Any] | None = None, **options: Unpack[_LoadOptions]
    ) -> Any:
        """Deprecated name of :meth:`load` (docs/glossary.md: ``load`` is service -> frame)."""
        warnings.warn(
            "AcademyClient.frame() is deprecated: use AcademyClient.load()",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.load(path, params, **options)

    def openapi(self) -> dict[str, Any]:
        body = self.get("/openapi.json", anonymous=True)
        if not isinstance(body, dict):
            raise AcademyError("openapi.json is not a JSON object")
        return body

    def operations(self) -> list[Operation]:
        """The operations listed in the platform's ``openapi.json``."""
        return operations(self.openapi())
