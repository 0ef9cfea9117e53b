"""The operations listed by the platform's ``openapi.json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Operation", "operations"]

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str | None
    summary: str | None
    scopes: tuple[str, ...]


def operations(spec: dict[str, Any]) -> list[Operation]:
    """Every (method, path) in an OpenAPI 3 document, sorted by path then method."""
    out: list[Operation] = []
    paths = spec.get("paths") or {}
    global_security = spec.get("security") or []
    for path, item in paths.items():
        if not isinstance(item, dict):
            continue
        for method in _METHODS:
            op = item.get(method)
            if not isinstance(op, dict):
                continue
            security = op.get("security", global_security) or []
            scopes = sorted(
                {
                    s
                    for req in security
                    if isinstance(req, dict)
                    for names in req.values()
                    for s in (names or [])
                }
            )
            out.append(
                Operation(
                    method=method.upper(),
                    path=str(path),
                    operation_id=op.get("operationId"),
                    summary=op.get("summary"),
                    scopes=tuple(scopes),
                )
            )
    out.sort(key=lambda o: (o.path, _METHODS.index(o.method.lower())))
    return out
