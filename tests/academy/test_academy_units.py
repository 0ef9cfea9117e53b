"""Pure parts: WWW-Authenticate parsing, metadata merging, well-known URLs, token sets,
discovery failures against the real server."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from marketframe.academy import AcademyClient, DiscoveryError, TokenSet, parse_www_authenticate
from marketframe.academy._challenge import bearer_challenge
from marketframe.academy._discovery import merge_metadata, normalize_url, well_known_url
from marketframe.exceptions import InvalidClient, InvalidScope, OAuthError, oauth_error


def test_bearer_challenge_with_escapes_and_commas() -> None:
    header = (
        'Bearer realm="academy", error="insufficient_scope", '
        'error_description="needs \\"account:read\\", sorry", scope="account:read", '
        'resource_metadata="https://a.example/.well-known/oauth-protected-resource"'
    )
    assert bearer_challenge(header) == {
        "realm": "academy",
        "error": "insufficient_scope",
        "error_description": 'needs "account:read", sorry',
        "scope": "account:read",
        "resource_metadata": "https://a.example/.well-known/oauth-protected-resource",
    }


def test_several_challenges_and_token68() -> None:
    chs = parse_www_authenticate(
        'Negotiate abc==, Basic realm="x", Bearer error=invalid_token, DPoP algs="ES256 PS256"'
    )
    assert [(c.scheme, c.token68) for c in chs] == [
        ("negotiate", "abc=="),
        ("basic", None),
        ("bearer", None),
        ("dpop", None),
    ]
    assert chs[2].params == {"error": "invalid_token"}
    assert chs[3].params == {"algs": "ES256 PS256"}
    assert bearer_challenge('Basic realm="x"') == {}
    assert bearer_challenge(None) == {}
    assert parse_www_authenticate("Bearer") == [parse_www_authenticate("bearer")[0]]


@settings(deadline=None)  # a property, not a timing: the machine is shared (no time limit)
@given(st.text(max_size=200))
def test_parser_never_fails(header: str) -> None:
    for ch in parse_www_authenticate(header):
        assert ch.scheme


def test_merge_keeps_authorization_server_metadata_authoritative() -> None:
    as_meta = {"issuer": "https://i", "token_endpoint": "https://i/token"}
    oidc = {
        "issuer": "https://i",
        "token_endpoint": "https://evil/token",
        "userinfo_endpoint": "https://i/me",
    }
    assert merge_metadata(as_meta, oidc) == {
        "issuer": "https://i",
        "token_endpoint": "https://i/token",
        "userinfo_endpoint": "https://i/me",
    }


def test_well_known_urls() -> None:
    assert well_known_url("https://a.example/", "oauth-authorization-server") == (
        "https://a.example/.well-known/oauth-authorization-server"
    )
    assert well_known_url("https://a.example/tenant/x", "oauth-protected-resource") == (
        "https://a.example/.well-known/oauth-protected-resource/tenant/x"
    )
    assert normalize_url("HTTPS://A.Example/p/?q=1#f") == "https://a.example/p"
    with pytest.raises(DiscoveryError):
        normalize_url("ftp://a.example")


def test_discovery_fails_clearly_where_there_is_no_metadata(auth_server, home) -> None:
    with pytest.raises(DiscoveryError, match="no authorization-server metadata"):
        _ = AcademyClient(auth_server.url + "/nothing-here").metadata


def test_discovery_fails_clearly_when_nothing_listens(home) -> None:
    with pytest.raises(DiscoveryError, match="cannot reach"):
        _ = AcademyClient("http://127.0.0.1:9", timeout=2).metadata


def test_oauth_errors_are_typed() -> None:
    assert isinstance(oauth_error("invalid_client", "who?"), InvalidClient)
    assert isinstance(oauth_error("invalid_scope"), InvalidScope)
    err = oauth_error("slow_down", "wait", status=400, endpoint="token endpoint")
    assert type(err) is OAuthError and "slow_down" in str(err) and "HTTP 400" in str(err)


def test_token_set_from_responses() -> None:
    first = TokenSet.from_response(
        {"access_token": "a1", "refresh_token": "r1", "expires_in": 60, "token_type": "Bearer"},
        resource="https://api",
        requested_scope="openid x:read",
        now=1000.0,
    )
    assert first.expires_at == 1060.0 and first.scope == "openid x:read"
    assert first.expiring(skew=60, now=1000.0) and not first.expiring(skew=59, now=1000.0)
    # a refresh response without refresh_token or scope keeps the old ones
    second = TokenSet.from_response(
        {"access_token": "a2", "expires_in": 60}, resource="https://api", previous=first, now=2000.0
    )
    assert second.refresh_token == "r1" and second.scope == "openid x:read"
    assert second.requested_scope == "openid x:read"
    assert "a2" not in repr(second) and "r1" not in repr(second)
    assert TokenSet.from_dict(second.to_dict()) == second
