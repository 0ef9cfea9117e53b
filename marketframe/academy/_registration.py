"""Dynamic client registration (RFC 7591) of a native (loopback-redirect) client.

A public client registers with ``token_endpoint_auth_method=none``; a confidential one with
``client_secret_post`` and receives a ``client_secret``. The redirect URI is the RFC 8252
loopback form ``http://127.0.0.1/callback``; the authorization server accepts any port on it
for ``application_type=native`` clients, so the listener can take a free port each login.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import requests

from marketframe.academy._discovery import PlatformMetadata
from marketframe.academy._http import DEFAULT_TIMEOUT, json_body, log
from marketframe.exceptions import RegistrationError, hold_secret

__all__ = ["REDIRECT_PATH", "REDIRECT_URI", "ClientRegistration", "AuthMethod", "register_client"]


AuthMethod = Literal["none", "client_secret_post"]
REDIRECT_PATH = "/callback"
REDIRECT_URI = f"http://127.0.0.1{REDIRECT_PATH}"


@dataclass(frozen=True)
class ClientRegistration:
    """The platform's answer to a registration. ``client_secret`` never shows in ``repr``."""

    issuer: str
    client_id: str
    token_endpoint_auth_method: str
    redirect_uris: list[str]
    client_secret: str | None = field(default=None, repr=False)
    client_secret_expires_at: int | None = None
    scope: str | None = None

    def __post_init__(self) -> None:
        hold_secret(self.client_secret)

    @property
    def confidential(self) -> bool:
        return self.token_endpoint_auth_method != "none"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClientRegistration:
        return cls(
            issuer=str(data["issuer"]),
            client_id=str(data["client_id"]),
            token_endpoint_auth_method=str(data.get("token_endpoint_auth_method", "none")),
            redirect_uris=list(data.get("redirect_uris") or [REDIRECT_URI]),
            client_secret=data.get("client_secret"),
            client_secret_expires_at=data.get("client_secret_expires_at"),
            scope=data.get("scope"),
        )

    def expired(self, now: float) -> bool:
        """Whether the client secret has expired (0 / missing means it never does)."""
        exp = self.client_secret_expires_at
        if not exp:
            return False
        return now >= float(exp)


def register_client(
    session: requests.Session,
    metadata: PlatformMetadata,
    *,
    auth_method: AuthMethod = "none",
    client_name: str = "marketframe",
    timeout: float = DEFAULT_TIMEOUT,
) -> ClientRegistration:
    """Register this client at the platform's registration endpoint."""
    if auth_method not in ("none", "client_secret_post"):
        raise RegistrationError(f"unsupported token_endpoint_auth_method {auth_method!r}")
    supported = metadata.server.get("token_endpoint_auth_methods_supported")
    if supported is not None and auth_method not in supported:
        raise RegistrationError(
            f"the platform does not accept token_endpoint_auth_method={auth_method}",
            hint=f"use one of {sorted(supported)}",
        )
    url = metadata.registration_endpoint
    request = {
        "client_name": client_name,
        "application_type": "native",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": auth_method,
    }
    try:
        resp = session.post(url, json=request, timeout=timeout)
    except requests.RequestException as exc:
        raise RegistrationError(f"cannot reach {url}: {type(exc).__name__}") from None
    log.debug("registration POST %s -> %s", url, resp.status_code)
    body = json_body(resp)
    if not resp.ok or not isinstance(body, dict):
        err = body.get("error") if isinstance(body, dict) else None
        desc = body.get("error_description") if isinstance(body, dict) else None
        text = f"registration failed with HTTP {resp.status_code}"
        if err:
            text += f": {err}"
        if desc:
            text += f" ({desc})"
        raise RegistrationError(text)
    client_id = body.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise RegistrationError("the registration response has no client_id")
    method = str(body.get("token_endpoint_auth_method") or auth_method)
    secret = body.get("client_secret")
    if method == "client_secret_post" and not isinstance(secret, str):
        raise RegistrationError("a confidential registration came back without a client_secret")
    return ClientRegistration(
        issuer=metadata.issuer,
        client_id=client_id,
        token_endpoint_auth_method=method,
        redirect_uris=list(body.get("redirect_uris") or [REDIRECT_URI]),
        client_secret=secret if isinstance(secret, str) else None,
        client_secret_expires_at=body.get("client_secret_expires_at"),
        scope=body.get("scope") if isinstance(body.get("scope"), str) else None,
    )
