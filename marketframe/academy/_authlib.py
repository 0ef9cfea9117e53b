"""The parts of authlib the client uses, imported in this one place: without the ``academy``
extra, importing :mod:`marketframe.academy` raises
:class:`~marketframe.exceptions.ExtraNotInstalled` naming it, not a bare
``ModuleNotFoundError``."""

from __future__ import annotations

from marketframe.exceptions import ExtraNotInstalled

try:
    from authlib.common.errors import AuthlibBaseError
    from authlib.common.security import generate_token
    from authlib.integrations.requests_client import OAuth2Session
    from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
    from authlib.oauth2.rfc7636 import create_s256_code_challenge
except ModuleNotFoundError as exc:
    if (exc.name or "").split(".")[0] != "authlib":
        raise
    raise ExtraNotInstalled("authlib", "marketframe.academy") from None

__all__ = [
    "AuthlibBaseError",
    "OAuth2Session",
    "create_s256_code_challenge",
    "generate_token",
    "prepare_grant_uri",
]
