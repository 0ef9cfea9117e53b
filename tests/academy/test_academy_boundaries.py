"""What the client talks to, and what it never attempts; refreshes racing in two clients."""

from __future__ import annotations

import re
import threading

from marketframe.academy import AcademyClient

# Everything the client may request: discovery, the endpoints the metadata names, the API.
ALLOWED = re.compile(
    r"^(GET /\.well-known/(oauth-protected-resource|oauth-authorization-server"
    r"|openid-configuration)"
    r"|POST /api/oauth/(register|token|revoke|introspect)"
    r"|GET /api/oauth/userinfo"
    r"|GET /openapi\.json"
    r"|GET /api/(courses|courses/[^/]+|account))$"
)


def test_client_only_uses_discovered_endpoints(auth_server, browser, home) -> None:
    client = AcademyClient(auth_server.url, scope="openid profile courses:read", confidential=True)
    client.login(open_browser=browser)
    client.userinfo()
    client.get("/api/courses")
    client.refresh()
    client.introspect()
    client.operations()
    client.logout()
    requests_made = auth_server.stats()["client_requests"]
    assert "POST /api/oauth/token" in requests_made
    unexpected = [r for r in requests_made if not ALLOWED.match(r)]
    # in particular no agent-authentication extension (identity assertion, service
    # authentication, anonymous claim): it is unsupported by the platform and never attempted
    assert unexpected == []
    assert not [r for r in requests_made if re.search(r"agent|assert|anonymous|claim", r)]


def test_concurrent_refreshes_do_not_lose_the_rotated_refresh_token(
    auth_server, browser, home
) -> None:
    """Public clients get a new refresh token at every refresh and the old one dies (reusing it
    revokes the whole grant at this server). Two clients sharing the token file -- a notebook
    and a terminal -- must serialise their refreshes through the file lock."""
    AcademyClient(auth_server.url, scope="openid courses:read").login(open_browser=browser)
    errors: list[BaseException] = []

    def worker() -> None:
        c = AcademyClient(auth_server.url, scope="openid courses:read", refresh_skew=10_000)
        try:
            for _ in range(3):
                c.access_token()  # always "about to expire": refreshes every time
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == []
    final = AcademyClient(auth_server.url)
    assert len(final.get("/api/courses")) == 4
    assert final.introspect("refresh_token")["active"] is True
