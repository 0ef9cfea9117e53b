"""The sandbox's credentials: an API key, a bearer token and an SDK token for every plan.

The service accepts three kinds of credential (sdk-parity.md §6), on REST as a header and on
the WebSocket in the ``auth`` frame:

============== =============================== ==========================
kind           REST header                     WebSocket ``auth`` data
============== =============================== ==========================
API key        ``X-API-KEY: <key>``            ``{"apikey": <key>}``
bearer token   ``Authorization: Bearer <t>``   ``{"token": <t>}``
SDK token      ``X-SDK-TOKEN: <t>``            ``{"sdkToken": <t>}``
============== =============================== ==========================

Each plan has one fixed credential of each kind (:data:`DEMO_CREDENTIALS`); a value is only
valid as its own kind (an API key sent as a bearer token is refused). A request that carries
no credential, a wrong one, or more than one is unauthenticated (401). Like the rest of the
sandbox, nothing here imports the package it emulates the service for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The fixed demo keys, one per plan. Basic gets 403 on snapshot and corporate actions.
DEMO_KEYS: dict[str, str] = {
    "basic": "sandbox-basic",
    "developer": "sandbox-developer",
    "advanced": "sandbox-advanced",
}
#: every kind of credential of every plan: ``DEMO_CREDENTIALS[kind][plan]`` (the kinds named
#: as the official SDK's and marketframe's ``Client`` arguments)
DEMO_CREDENTIALS: dict[str, dict[str, str]] = {
    "api_key": DEMO_KEYS,
    "bearer_token": {plan: f"sandbox-bearer-{plan}" for plan in DEMO_KEYS},
    "sdk_token": {plan: f"sandbox-sdk-{plan}" for plan in DEMO_KEYS},
}
_PLAN = {
    (kind, value): plan
    for kind, values in DEMO_CREDENTIALS.items()
    for plan, value in values.items()
}
#: the WebSocket ``auth`` frame's field of each kind
WS_FIELDS = {"apikey": "api_key", "token": "bearer_token", "sdkToken": "sdk_token"}


def _plan(given: list[tuple[str, Any]]) -> tuple[str, str | None]:
    """(the identity rate limits count under, the plan) of the credentials given; the plan
    is None unless exactly one valid credential was given."""
    if len(given) != 1:
        return "-", None
    kind, value = given[0]
    plan = _PLAN.get((kind, value)) if isinstance(value, str) else None
    return (f"{kind}:{value}", plan) if plan is not None else ("-", None)


def rest_plan(headers: Mapping[str, str]) -> tuple[str, str | None]:
    """The plan of a REST request's credential headers (header names are case-insensitive;
    so is the ``Bearer`` scheme, RFC 9110 §11.1). An empty header counts as absent."""
    given: list[tuple[str, Any]] = []
    if headers.get("X-API-KEY"):
        given.append(("api_key", headers["X-API-KEY"]))
    if headers.get("Authorization"):
        scheme, _, token = headers["Authorization"].partition(" ")
        given.append(("bearer_token", token.strip() if scheme.lower() == "bearer" else None))
    if headers.get("X-SDK-TOKEN"):
        given.append(("sdk_token", headers["X-SDK-TOKEN"]))
    return _plan(given)


def ws_plan(data: Mapping[str, Any]) -> str | None:
    """The plan of a WebSocket ``auth`` frame's ``data`` (exactly one of ``apikey``,
    ``token``, ``sdkToken``), None when it is refused."""
    given = [(kind, data[name]) for name, kind in WS_FIELDS.items() if data.get(name)]
    return _plan(given)[1]
