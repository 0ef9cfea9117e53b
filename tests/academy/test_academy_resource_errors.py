"""The resource's 401 / 403 challenges as typed errors, anonymous access, frames, openapi."""

from __future__ import annotations

import pytest
import requests

from marketframe.academy import AcademyClient, AcademyError, InsufficientScope, ResourceError


def test_missing_scope_is_insufficient_scope(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope="openid courses:read")
    client.login(open_browser=browser)
    with pytest.raises(InsufficientScope) as exc:
        client.get("/api/account")
    err = exc.value
    assert err.status == 403
    assert err.error == "insufficient_scope"
    assert err.scope == "account:read"
    assert err.resource_metadata == f"{auth_server.url}/.well-known/oauth-protected-resource"
    assert "--scope account:read" in str(err)


def test_with_the_scope_the_call_succeeds(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope="openid account:read courses:read")
    client.login(open_browser=browser)
    assert client.get("/api/account") == {
        "sub": "student-0001",
        "email": "mei-hua.lin@example.test",
        "plan": "student",
        "anonymous": False,
    }


def test_anonymous_requests_get_no_challenge(auth_server) -> None:
    resp = requests.get(f"{auth_server.url}/api/account", timeout=5)
    assert resp.status_code == 200 and "WWW-Authenticate" not in resp.headers
    client = AcademyClient(auth_server.url)
    assert client.get("/api/account", anonymous=True) == {"anonymous": True}


def test_other_api_errors_are_resource_errors(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope="openid courses:read")
    client.login(open_browser=browser)
    with pytest.raises(ResourceError) as exc:
        client.get("/api/courses/c-999")
    assert exc.value.status == 404
    assert type(exc.value) is ResourceError


def test_token_is_never_sent_to_another_origin(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope="openid courses:read")
    client.login(open_browser=browser)
    with pytest.raises(AcademyError, match="another origin"):
        client.get("http://127.0.0.1:9/api/courses")


@pytest.mark.parametrize("backend", ["pandas", "polars"])
def test_frame_of_a_list_response(auth_server, browser, home, backend: str) -> None:
    if backend == "polars":
        pytest.importorskip("polars")
    client = AcademyClient(auth_server.url, scope="openid courses:read")
    client.login(open_browser=browser)
    frame = client.load("/api/courses", backend=backend)  # type: ignore[arg-type]
    assert list(frame.columns) == ["id", "title", "level", "lessons", "published"]
    assert len(frame) == 4
    assert list(frame["id"]) == ["c-101", "c-205", "c-310", "c-400"]
    with pytest.raises(AcademyError, match="not a list"):
        client.load("/api/courses/c-101")


def test_frame_is_a_deprecated_alias_of_load(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope="openid courses:read")
    client.login(open_browser=browser)
    with pytest.warns(DeprecationWarning, match=r"use AcademyClient\.load\(\)"):
        old = client.frame("/api/courses")
    assert old.equals(client.load("/api/courses"))


def test_operations_of_openapi(auth_server) -> None:
    ops = AcademyClient(auth_server.url).operations()
    assert [(o.method, o.path) for o in ops] == [
        ("GET", "/api/account"),
        ("GET", "/api/courses"),
        ("GET", "/api/courses/{course_id}"),
    ]
    assert ops[0].operation_id == "getAccount" and ops[0].scopes == ("account:read",)
