"""The browser leg's checks: forged state, wrong or missing iss, an error redirect -- each is a
typed exception and none is followed by a token request (the server's counter proves it)."""

from __future__ import annotations

import re

import pytest

from marketframe.academy import (
    AcademyClient,
    AcademyError,
    AuthorizationError,
    InvalidScope,
    IssuerMismatch,
    LoginTimeout,
    NotLoggedIn,
    StateMismatch,
)

SCOPE = "openid courses:read"


def _replace_param(url: str, name: str, value: str | None) -> str:
    url = re.sub(rf"([?&]){name}=[^&]*&?", r"\1", url).rstrip("&?")
    if value is None:
        return url
    return url + ("&" if "?" in url else "?") + f"{name}={value}"


def test_forged_state_is_rejected_without_token_request(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    client.register()
    browser.tamper = lambda url: _replace_param(url, "state", "forged-by-an-attacker")
    before = auth_server.stats()["token_requests"]
    with pytest.raises(StateMismatch) as exc:
        client.login(open_browser=browser, timeout=10)
    assert "start the login again" in str(exc.value)
    assert auth_server.stats()["token_requests"] == before
    with pytest.raises(NotLoggedIn):
        client.tokens()


def test_missing_state_is_rejected(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    browser.tamper = lambda url: _replace_param(url, "state", None)
    before = auth_server.stats()["token_requests"]
    with pytest.raises(StateMismatch):
        client.login(open_browser=browser, timeout=10)
    assert auth_server.stats()["token_requests"] == before


def test_wrong_iss_is_rejected_without_token_request(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    browser.tamper = lambda url: _replace_param(url, "iss", "https%3A%2F%2Fevil.example")
    before = auth_server.stats()["token_requests"]
    with pytest.raises(IssuerMismatch) as exc:
        client.login(open_browser=browser, timeout=10)
    assert exc.value.got == "https://evil.example"
    assert exc.value.expected == auth_server.url
    assert auth_server.stats()["token_requests"] == before


def test_missing_iss_is_rejected_when_the_server_promises_it(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    assert client.metadata.iss_parameter_supported
    browser.tamper = lambda url: _replace_param(url, "iss", None)
    before = auth_server.stats()["token_requests"]
    with pytest.raises(IssuerMismatch):
        client.login(open_browser=browser, timeout=10)
    assert auth_server.stats()["token_requests"] == before


def test_real_redirect_carries_iss(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    request = client.start_login()
    redirect = browser.redirect_for(request.url)
    assert "iss=" in redirect and "code=" in redirect


def test_error_redirect_is_a_clear_exception_and_no_token_request(
    auth_server, browser, home
) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    browser.decision = "deny"
    before = auth_server.stats()["token_requests"]
    with pytest.raises(AuthorizationError) as exc:
        client.login(open_browser=browser, timeout=10)
    assert type(exc.value) is AuthorizationError
    assert exc.value.error == "access_denied"
    assert "declined" in (exc.value.description or "")
    assert "approve it in the browser" in str(exc.value)
    assert auth_server.stats()["token_requests"] == before


def test_forged_error_redirect_is_a_state_mismatch(auth_server, browser, home) -> None:
    """An attacker's error redirect (wrong state) is not reported as the server's answer."""
    client = AcademyClient(auth_server.url, scope=SCOPE)
    browser.decision = "deny"
    browser.tamper = lambda url: _replace_param(url, "state", "nope")
    with pytest.raises(StateMismatch):
        client.login(open_browser=browser, timeout=10)


def test_pasted_url_mode(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    shown: list[str] = []

    def read_line(prompt: str) -> str:
        url = next(
            line
            for text in shown
            for line in text.splitlines()
            if line.startswith(f"{auth_server.url}/oauth/authorize?")
        )
        # the user opens the URL elsewhere and pastes the address the browser ended on
        return "  " + browser.redirect_for(url) + "\n"

    tokens = client.login(no_browser=True, read_line=read_line, show=shown.append)
    assert tokens.access_token
    assert client.get("/api/courses")
    assert any(f"{auth_server.url}/oauth/authorize?" in text for text in shown)


def test_pasted_url_must_be_the_redirect(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    with pytest.raises(AcademyError, match="not the redirect URL"):
        client.login(
            no_browser=True,
            read_line=lambda _p: "https://example.test/elsewhere?code=1",
            show=lambda _t: None,
        )


def test_unknown_scope_is_refused_before_the_browser_opens(auth_server, home) -> None:
    client = AcademyClient(auth_server.url, scope="openid courses:teleport")

    def browser(url: str) -> bool:
        raise AssertionError("must not open the browser for a scope the platform lacks")

    with pytest.raises(InvalidScope, match="courses:teleport"):
        client.login(open_browser=browser)


def test_browser_that_never_comes_back_times_out(auth_server, home) -> None:
    client = AcademyClient(auth_server.url, scope=SCOPE)
    with pytest.raises(LoginTimeout, match="no-browser"):
        client.login(open_browser=lambda url: True, timeout=0.5)
