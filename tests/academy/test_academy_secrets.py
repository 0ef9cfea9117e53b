"""No token, secret, code or verifier in logs, exception texts, reprs or printed output; the
token file is private (0600 in a 0700 directory)."""

from __future__ import annotations

import logging
import re
import stat
from urllib.parse import parse_qs, urlsplit

import pytest

from marketframe.academy import (
    AcademyClient,
    AcademyError,
    InvalidGrant,
    StateMismatch,
    TokenStore,
    _grants,
)


def _secrets_of(client: AcademyClient) -> list[str]:
    tokens = client.store.tokens()
    reg = client.registration()
    values = []
    if tokens:
        values += [tokens.access_token, tokens.refresh_token or "", tokens.id_token or ""]
    if reg and reg.client_secret:
        values.append(reg.client_secret)
    return [v for v in values if v]


@pytest.mark.parametrize("confidential", [False, True], ids=["public", "confidential"])
def test_no_secret_in_logs_errors_or_output(
    auth_server, browser, home, caplog, capfd, confidential: bool
) -> None:
    caplog.set_level(logging.DEBUG)  # everything: ours, urllib3's, authlib's
    seen: list[str] = []
    codes: list[str] = []
    original = browser.tamper

    def spy(url: str) -> str:
        q = parse_qs(urlsplit(url).query)
        codes.extend(q.get("code", []))
        seen.append(url)
        return original(url) if original else url

    browser.tamper = spy
    client = AcademyClient(
        auth_server.url, scope="openid profile email courses:read", confidential=confidential
    )
    request = client.start_login()
    verifier, state = request.code_verifier, request.state
    client.finish_login(request, browser.redirect_for(request.url))
    errors: list[BaseException] = []
    secrets = _secrets_of(client) + [verifier, state]  # gathered after every step (rotation)
    for step in (
        client.userinfo,
        lambda: client.get("/api/courses"),
        client.refresh,
        client.introspect,
    ):
        step()
        secrets += _secrets_of(client)
    assert client._userinfo_tokens is not None
    secrets += [client._userinfo_tokens.access_token] + codes
    first_tokens = client.tokens()
    # error paths: an insufficient scope, a replayed code, a dead refresh token
    for action in (
        lambda: client.get("/api/account"),
        lambda: client.finish_login(request, seen[0]),
        lambda: _grants.refresh(
            client.metadata,
            client.registration(),
            first_tokens.__class__(access_token="x", refresh_token="bogus-refresh"),
            resource=client.resource,
            timeout=5,
        ),
    ):
        with pytest.raises(AcademyError) as exc:
            action()
        errors.append(exc.value)
    # a forged redirect carrying a real-looking code
    forged = seen[0].replace(f"state={state}", "state=forged")
    with pytest.raises(StateMismatch) as exc2:
        client.finish_login(request, forged)
    errors.append(exc2.value)
    secrets += _secrets_of(client)
    client.logout()

    out, err = capfd.readouterr()
    texts = {
        "log": caplog.text,
        "stdout": out,
        "stderr": err,
        **{f"error {type(e).__name__}": f"{e} {e!r} {e.args!r}" for e in errors},
        "repr tokens": repr(first_tokens),
        "repr registration": repr(client.registration()),
        "repr request": repr(request),
        "repr client": repr(client),
    }
    assert len(secrets) >= 6
    for where, text in texts.items():
        for secret in secrets:
            assert secret not in text, f"a secret leaked into {where}"
    assert any(isinstance(e, InvalidGrant) for e in errors)


def test_token_file_is_private(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope="openid courses:read", confidential=True)
    client.login(open_browser=browser)
    path = client.store.path
    assert path.parent == home
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert re.fullmatch(r"[0-9a-f]{16}\.json", path.name)
    # refresh rewrites the file atomically; the mode survives and no temp file is left over
    client.refresh()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in home.iterdir() if not p.name.endswith(".lock")) == [path.name]


def test_token_file_left_readable_is_tightened(tmp_path, caplog) -> None:
    store = TokenStore("http://127.0.0.1:1", home=tmp_path / "h")
    store.update(tokens={"access_token": "abc"})
    store.path.chmod(0o644)
    caplog.set_level(logging.WARNING)
    assert store.tokens() is not None
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert "restricting it to 0600" in caplog.text
    assert "abc" not in caplog.text


def test_home_is_taken_from_the_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MARKETFRAME_ACADEMY_HOME", str(tmp_path / "env-home"))
    assert TokenStore("http://a.example").path.parent == tmp_path / "env-home"
    assert TokenStore("http://a.example", home=tmp_path / "x").path.parent == tmp_path / "x"
    assert TokenStore("http://a.example").path != TokenStore("http://b.example").path
