"""The credential a client sends: an API key, a bearer token or an SDK token (exactly one).

The service (and the official SDKs) accept three kinds of credential (sdk-parity.md §6):

- ``api_key``: REST header ``X-API-KEY: <key>``, WebSocket ``auth`` data ``{"apikey": <key>}``;
- ``bearer_token``: ``Authorization: Bearer <token>``, ``{"token": <token>}``;
- ``sdk_token``: ``X-SDK-TOKEN: <token>``, ``{"sdkToken": <token>}``.

:func:`resolve` picks the one credential of a client, from its arguments or else from the
environment, and refuses none or several with a :class:`ConfigurationError` before anything is
sent. A :class:`Credential` never shows its secret: its ``repr``/``str`` name the kind only,
and every message about a bad value says what is wrong without quoting it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from marketframe.exceptions import ConfigurationError, InvalidParams

#: the kinds, in the order messages name them (the keyword arguments of ``Client``)
KINDS = ("api_key", "bearer_token", "sdk_token")
#: the environment variable of each kind (read only when no argument is given)
ENV = {
    "api_key": "MARKETFRAME_API_KEY",
    "bearer_token": "MARKETFRAME_BEARER_TOKEN",
    "sdk_token": "MARKETFRAME_SDK_TOKEN",
}
#: the REST header of each kind, and the prefix of its value
HEADERS = {
    "api_key": ("X-API-KEY", ""),
    "bearer_token": ("Authorization", "Bearer "),
    "sdk_token": ("X-SDK-TOKEN", ""),
}
#: the field of the WebSocket ``auth`` frame's ``data`` for each kind
WS_FIELDS = {"api_key": "apikey", "bearer_token": "token", "sdk_token": "sdkToken"}
_NAMES = {"api_key": "API key", "bearer_token": "bearer token", "sdk_token": "SDK token"}
_WHERE = "Client"


@dataclass(frozen=True)
class Credential:
    """One credential: its ``kind`` (one of :data:`KINDS`) and its ``secret`` (never shown)."""

    kind: str
    secret: str = field(repr=False)

    def __repr__(self) -> str:
        return f"Credential(kind={self.kind!r}, secret=***)"

    __str__ = __repr__

    @property
    def header(self) -> tuple[str, str]:
        """The REST header (name, value) that carries it."""
        name, prefix = HEADERS[self.kind]
        return name, prefix + self.secret

    def ws_auth(self) -> dict[str, str]:
        """The ``data`` of the WebSocket ``auth`` frame."""
        return {WS_FIELDS[self.kind]: self.secret}


def clean(value: object, source: str, name: str = "API key") -> str:
    """A credential value from ``source`` (an argument or a variable name), cleaned.

    Surrounding whitespace (a trailing newline or space from a ``.env`` file) is stripped; a
    value of the wrong type, blank, or with whitespace, control or non-ASCII characters inside
    it, is refused with a message that names the problem and never the value."""
    if not isinstance(value, str):
        raise InvalidParams(
            _WHERE,
            source,
            f"must be a str, got a {type(value).__name__} (value not shown)",
            f"the {name} as a string",
        )
    text = value.strip()
    if not text:
        raise ConfigurationError(f"the {name} given by {source} is empty")
    if any(c.isspace() for c in text):
        raise InvalidParams(
            _WHERE,
            source,
            "has whitespace inside it (value not shown)",
            f"the {name} exactly as issued, without spaces or line breaks",
        )
    if not all(" " < c < "\x7f" for c in text):
        raise InvalidParams(
            _WHERE,
            source,
            "has control or non-ASCII characters (value not shown)",
            f"the {name} exactly as issued (printable ASCII)",
        )
    return text


def _several(names: list[str]) -> ConfigurationError:
    return ConfigurationError(
        f"several credentials given ({', '.join(names)}); a client sends exactly one"
    )


def resolve(
    api_key: object = None,
    bearer_token: object = None,
    sdk_token: object = None,
) -> Credential:
    """The one credential of a client.

    Precedence: the arguments, when any is given (not ``None``), and then the environment is
    not read at all; else the environment variables of :data:`ENV` (a variable set to a blank
    value counts as unset). Exactly one must be given, in whichever of the two places is
    used: none or several raise :class:`ConfigurationError` naming the three kinds."""
    given = {
        k: v
        for k, v in zip(KINDS, (api_key, bearer_token, sdk_token), strict=True)
        if v is not None
    }
    if len(given) > 1:
        raise _several(list(given))
    if given:
        ((kind, value),) = given.items()
        if isinstance(value, str) and not value.strip():
            raise ConfigurationError(f"no credential given ({kind} is empty)")
        return Credential(kind, clean(value, kind, _NAMES[kind]))
    found = {k: os.environ[v] for k, v in ENV.items() if os.environ.get(v, "").strip()}
    if len(found) > 1:
        raise _several([ENV[k] for k in found])
    if not found:
        raise ConfigurationError("no credential given")
    ((kind, value),) = found.items()
    return Credential(kind, clean(value, ENV[kind], _NAMES[kind]))


def from_environment() -> bool:
    """Whether any credential variable of :data:`ENV` is set (non-blank)."""
    return any(os.environ.get(v, "").strip() for v in ENV.values())
