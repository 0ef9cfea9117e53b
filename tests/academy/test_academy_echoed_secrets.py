"""A platform that echoes its input in error texts cannot leak secrets through our exceptions
(issue 17.10): the refresh token, the client secret and the bearer token are scrubbed from
``error_description``, challenges and bodies before they reach an exception."""

from __future__ import annotations

import pytest
import requests

from marketframe.academy import AcademyClient, AcademyError


def _everything(exc: BaseException) -> str:
    """Every text an exception exposes: str, repr, args, attributes, and the chained
    exceptions a traceback or a logger shows (cause, unsuppressed context)."""
    parts = [str(exc), repr(exc), repr(exc.args), repr(vars(exc))]
    chained = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    if chained is not None:
        parts.append(_everything(chained))
    return "\n".join(parts)


def test_echoed_secrets_are_scrubbed_from_errors(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, confidential=True)
    tokens = client.login(open_browser=browser)
    reg = client.registration()
    assert reg is not None and reg.client_secret and tokens.refresh_token
    secrets = [tokens.access_token, tokens.refresh_token, reg.client_secret]

    requests.post(f"{auth_server.url}/__test__/echo?on=1", timeout=10).raise_for_status()
    try:
        caught: list[AcademyError] = []
        for step in (client.refresh, client.introspect, lambda: client.get("/api/courses")):
            with pytest.raises(AcademyError) as info:
                step()
            caught.append(info.value)
    finally:
        requests.post(f"{auth_server.url}/__test__/echo?on=0", timeout=10).raise_for_status()

    # the server did echo (the texts carry its words), and nothing secret came through
    assert any("cannot accept" in str(e) for e in caught)
    for exc in caught:
        text = _everything(exc)
        for secret in secrets:
            assert secret not in text, f"{type(exc).__name__} leaks a secret"
