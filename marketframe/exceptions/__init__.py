"""The error tree, and the table that maps HTTP status codes onto it.

Every error marketframe raises is a :class:`MarketframeError`; builtin mixins keep
``except ValueError`` / ``except TypeError`` / ``except TimeoutError`` code working::

    MarketframeError                   root: one ``except`` catches every error below
    +-- InvalidParams (ValueError)     bad input; raised before any request is sent
    |   +-- InvalidParamType (TypeError)   a value of a type marketframe cannot use
    |   |   +-- ConventionTypeError        ``convention=`` of the wrong kind (indicators)
    |   +-- UnorderedRowsError             rows out of time order, no time column (frames)
    +-- ConfigurationError             a local setting is missing or unusable (no API key)
    +-- ExtraNotInstalled (ModuleNotFoundError)   an optional package is not installed
    +-- DefinitionError (TypeError)    an endpoint row or schema contradicts itself (at import)
    +-- SchemaError                    a payload does not fit the endpoint's schema
    +-- ServiceError                   the service gave no usable answer
    |   +-- APIError                   ... it answered with an error status
    |   |   +-- BadRequest             400, other 4xx
    |   |   +-- AuthenticationError    401
    |   |   |   +-- StreamAuthError    (also a StreamError)
    |   |   +-- PlanError (Forbidden)  403
    |   |   |   +-- AdjustmentUnavailable  no corporate actions on the plan
    |   |   +-- SymbolNotFound (NotFound)  404
    |   |   +-- RateLimited            429
    |   |   +-- ServerError            5xx
    |   +-- RepeatedPage               ... it sent a page of rows already received (paging)
    |   +-- TransportError             ... it did not answer at all (connection, timeout)
    |       +-- DeadlineExceeded (TimeoutError)
    +-- BatchError (PartialResult)     some symbols of a multi-symbol call failed
    +-- StreamError                    the WebSocket stream
    |   +-- StreamTimeout (TimeoutError), StreamAuthError, StreamClosed,
    |       StreamSubscribeError (ValueError), GapUnavailable (a gap's day is gone)
    +-- MissingColumnsError (ValueError)   a frame lacks a column an indicator needs (frames)
    +-- NotCheckable (ValueError)      nothing to cross-check in the range (crosscheck)
    +-- UnknownKey (KeyError)          a key a mapping does not hold (Ticker.fast_info)
    +-- StoreCorrupted, StoreLocked (LeaseLost), SyncError   the Parquet store (store)
    +-- ComputeInterrupted             a worker of the store's compute pool died (store)
    +-- StoreUnavailable (OSError), StoreReadOnly (PermissionError)   its storage (store)
    +-- NotSynced (LookupError)        a store read of a range no sync covered (store)
    +-- AcademyError                   the course platform's OAuth client (academy), with
        DiscoveryError, RegistrationError, TokenStoreError, NotLoggedIn, LoginTimeout,
        AuthorizationError (StateMismatch, IssuerMismatch), OAuthError (InvalidClient,
        InvalidGrant, InvalidRequest, InvalidScope, InvalidTarget, UnauthorizedClient,
        UnsupportedGrantType), ResourceError (InsufficientScope, InvalidToken)

Warnings are a :class:`MarketframeWarning` (a ``UserWarning``): ``PartlySynced``, a store
read of a range covered only in part; ``ActionNotApplied``, a corporate action adjusted
prices could not use (adjust); ``NoSession``, a ``download`` range with no trading day;
``ProvisionalSchedule``, a calendar answer for a year TWSE has not announced yet.

One hint style: a class's ``hint`` says what to do next; ``next_step()`` turns it into the
sentence that ends the message (a class may compute it from the error's own details).
``docs/errors.md`` is generated from these classes.

No message, attribute or ``repr`` ever holds the API key: errors are built from the endpoint
name, the parameters (which never include the key) and the service's own ``message`` field,
and :func:`redact` scrubs any text we did not write ourselves.
"""

from __future__ import annotations

from marketframe.exceptions import _academy, _base, _service, _store
from marketframe.exceptions._academy import *  # noqa: F403
from marketframe.exceptions._academy import hold_secret, oauth_error, scrub
from marketframe.exceptions._base import *  # noqa: F403
from marketframe.exceptions._service import *  # noqa: F403
from marketframe.exceptions._store import *  # noqa: F403

# each part lists its own names; the academy's secret helpers are not academy errors
__all__ = ["hold_secret", "oauth_error", "scrub"]
__all__ += _base.__all__
__all__ += _service.__all__
__all__ += _store.__all__
__all__ += _academy.__all__

# shown where they are documented and imported from (tracebacks, reprs, docs/errors.md)
for _name in __all__:
    _obj = globals()[_name]
    if isinstance(_obj, type):
        _obj.__module__ = __name__
del _name, _obj
