"""HTTP plumbing shared by the academy modules: one session, JSON reading, OAuth error mapping.

Nothing here logs a request body, a header value or a URL query: those may hold secrets.
"""

from __future__ import annotations

import logging
from typing import Any

import requests

from marketframe.exceptions import OAuthError, oauth_error

__all__ = ["USER_AGENT", "json_body", "new_session", "raise_for_oauth_error"]

log = logging.getLogger("marketframe.academy")

USER_AGENT = "marketframe-academy/0.1 (+python-requests)"
DEFAULT_TIMEOUT = 15.0


def new_session() -> requests.Session:
    s = requests.Session()
    s.headers["User-Agent"] = USER_AGENT
    s.headers["Accept"] = "application/json"
    return s


def json_body(resp: requests.Response) -> Any:
    """The decoded JSON body, or ``None`` when the body is empty or not JSON."""
    if not resp.content:
        return None
    try:
        return resp.json()
    except ValueError:
        return None


def raise_for_oauth_error(resp: requests.Response, endpoint: str) -> None:
    """Raise the typed RFC 6749 section 5.2 error for a failed OAuth endpoint response."""
    if resp.ok:
        return
    body = json_body(resp)
    if isinstance(body, dict) and isinstance(body.get("error"), str):
        desc = body.get("error_description")
        raise oauth_error(
            body["error"],
            desc if isinstance(desc, str) else None,
            status=resp.status_code,
            endpoint=endpoint,
        )
    raise OAuthError(
        "server_error",
        f"unexpected HTTP {resp.status_code} without an RFC 6749 error body",
        status=resp.status_code,
        endpoint=endpoint,
        hint="the platform may be down; try again later",
    )
