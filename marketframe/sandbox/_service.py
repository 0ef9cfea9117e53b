"""What every REST handler of the sandbox shares: the market and clock (:class:`Service`), the
route row (:class:`Route`) and the plan data that decides which key may call a route.

A handler is a plain function ``handler(svc, match, query) -> body``; each group module
(``_rest_intraday``, ``_rest_snapshot``, ...) lists its routes in a ``ROUTES`` tuple next to
its handlers, and ``_routes.ROUTES`` joins them. Nothing here imports the rest of marketframe:
the sandbox is an independent oracle of the service.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from . import _calendar as cal
from ._futopt import FutOpt
from ._instrument import Instrument
from ._intraday import Day
from ._market import Market
from ._ownership import Ownership
from ._query import Query, ServiceError

MINUTE_FRAMES = ("1", "3", "5", "10", "15", "30", "60")
TIMEFRAMES = (*MINUTE_FRAMES, "D", "W", "M")
MARKETS = ("TSE", "OTC", "ESB", "TIB", "PSB")

#: the service's plans, cheapest first; a key of one plan may call the routes of its plan and
#: of every cheaper one
PLANS = ("basic", "developer", "advanced")
#: the cheapest plan of each group of paths (a path of no group here is on every plan)
PLAN_OF_GROUP = {
    "/stock/snapshot/": "developer",
    "/stock/corporate-actions/": "developer",
    # brokerage accounts only on the real service: see BROKER_GROUPS
    "/stock/ownership/etf-holdings/": "advanced",
}
#: groups of paths the real service grants to brokerage accounts: the sandbox lets an SDK
#: token (a broker-issued credential) of any plan call them, an API key or bearer token only
#: on the plan of :data:`PLAN_OF_GROUP` (sdk-parity 1.0: etf-holdings is probed with a broker
#: SDK token)
BROKER_GROUPS = ("/stock/ownership/etf-holdings/",)

#: groups a cheaper plan may call on trial until a date (included): corporate actions on the
#: basic plan until 2026-02-12 (rest-api.md, "Corporate actions": "basic plan has trial
#: access until 2026-02-12")
TRIALS = {"/stock/corporate-actions/": ("basic", date(2026, 2, 12))}

Handler = Callable[["Service", dict[str, str], Query], dict[str, Any]]


@dataclass(frozen=True)
class Route:
    """One REST route: a path relative to ``/marketdata/v1.0`` and the function answering it."""

    path: str
    handler: Handler

    @property
    def plan(self) -> str:
        """The cheapest plan that may call it, from :data:`PLAN_OF_GROUP`."""
        return next((p for g, p in PLAN_OF_GROUP.items() if self.path.startswith(g)), PLANS[0])

    def allows(self, plan: str, kind: str = "api_key") -> bool:
        """Whether a credential of ``kind`` (``api_key``, ``bearer_token``, ``sdk_token``) on
        ``plan`` may call it (trials aside: :meth:`on_trial`)."""
        if kind == "sdk_token" and self.path.startswith(BROKER_GROUPS):
            return True
        return PLANS.index(plan) >= PLANS.index(self.plan)

    def on_trial(self, plan: str, today: Callable[[], date]) -> bool:
        """Whether ``plan`` may call it on trial (:data:`TRIALS`) on the day ``today()``."""
        for group, (trial_plan, until) in TRIALS.items():
            if self.path.startswith(group) and plan == trial_plan:
                return today() <= until
        return False


class Service:
    """The market and clock of one sandbox, and the helpers every handler uses."""

    def __init__(self, market: Market, clock: Callable[[], datetime]) -> None:
        self.market = market
        self.futopt = FutOpt(market)
        self.ownership = Ownership(market)
        self.clock = clock

    def now(self) -> datetime:
        return self.clock().astimezone(cal.TAIPEI)

    def instrument(self, symbol: str) -> Instrument:
        inst = self.market.universe.get(symbol)
        if inst is None or inst.listed > self.today():  # not known before its listing
            raise ServiceError(404, "Resource Not Found")
        return inst

    def today(self) -> date:
        return cal.session_date(self.now())

    def t_us(self, d: date) -> int:
        """Visibility horizon on day ``d``: now on the current day, everything on past days."""
        now = self.now()
        if d < now.date():
            return 2**62
        return cal.epoch_us(now)

    def day(self, inst: Instrument, oddlot: bool) -> tuple[date, Day | None]:
        """Today's session date and the instrument's day (odd-lot: 404 but for equities, none
        before intraday odd lots began on 2020-10-26)."""
        if oddlot and inst.type != "EQUITY":
            raise ServiceError(404, "Resource Not Found")
        d = self.today()
        if oddlot and not cal.has_oddlot(d):
            return d, None
        day = self.market.day(inst.symbol, d, oddlot=oddlot)
        return d, day

    @staticmethod
    def oddlot(q: Query) -> bool:
        """The ``type=oddlot`` parameter of stock intraday routes."""
        return q.choice("type", ("oddlot",)) == "oddlot"
