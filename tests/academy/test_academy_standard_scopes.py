"""Login against an authorization server configured the standard way (issue 11.11).

RFC 8414 lets an authorization server leave scopes out of its ``scopes_supported``; the API
scopes are then listed only in the resource's RFC 9728 metadata. A scope listed by either
document is accepted; one listed by neither is refused before any request.
"""

from __future__ import annotations

import pytest
import requests

from marketframe.academy import AcademyClient, InvalidScope


def test_the_standard_server_lists_api_scopes_only_on_the_resource(standard_server) -> None:
    base = standard_server.url
    server = requests.get(f"{base}/.well-known/oauth-authorization-server", timeout=10).json()
    resource = requests.get(f"{base}/.well-known/oauth-protected-resource", timeout=10).json()
    assert "courses:read" not in server["scopes_supported"]
    assert "openid" in server["scopes_supported"]
    assert "courses:read" in resource["scopes_supported"]


@pytest.mark.parametrize("confidential", [False, True], ids=["public", "confidential"])
def test_login_works_against_the_standard_server(
    standard_server, browser, home, confidential: bool
) -> None:
    client = AcademyClient(standard_server.url, confidential=confidential)
    tokens = client.login(open_browser=browser)
    assert "courses:read" in tokens.scopes
    assert [c["id"] for c in client.get("/api/courses")][:1] == ["c-101"]
    assert client.userinfo()["sub"] == "student-0001"


def test_two_step_login_works_against_the_standard_server(standard_server, browser, home) -> None:
    client = AcademyClient(standard_server.url)
    request = client.start_login()
    tokens = client.finish_login(request, browser.redirect_for(request.url))
    assert "courses:read" in tokens.scopes


def test_a_scope_neither_document_lists_is_refused_before_any_request(
    standard_server, home
) -> None:
    client = AcademyClient(standard_server.url, scope="openid courses:delete")
    before = standard_server.stats()
    with pytest.raises(InvalidScope, match="courses:delete"):
        client.start_login()
    after = standard_server.stats()
    assert after["registrations"] == before["registrations"]
    assert after["token_requests"] == before["token_requests"]
