"""Calls to the platform's protected API with a bearer token, and the mapping of its
RFC 6750 challenges (401 ``invalid_token``, 403 ``insufficient_scope``) to typed errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from marketframe.academy._challenge import bearer_challenge
from marketframe.academy._http import json_body, log
from marketframe.exceptions import (
    AcademyError,
    InsufficientScope,
    InvalidToken,
    ResourceError,
)

__all__ = ["api_url", "error_for_response", "send"]


def api_url(platform_url: str, path: str) -> str:
    """``path`` resolved against the platform; absolute URLs must stay on the platform origin
    (the bearer token is never sent anywhere else)."""
    url = urljoin(platform_url + "/", path.lstrip("/")) if "://" not in path else path
    base, target = urlsplit(platform_url), urlsplit(url)
    if (target.scheme, target.netloc) != (base.scheme, base.netloc):
        raise AcademyError(
            f"refusing to send the platform token to another origin: {target.netloc}",
            hint="pass a path of the platform's API, e.g. '/api/courses'",
        )
    return url


def error_for_response(resp: requests.Response) -> ResourceError:
    """The typed error for a failed API response (RFC 6750 section 3.1)."""
    challenge = bearer_challenge(resp.headers.get("WWW-Authenticate"))
    body = json_body(resp)
    error = challenge.get("error")
    if isinstance(body, dict) and not error and isinstance(body.get("error"), str):
        error = body["error"]
    desc = challenge.get("error_description")
    path = urlsplit(resp.url).path
    if resp.status_code == 401 or error == "invalid_token":
        text = f"GET {path}: the access token was refused (401 {error or 'unauthorized'})"
        if desc:
            text += f": {desc}"
        return InvalidToken(
            text, status=resp.status_code, url=resp.url, challenge=challenge, body=body
        )
    if resp.status_code == 403 and error == "insufficient_scope":
        needed = challenge.get("scope")
        text = f"GET {path}: the token lacks a needed scope (403 insufficient_scope)"
        if needed:
            text += f"; it needs {needed!r}"
        hint = (
            f"log in again asking for it: `marketframe academy login --scope {needed}`"
            if needed
            else None
        )
        return InsufficientScope(
            text, status=resp.status_code, url=resp.url, challenge=challenge, body=body, hint=hint
        )
    text = f"GET {path} answered HTTP {resp.status_code}"
    if error:
        text += f" ({error})"
    return ResourceError(
        text, status=resp.status_code, url=resp.url, challenge=challenge, body=body
    )


def send(
    session: requests.Session,
    method: str,
    url: str,
    *,
    access_token: str | None,
    params: Mapping[str, Any] | None = None,
    timeout: float,
) -> requests.Response:
    headers = {"Authorization": f"Bearer {access_token}"} if access_token else {}
    try:
        resp = session.request(
            method, url, params=params, headers=headers, timeout=timeout, allow_redirects=False
        )
    except requests.RequestException as exc:
        raise AcademyError(
            f"cannot reach {urlsplit(url).netloc}: {type(exc).__name__}",
            hint="check the network and the platform URL, then retry",
        ) from None
    log.debug("api %s %s -> %s", method, urlsplit(url).path, resp.status_code)
    return resp
