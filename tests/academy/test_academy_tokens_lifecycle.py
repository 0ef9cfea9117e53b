"""Expiry, refresh-before-expiry, the RFC 8707 resource on refresh, revoked and dead tokens."""

from __future__ import annotations

import time

import pytest
import requests

from marketframe.academy import (
    AcademyClient,
    InvalidGrant,
    InvalidToken,
    NotLoggedIn,
    _grants,
)

SCOPE = "openid courses:read"


def _raw_get(url: str, token: str) -> requests.Response:
    return requests.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=5)


def test_expired_token_is_refused_and_the_client_refreshes(short_ttl_server, browser, home) -> None:
    client = AcademyClient(short_ttl_server.url, scope=SCOPE, refresh_skew=0)
    first = client.login(open_browser=browser)
    assert first.expires_in() is not None and first.expires_in() <= 2.5
    assert client.get("/api/courses")
    time.sleep(first.expires_in() + 0.6)

    # the server really refuses the expired token ...
    resp = _raw_get(f"{short_ttl_server.url}/api/courses", first.access_token)
    assert resp.status_code == 401 and 'error="invalid_token"' in resp.headers["WWW-Authenticate"]

    # ... and the client refreshes before using it, keeping the resource binding
    before = short_ttl_server.stats()["token_requests"]
    assert len(client.get("/api/courses")) == 4
    assert short_ttl_server.stats()["token_requests"] == before + 1
    now = client.tokens()
    assert now.access_token != first.access_token
    assert now.resource == short_ttl_server.url
    assert client.introspect()["aud"] == short_ttl_server.url


def test_expired_token_without_a_way_to_refresh_raises_typed_error(
    short_ttl_server, browser, home
) -> None:
    client = AcademyClient(short_ttl_server.url, scope=SCOPE, refresh_skew=0)
    tokens = client.login(open_browser=browser)
    reg = client.registration()
    assert reg is not None
    # the refresh token is revoked behind the client's back (e.g. logged out elsewhere)
    r = requests.post(
        client.metadata.revocation_endpoint,
        data={"token": tokens.refresh_token, "client_id": reg.client_id},
        timeout=5,
    )
    assert r.status_code == 200
    time.sleep(tokens.expires_in() + 0.6)
    with pytest.raises(InvalidGrant) as exc:
        client.get("/api/courses")
    assert "log in again" in str(exc.value)
    with pytest.raises(NotLoggedIn):  # the dead tokens are not kept
        client.tokens()


def test_refresh_before_expiry_by_clock_skew(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE, refresh_skew=60)
    tokens = client.login(open_browser=browser)
    assert client.access_token() == tokens.access_token  # 300 s left: no refresh
    # a skew longer than the lifetime means "about to expire": refresh without any failure
    eager = AcademyClient(auth_server.url, scope=SCOPE, refresh_skew=10_000)
    before = auth_server.stats()["token_requests"]
    fresh = eager.access_token()
    assert fresh != tokens.access_token
    assert auth_server.stats()["token_requests"] == before + 1
    assert eager.tokens().resource == auth_server.url
    assert _raw_get(f"{auth_server.url}/api/courses", fresh).status_code == 200


def test_a_refresh_that_drops_the_resource_gives_a_token_the_api_refuses(
    auth_server, browser, home
) -> None:
    """The pitfall the client covers: authlib's plain refresh sends no ``resource``. The real
    server then issues a token that is not for the API -- so the client must keep it."""
    client = AcademyClient(auth_server.url, scope=SCOPE)
    tokens = client.login(open_browser=browser)
    dropped = _grants.refresh(
        client.metadata, client.registration(), tokens, resource=None, timeout=5
    )
    resp = _raw_get(f"{auth_server.url}/api/courses", dropped.access_token)
    assert resp.status_code == 401
    assert "not for this resource" in resp.headers["WWW-Authenticate"]
    # while the client's own refresh keeps it (rotation: use the newest refresh token)
    client.store.save_tokens(
        dropped.__class__(**{**tokens.to_dict(), "refresh_token": dropped.refresh_token})
    )
    kept = client.refresh()
    assert kept.resource == auth_server.url
    assert _raw_get(f"{auth_server.url}/api/courses", kept.access_token).status_code == 200


def test_revoked_access_token_is_refused(auth_server, browser, home) -> None:
    """Revoked elsewhere (RFC 7009): the resource refuses the token. This server revokes the
    whole grant with it (RFC 7009 allows that), so the refresh token is dead too and the client
    says to log in again instead of retrying forever."""
    client = AcademyClient(auth_server.url, scope=SCOPE)
    tokens = client.login(open_browser=browser)
    _grants.revoke(
        client.metadata, client.registration(), tokens.access_token, hint="access_token", timeout=5
    )
    resp = _raw_get(f"{auth_server.url}/api/courses", tokens.access_token)
    assert resp.status_code == 401
    assert 'error="invalid_token"' in resp.headers["WWW-Authenticate"]
    assert client.introspect()["active"] is False
    assert client.introspect("refresh_token")["active"] is False
    with pytest.raises(InvalidGrant, match="log in again"):
        client.get("/api/courses")
    with pytest.raises(NotLoggedIn):
        client.tokens()


def test_revoked_everything_raises_invalid_token_or_grant(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    tokens = client.login(open_browser=browser)
    # a stored token the server never issued and no refresh token: nothing can fix it
    from dataclasses import replace

    client.store.save_tokens(replace(tokens, access_token="not-a-real-token", refresh_token=None))
    with pytest.raises(InvalidToken) as exc:
        client.get("/api/courses")
    assert exc.value.status == 401
    assert exc.value.error == "invalid_token"
    assert exc.value.resource_metadata == f"{auth_server.url}/.well-known/oauth-protected-resource"
    assert str(exc.value).endswith(
        ". Log in again (`marketframe academy login`); the stored token is no longer accepted."
    )


def test_logout_when_not_logged_in_is_harmless(auth_server, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    assert client.logout() is False


def test_unknown_client_secret_is_invalid_client_and_reregistering_fixes_it(
    auth_server, browser, home
) -> None:
    from dataclasses import replace

    from marketframe.academy import InvalidClient

    client = AcademyClient(auth_server.url, scope=SCOPE, confidential=True)
    client.login(open_browser=browser)
    reg = client.registration()
    assert reg is not None
    client.store.update(registration=replace(reg, client_secret="wrong-secret").to_dict())
    with pytest.raises(InvalidClient) as exc:
        client.refresh()
    assert exc.value.error == "invalid_client"
    assert "--reregister" in str(exc.value)
    assert "wrong-secret" not in str(exc.value)

    tokens = client.login(open_browser=browser, reregister=True)
    assert client.registration().client_id != reg.client_id
    assert client.get("/api/courses") and tokens.access_token
