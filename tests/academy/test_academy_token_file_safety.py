"""The token file does not trust its surroundings (issue 17.11): symlinks are refused, the
directory is private or refused, another user's file is refused, and malformed content is a
typed error that says how to log in again."""

from __future__ import annotations

import json
import os
import stat

import pytest

from marketframe.academy import AcademyClient, TokenStore, TokenStoreError

URL = "http://127.0.0.1:1"


def _mode(path) -> int:  # type: ignore[no-untyped-def]
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757, 0o722], ids=oct)
def test_a_directory_others_may_write_to_is_refused(tmp_path, mode: int) -> None:
    home = tmp_path / "shared"
    home.mkdir()
    home.chmod(mode)
    store = TokenStore(URL, home=home)
    with pytest.raises(TokenStoreError, match="writable by others") as info:
        store.update(tokens={"access_token": "a-token-value"})
    assert "chmod 700" in str(info.value)
    assert not store.path.exists()
    assert _mode(home) == mode  # not silently changed either


def test_a_directory_others_may_read_is_tightened(tmp_path, caplog) -> None:
    home = tmp_path / "readable"
    home.mkdir()
    home.chmod(0o755)
    TokenStore(URL, home=home).update(tokens={"access_token": "a-token-value"})
    assert _mode(home) == 0o700
    assert "restricting it to 0700" in caplog.text


def test_a_new_directory_is_created_private(tmp_path) -> None:
    home = tmp_path / "a" / "b"
    TokenStore(URL, home=home).update(tokens={"access_token": "a-token-value"})
    assert _mode(home) == 0o700


def test_a_symlinked_token_file_is_refused_and_its_target_untouched(tmp_path) -> None:
    target = tmp_path / "system-file"
    target.write_text('{"tokens": {"access_token": "planted-token-value"}}')
    target.chmod(0o644)
    store = TokenStore(URL, home=tmp_path / "home")
    store.update(tokens={"access_token": "a-token-value"})  # creates the private directory
    store.path.unlink()
    store.path.symlink_to(target)
    with pytest.raises(TokenStoreError, match="symbolic link") as info:
        store.tokens()
    assert "log in again" in str(info.value)
    assert _mode(target) == 0o644
    assert "planted-token-value" in target.read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_token_file_of_another_user_is_refused(tmp_path) -> None:
    store = TokenStore(URL, home=tmp_path / "home")
    store.update(tokens={"access_token": "a-token-value"})
    os.chown(store.path, 65534, 65534)
    with pytest.raises(TokenStoreError, match="not a regular file of this user"):
        store.tokens()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_token_file_is_a_typed_error(tmp_path) -> None:
    store = TokenStore(URL, home=tmp_path / "home")
    store.update(tokens={"access_token": "a-token-value"})
    store.path.chmod(0)
    with pytest.raises(TokenStoreError, match="cannot read token file"):
        store.tokens()


MALFORMED = [
    b"not json at all",
    b"[1, 2, 3]",
    b"\xff\xfe garbage",
    json.dumps({"tokens": "a string"}).encode(),
    json.dumps({"tokens": {}}).encode(),
    json.dumps({"tokens": {"access_token": 42}}).encode(),
    json.dumps({"tokens": {"access_token": "tok-value", "expires_at": "soon"}}).encode(),
    json.dumps({"tokens": {"access_token": "tok-value", "refresh_token": ["x"]}}).encode(),
    json.dumps({"tokens": {"access_token": "tok-value", "obtained_at": {"a": 1}}}).encode(),
]


@pytest.mark.parametrize("content", MALFORMED)
def test_malformed_tokens_are_a_typed_error_saying_log_in_again(tmp_path, content) -> None:
    store = TokenStore(URL, home=tmp_path / "home")
    store.update(tokens={"access_token": "a-token-value"})
    store.path.write_bytes(content)
    with pytest.raises(TokenStoreError, match="log in again"):
        store.tokens()


@pytest.mark.parametrize(
    "registration",
    [{}, {"issuer": URL}, "x", {"issuer": URL, "client_id": "c", "redirect_uris": 5}],
)
def test_a_malformed_registration_is_a_typed_error(tmp_path, registration) -> None:
    client = AcademyClient(URL, home=tmp_path / "home")  # the file is read before any request
    client.store.update(registration=registration)
    with pytest.raises(TokenStoreError, match="log in again"):
        client.registration()
