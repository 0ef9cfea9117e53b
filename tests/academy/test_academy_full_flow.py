"""The whole flow against the real authorization server, for a public and a confidential client:
discover, register, authorize, token, userinfo, call the resource, refresh, introspect (the
resource binding is visible), revoke, and the revoked token is refused."""

from __future__ import annotations

import pytest
import requests

from marketframe.academy import AcademyClient, NotLoggedIn

SCOPE = "openid profile email courses:read"


@pytest.mark.parametrize("confidential", [False, True], ids=["public", "confidential"])
def test_whole_flow(auth_server, browser, home, confidential: bool) -> None:
    before = auth_server.stats()
    client = AcademyClient(auth_server.url, scope=SCOPE, confidential=confidential)

    # discover: RFC 9728 names the authorization server, whose RFC 8414 metadata is used
    meta = client.metadata
    assert meta.resource == auth_server.url
    assert meta.issuer == auth_server.url
    assert meta.token_endpoint == f"{auth_server.url}/api/oauth/token"
    assert meta.registration_endpoint == f"{auth_server.url}/api/oauth/register"
    assert meta.introspection_endpoint == f"{auth_server.url}/api/oauth/introspect"
    assert meta.iss_parameter_supported

    # register
    reg = client.register()
    assert reg.confidential is confidential
    assert reg.token_endpoint_auth_method == ("client_secret_post" if confidential else "none")
    assert (reg.client_secret is not None) is confidential

    # authorize + token (the browser is an HTTP client following the login redirects)
    tokens = client.login(open_browser=browser)
    assert "/oauth/authorize" in browser.visited
    assert tokens.refresh_token and tokens.access_token
    assert tokens.resource == auth_server.url
    assert tokens.scope == "courses:read"  # the API-bound token carries the API scopes
    assert set(tokens.requested_scope.split()) == set(SCOPE.split())

    # userinfo
    claims = client.userinfo()
    assert claims["sub"] == "student-0001"
    assert claims["email"] == "mei-hua.lin@example.test"

    # call the resource with the bearer token
    courses = client.get("/api/courses")
    assert [c["id"] for c in courses] == ["c-101", "c-205", "c-310", "c-400"]
    anonymous = client.get("/api/courses", anonymous=True)
    assert all(c["published"] for c in anonymous) and len(anonymous) == 3

    # refresh: a new access token, still bound to the API, and it works there
    refreshed = client.refresh()
    assert refreshed.access_token != tokens.access_token
    assert refreshed.resource == auth_server.url
    assert client.get("/api/courses/c-205")["title"].startswith("Futures")

    # introspect: active, and the resource binding is visible as the audience
    info = client.introspect()
    assert info["active"] is True
    assert info["aud"] == auth_server.url
    assert info["client_id"] == reg.client_id
    assert info["scope"] == "courses:read"

    # revoke (logout), then the revoked token is refused by the resource and introspection
    old_access = refreshed.access_token
    old_refresh = client.tokens().refresh_token
    assert client.logout() is True
    with pytest.raises(NotLoggedIn):
        client.tokens()
    resp = requests.get(
        f"{auth_server.url}/api/courses",
        headers={"Authorization": f"Bearer {old_access}"},
        timeout=5,
    )
    assert resp.status_code == 401
    challenge = resp.headers["WWW-Authenticate"]
    assert 'error="invalid_token"' in challenge
    metadata_url = f"{auth_server.url}/.well-known/oauth-protected-resource"
    assert f'resource_metadata="{metadata_url}"' in challenge

    auth = {"client_id": reg.client_id}
    if confidential:
        auth["client_secret"] = reg.client_secret or ""
    for token in (old_access, old_refresh):
        r = requests.post(meta.introspection_endpoint, data={"token": token, **auth}, timeout=5)
        assert r.json() == {"active": False}

    # the registration is remembered across client objects; nothing registered twice
    again = AcademyClient(auth_server.url, scope=SCOPE)
    assert again.registration() is not None
    assert again.registration().client_id == reg.client_id
    after = auth_server.stats()
    assert after["registrations"] - before["registrations"] == 1
    assert after["revocations"] - before["revocations"] >= 2


def test_public_client_sends_pkce_and_no_secret(auth_server, browser, home) -> None:
    """A public client has no secret, so PKCE is what protects its code: a code exchanged with
    the wrong verifier must fail at the real server."""
    from marketframe.academy import InvalidGrant, _grants
    from marketframe.academy._flow import parse_authorization_response

    client = AcademyClient(auth_server.url, scope=SCOPE, confidential=False)
    request = client.start_login()
    code = parse_authorization_response(browser.redirect_for(request.url), request)
    with pytest.raises(InvalidGrant) as exc:
        _grants.exchange_code(
            client.metadata,
            client.register(),
            code=code,
            redirect_uri=request.redirect_uri,
            code_verifier="x" * 64,
            resource=request.resource,
            scope=request.scope,
            timeout=5,
        )
    assert "log in again" in str(exc.value)


def test_login_convenience_reuses_stored_tokens(auth_server, browser, home) -> None:
    from marketframe.academy import login

    client = login(auth_server.url, scope=SCOPE, open_browser=browser)
    assert client.logged_in
    count = auth_server.stats()["token_requests"]

    def no_browser(url: str) -> bool:
        raise AssertionError("a second login() must not open the browser")

    again = login(auth_server.url, scope=SCOPE, open_browser=no_browser)
    assert again.tokens().access_token == client.tokens().access_token
    assert auth_server.stats()["token_requests"] == count
