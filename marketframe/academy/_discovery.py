"""Discovery: RFC 9728 protected-resource metadata, RFC 8414 authorization-server metadata and
OpenID Connect discovery, merged with the RFC 8414 document authoritative.

Flow: the platform URL is the protected resource. Its metadata names the authorization
server(s); the first one's RFC 8414 metadata is fetched (its ``issuer`` must equal the
identifier it was fetched for), then the OpenID configuration fills in only what the RFC 8414
document lacks (typically ``userinfo_endpoint``). If the platform publishes no resource
metadata, the platform URL itself is taken as the issuer and tokens are not bound to a
resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests

from marketframe.academy._http import DEFAULT_TIMEOUT, json_body, log
from marketframe.exceptions import DiscoveryError

__all__ = [
    "PlatformMetadata",
    "discover",
    "merge_metadata",
    "normalize_url",
    "well_known_url",
]


def normalize_url(url: str) -> str:
    """Scheme and host lower-cased, no trailing slash, no query or fragment."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DiscoveryError(f"not an http(s) URL: {url!r}")
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def well_known_url(identifier: str, suffix: str) -> str:
    """RFC 8414 / RFC 9728 well-known URL: the suffix goes between host and path."""
    parts = urlsplit(normalize_url(identifier))
    path = f"/.well-known/{suffix}{parts.path}"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def merge_metadata(authoritative: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` fills gaps only: every key present in ``authoritative`` wins."""
    merged = dict(extra)
    merged.update(authoritative)
    return merged


def _scopes(document: dict[str, Any]) -> list[str]:
    scopes = document.get("scopes_supported")
    return [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else []


@dataclass(frozen=True)
class PlatformMetadata:
    """What discovery learned about a platform."""

    platform_url: str
    resource: str | None  # None when the platform publishes no RFC 9728 metadata
    issuer: str
    server: dict[str, Any]
    resource_metadata: dict[str, Any] = field(default_factory=dict)
    openid_configuration: dict[str, Any] = field(default_factory=dict)

    def endpoint(self, name: str) -> str | None:
        value = self.server.get(name)
        return value if isinstance(value, str) and value else None

    def require(self, name: str) -> str:
        value = self.endpoint(name)
        if value is None:
            raise DiscoveryError(f"the authorization-server metadata has no {name}")
        return value

    @property
    def authorization_endpoint(self) -> str:
        return self.require("authorization_endpoint")

    @property
    def token_endpoint(self) -> str:
        return self.require("token_endpoint")

    @property
    def registration_endpoint(self) -> str:
        return self.require("registration_endpoint")

    @property
    def userinfo_endpoint(self) -> str | None:
        return self.endpoint("userinfo_endpoint")

    @property
    def revocation_endpoint(self) -> str | None:
        return self.endpoint("revocation_endpoint")

    @property
    def introspection_endpoint(self) -> str | None:
        return self.endpoint("introspection_endpoint")

    @property
    def scopes_supported(self) -> list[str]:
        """The authorization server's own list (RFC 8414: optional, may leave scopes out)."""
        return _scopes(self.server) or _scopes(self.openid_configuration)

    @property
    def resource_scopes_supported(self) -> list[str]:
        """The API's list from its RFC 9728 metadata (where API scopes are normally listed)."""
        return _scopes(self.resource_metadata)

    @property
    def known_scopes(self) -> list[str]:
        """Every scope either document lists, authorization server's first."""
        merged = dict.fromkeys([*self.scopes_supported, *self.resource_scopes_supported])
        return list(merged)

    @property
    def iss_parameter_supported(self) -> bool:
        return bool(self.server.get("authorization_response_iss_parameter_supported"))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _get_json(session: requests.Session, url: str, timeout: float) -> dict[str, Any] | None:
    try:
        resp = session.get(url, timeout=timeout, allow_redirects=False)
    except requests.RequestException as exc:
        raise DiscoveryError(f"cannot reach {url}: {type(exc).__name__}") from None
    log.debug("discovery GET %s -> %s", url, resp.status_code)
    if resp.status_code == 404:
        return None
    if not resp.ok:
        raise DiscoveryError(f"GET {url} answered HTTP {resp.status_code}")
    body = json_body(resp)
    if not isinstance(body, dict):
        raise DiscoveryError(f"GET {url} did not return a JSON object")
    return body


def discover(
    platform_url: str,
    session: requests.Session,
    *,
    timeout: float = DEFAULT_TIMEOUT,
) -> PlatformMetadata:
    """Discover the platform's resource and authorization-server metadata."""
    platform = normalize_url(platform_url)

    prm = _get_json(session, well_known_url(platform, "oauth-protected-resource"), timeout) or {}
    if prm:
        resource = prm.get("resource")
        if not isinstance(resource, str) or normalize_url(resource) != platform:
            # RFC 9728 section 3.3: the metadata must be about the resource we asked for
            raise DiscoveryError(
                f"the protected-resource metadata is for {resource!r}, not {platform!r}"
            )
        servers = prm.get("authorization_servers") or []
        if not servers or not isinstance(servers[0], str):
            raise DiscoveryError("the protected-resource metadata names no authorization server")
        issuer = servers[0]
    else:
        # no RFC 9728 metadata: no resource identifier to bind tokens to (binding to a
        # guessed one would risk invalid_target); the platform URL is taken as the issuer
        resource = None
        issuer = platform

    as_meta = _get_json(session, well_known_url(issuer, "oauth-authorization-server"), timeout)
    # OpenID Connect Discovery appends its well-known path to the issuer (no insertion)
    oidc_url = normalize_url(issuer) + "/.well-known/openid-configuration"
    oidc = _get_json(session, oidc_url, timeout) or {}
    if as_meta is None and not oidc:
        raise DiscoveryError(f"no authorization-server metadata found for {issuer}")
    for name, doc in (("RFC 8414", as_meta), ("OpenID", oidc)):
        # RFC 8414 section 3.3 / OIDC Discovery 4.3: issuer must be the one asked for
        if doc and normalize_url(str(doc.get("issuer", ""))) != normalize_url(issuer):
            raise DiscoveryError(
                f"the {name} metadata's issuer {doc.get('issuer')!r} is not {issuer!r}"
            )
    server = merge_metadata(as_meta or {}, oidc)
    meta = PlatformMetadata(
        platform_url=platform,
        resource=str(resource) if resource is not None else None,
        issuer=str(server["issuer"]),
        server=server,
        resource_metadata=prm,
        openid_configuration=oidc,
    )
    methods = server.get("code_challenge_methods_supported")
    if methods is not None and "S256" not in methods:
        raise DiscoveryError("the authorization server does not support PKCE S256")
    for name in ("authorization_endpoint", "token_endpoint"):
        meta.require(name)
    return meta
