"""The sandbox's query-string rules and its error: what the service answers a bad request with.

Handlers read parameters through :class:`Query` (the service's parsing and messages) and raise
:class:`ServiceError` with the status and message the service answers with.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Any, TypeVar

#: A JSON object as the service sends it (its values of any JSON type).
Json = dict[str, Any]
#: The path parameters of a matched route, by name.
Match = dict[str, str]

T = TypeVar("T")

DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class ServiceError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def bad(message: str) -> ServiceError:
    return ServiceError(400, message)


class Query:
    """Query-string access with the service's parsing rules."""

    def __init__(self, items: dict[str, str]) -> None:
        self.items = items

    def only(self, keys: tuple[str, ...]) -> None:
        """Refuse keys outside ``keys``, as a service whose DTO is a whitelist does (NestJS's
        ``forbidNonWhitelisted``: 400 ``property <key> should not exist``)."""
        extra = sorted(k for k in self.items if k not in keys)
        if extra:
            raise bad(f"property {extra[0]} should not exist")

    def get(self, name: str) -> str | None:
        return self.items.get(name)

    def choice(self, name: str, allowed: tuple[str, ...]) -> str | None:
        """An optional value from ``allowed``."""
        value = self.items.get(name)
        if value is not None and value not in allowed:
            raise bad(f"Invalid {name} '{value}'; allowed values: {', '.join(allowed)}")
        return value

    def pick(self, name: str, allowed: tuple[str, ...], default: str) -> str:
        """A value from ``allowed``, ``default`` when absent."""
        value = self.choice(name, allowed)
        return default if value is None else value

    def need(self, name: str, allowed: tuple[str, ...]) -> str:
        """A required value from ``allowed``."""
        value = self.choice(name, allowed)
        if value is None:
            raise bad(f"{name} is required; allowed values: {', '.join(allowed)}")
        return value

    def flag(self, name: str) -> bool | None:
        return self._read(name, _flag)

    def whole(self, name: str, default: int | None = None, minimum: int = 0) -> int:
        """A whole number; required when there is no ``default``."""
        value = self.items.get(name)
        if value is None:
            if default is None:
                raise bad(f"{name} is required (a whole number)")
            return default
        try:
            n = int(value)
        except ValueError:
            raise bad(f"Invalid {name} '{value}': expected a whole number") from None
        if n < minimum:
            raise bad(f"Invalid {name} '{value}': must be at least {minimum}")
        return n

    def number(self, name: str) -> float | None:
        return self._read(name, _number)

    def day(self, name: str) -> date | None:
        return self._read(name, _day)

    def _read(self, name: str, parse: Callable[[str, str], T]) -> T | None:
        """An optional value: None when absent, else read by ``parse`` (given the name for
        the service's 400)."""
        value = self.items.get(name)
        return None if value is None else parse(name, value)

    def need_day(self, name: str) -> date:
        value = self.day(name)
        if value is None:
            raise bad(f"{name} is required (yyyy-MM-dd)")
        return value


def _flag(name: str, value: str) -> bool:
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise bad(f"Invalid {name} '{value}'; allowed values: true, false")


def _number(name: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise bad(f"Invalid {name} '{value}': expected a number") from None


def _day(name: str, value: str) -> date:
    if not DATE_RE.match(value):
        raise bad(f"Invalid {name} '{value}': expected yyyy-MM-dd")
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise bad(f"Invalid {name} '{value}': not a calendar date") from None
