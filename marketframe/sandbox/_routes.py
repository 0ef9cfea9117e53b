"""The sandbox's REST route table, joined from the group modules: one :class:`Route` a path.

Each group module lists its routes next to its handlers; which plan may call a route comes
from the path (``_service.PLAN_OF_GROUP``), never from a flag repeated on each route.
"""

from __future__ import annotations

from . import (
    _rest_actions,
    _rest_futopt,
    _rest_futopt_hist,
    _rest_heatmap,
    _rest_historical,
    _rest_intraday,
    _rest_ownership,
    _rest_snapshot,
    _rest_technical,
)
from ._service import Route

#: groups of paths the real service also answers with a trailing slash
TRAILING_SLASH = ("/stock/corporate-actions/",)

_TABLE: tuple[Route, ...] = (
    *_rest_intraday.ROUTES,
    *_rest_snapshot.ROUTES,
    *_rest_heatmap.ROUTES,
    *_rest_historical.ROUTES,
    *_rest_technical.ROUTES,
    *_rest_actions.ROUTES,
    *_rest_futopt.ROUTES,
    *_rest_ownership.ROUTES,
    *_rest_futopt_hist.ROUTES,
)


def with_aliases(routes: tuple[Route, ...]) -> tuple[Route, ...]:
    """``routes`` and their trailing-slash spellings where the service answers those too."""
    slashed = [Route(r.path + "/", r.handler) for r in routes if r.path.startswith(TRAILING_SLASH)]
    return (*routes, *slashed)


ROUTES: tuple[Route, ...] = with_aliases(_TABLE)
