"""The root of the error tree, bad input, and the redaction every message goes through."""

from __future__ import annotations

import difflib
import importlib.util
import re
from collections.abc import Iterable, Mapping

__all__ = [
    "MarketframeError",
    "with_next_step",
    "did_you_mean",
    "MarketframeWarning",
    "InvalidParams",
    "InvalidParamType",
    "DefinitionError",
    "MissingColumnsError",
    "EXTRAS",
    "ExtraNotInstalled",
    "require_extra",
    "UnknownKey",
    "ConfigurationError",
    "SchemaError",
    "redact",
    "ConventionTypeError",
    "UnorderedRowsError",
    "NotCheckable",
    "ActionNotApplied",
    "NoSession",
    "ProvisionalSchedule",
]


class MarketframeError(Exception):
    """Root of every error raised by marketframe."""

    #: What to do next, as a phrase; :meth:`next_step` makes it the closing sentence.
    hint: str = ""

    def next_step(self) -> str:
        """The sentence that tells the user what to do next (``""`` when there is none)."""
        hint = self.hint.strip()
        if not hint:
            return ""
        return hint[:1].upper() + hint[1:] + ("" if hint.endswith((".", "?", "!")) else ".")


def with_next_step(message: str, error: MarketframeError) -> str:
    """``message`` followed by ``error.next_step()``: the one message style of every error."""
    step = error.next_step()
    if not step:
        return message
    return f"{message.rstrip()}{'' if message.rstrip().endswith(('.', '?', '!')) else '.'} {step}"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices`` to a mistyped ``word``, else
    ``""``."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


class MarketframeWarning(UserWarning):
    """Root of marketframe's warnings: ``warnings.simplefilter("error", MarketframeWarning)``
    turns every one of them into an error."""


class InvalidParams(MarketframeError, ValueError):
    """A parameter breaks the endpoint's rules; raised before any request is sent."""

    def __init__(self, endpoint: str, param: str, problem: str, allowed: str | None = None):
        self.endpoint = endpoint
        self.param = param
        self.problem = problem
        self.allowed = allowed
        text = f"{endpoint}: parameter {param!r} {problem}"
        if allowed:
            text += f"; allowed: {allowed}"
        super().__init__(text)

    def raised_by(self, where: str) -> InvalidParams:
        """The same error (same class, parameter, problem and fix) as raised by the call
        ``where`` that the user made (``download`` checking through an endpoint's rules)."""
        return type(self)(where, self.param, self.problem, self.allowed)


class InvalidParamType(InvalidParams, TypeError):
    """A parameter has a type marketframe cannot use (``except TypeError`` catches it too)."""


class DefinitionError(MarketframeError, TypeError):
    """An endpoint row or a schema of the package contradicts itself: a contributor's mistake,
    raised when the table is built (``docs/contributing.md``)."""

    hint = "fix the row or schema named in the message (docs/contributing.md)"


class MissingColumnsError(MarketframeError, ValueError):
    """A frame lacks a column an indicator needs; the message lists those available."""


#: optional packages -> the extra of pyproject.toml that installs them
EXTRAS: Mapping[str, str] = {
    "polars": "polars",
    "authlib": "academy",
    "matplotlib": "plot",
    "s3fs": "s3",
    "fsspec": "s3",
    "ipywidgets": "notebook",
    "vectorbt": "engines",
    "backtrader": "engines",
    "zipline": "zipline",
}


class ExtraNotInstalled(MarketframeError, ModuleNotFoundError):
    """An optional package the call needs is not installed (``pip install marketframe``
    without its extra); raised before any request. ``.name`` is the package (as for
    ``ModuleNotFoundError``, which ``except ImportError`` catches too), ``.extra`` the extra
    that installs it."""

    hint = "install the extra the message names: pip install 'marketframe[EXTRA]'"

    def __init__(self, package: str, where: str):
        self.extra = EXTRAS.get(package, package)
        self.hint = f"install it: pip install 'marketframe[{self.extra}]'"
        message = f"{where} needs the optional package {package!r}, which is not installed"
        super().__init__(with_next_step(message, self))
        self.name = package


def require_extra(package: str, where: str) -> None:
    """Raise :class:`ExtraNotInstalled` naming ``where`` and the extra unless the optional
    ``package`` can be imported (looked up, not imported: a call that needs it imports it)."""
    try:
        found = importlib.util.find_spec(package) is not None
    except ImportError:  # a finder that refuses it, as a missing install would
        found = False
    except ValueError:  # imported, but without a spec (a stand-in module)
        found = True
    if not found:
        raise ExtraNotInstalled(package, where)


class UnknownKey(MarketframeError, KeyError):
    """A key a mapping of marketframe does not hold (``Ticker.fast_info["marketCap"]``); the
    message says why, or names the keys there are. ``except KeyError`` catches it, as for a
    dict, so ``.get()`` and ``in`` work."""

    def __str__(self) -> str:  # the message as written, not quoted as KeyError quotes a key
        return str(self.args[0]) if self.args else ""


class ConfigurationError(MarketframeError):
    """A local setting is missing or unusable (no credential, or several): nothing was sent."""

    hint = (
        "pass Client(api_key=...) or set MARKETFRAME_API_KEY to a v1.0 market-data key "
        "(keys of version 0.3 are not accepted) -- or exactly one other credential instead: "
        "bearer_token= / MARKETFRAME_BEARER_TOKEN or sdk_token= / MARKETFRAME_SDK_TOKEN; "
        "or, with no key at all, use the built-in sandbox (a local emulator of the "
        "service): Client.sandbox()"
    )

    def __init__(self, message: str, *, hint: str | None = None):
        if hint is not None:
            self.hint = hint
        super().__init__(with_next_step(message, self))


class SchemaError(MarketframeError):
    """A payload does not fit the endpoint's Arrow schema (never a silently wrong frame)."""

    hint = (
        "the service's payload no longer matches marketframe's schema; please report it "
        "with the endpoint name"
    )

    def __init__(self, endpoint: str, field: str, problem: str):
        self.endpoint = endpoint
        self.field = field
        super().__init__(with_next_step(f"{endpoint}: field {field!r} {problem}", self))


_TOKEN_CHARS = r"0-9A-Za-z_\-"  # characters that continue a token (an API key is one token)


def redact(text: str, secret: str | None) -> str:
    """Replace each occurrence of ``secret`` as a whole token in ``text`` by ``***``.

    Token-exact: ``secret`` is only replaced where it is not part of a longer word, so a short
    key never mangles other text (the key ``k`` leaves ``known`` alone). Used for texts we did
    not compose (library errors, the service's messages)."""
    if not secret or secret not in text:
        return text
    pattern = rf"(?<![{_TOKEN_CHARS}]){re.escape(secret)}(?![{_TOKEN_CHARS}])"
    return re.sub(pattern, "***", text)


class ConventionTypeError(InvalidParamType):
    """``convention=`` is neither a convention dataclass of the indicator, a name nor None."""


class UnorderedRowsError(InvalidParams):
    """The frame has no time column or index and its rows are not in ascending order."""


class NotCheckable(MarketframeError, ValueError):
    """The service returned no values of the indicator for the range (too few bars for its
    warm-up), so there is nothing to compare."""

    hint = "widen the range (an earlier start), or use a shorter timeframe"


class ActionNotApplied(MarketframeWarning):
    """A past corporate action lacks the data its ratio needs (a dividend without the
    previous close): the adjustment leaves it out and names it."""


class NoSession(MarketframeWarning):
    """The asked range holds no trading session (a weekend, a holiday, a typhoon closure;
    ``marketframe.calendar``): the frame is empty because the market was closed, not because
    data is missing. The message names the sessions around the range."""


class ProvisionalSchedule(MarketframeWarning):
    """``marketframe.calendar`` answered for a year whose official schedule is not in its
    table yet (past ``calendar.OFFICIAL_LAST_DAY``): the answer follows XTAI's rules
    (exchange_calendars) and may change when TWSE announces the year's holidays. The message
    names the year."""
