"""The sandbox's ownership data: institutional trades, ETF holdings, director holdings, TDCC.

Deterministic from the market's seed and built from its market (volumes, closes, calendar):

- institutional trades: each class buys and sells a share of the day's traded volume, in
  shares; ``net = buy - sell`` exactly and ``total`` is the sum of the three nets;
- ETF holdings: the basket the market prices the fund from (``Market.holdings``), share
  counts that move every day (creations and redemptions); weights are each holding's value at
  that day's close, in hundredths of a percent summing to exactly 100.00 (largest-remainder
  rounding);
- director holdings: one board per company, one disclosure per month; independent directors
  hold nothing (``pledgeRatio`` null);
- TDCC distribution: the 15 holding-size brackets on the last trading day of each week;
  ``holders`` and ``shares`` integers, ``proportion`` in hundredths of a percent summing to
  exactly 100.00 (largest remainder).

Nothing here imports the rest of marketframe (the sandbox is an independent oracle).
"""

from __future__ import annotations

from dataclasses import dataclass
from threading import Lock
from typing import Any

import numpy as np

from . import _calendar as cal
from ._instrument import Instrument
from ._market import Market
from ._payloads import num, px

#: (who, share of the day's volume each side may reach)
_CLASSES = (("foreign", 0.35), ("trust", 0.05), ("dealer", 0.08))

TDCC_BRACKETS: tuple[tuple[str, int, int | None], ...] = (
    ("1-999", 1, 999),
    ("1,000-5,000", 1_000, 5_000),
    ("5,001-10,000", 5_001, 10_000),
    ("10,001-15,000", 10_001, 15_000),
    ("15,001-20,000", 15_001, 20_000),
    ("20,001-30,000", 20_001, 30_000),
    ("30,001-40,000", 30_001, 40_000),
    ("40,001-50,000", 40_001, 50_000),
    ("50,001-100,000", 50_001, 100_000),
    ("100,001-200,000", 100_001, 200_000),
    ("200,001-400,000", 200_001, 400_000),
    ("400,001-600,000", 400_001, 600_000),
    ("600,001-800,000", 600_001, 800_000),
    ("800,001-1,000,000", 800_001, 1_000_000),
    ("1,000,001以上", 1_000_001, None),
)
#: the (low, high) holdings of every bracket but the last, open-ended one
_BOUNDED = [(lo, hi) for _, lo, hi in TDCC_BRACKETS if hi is not None]
_SURNAMES = "陳林黃張李王吳劉蔡楊許鄭謝郭洪曾邱廖賴周"
_GIVEN = (
    "志明",
    "淑芬",
    "建宏",
    "美玲",
    "俊傑",
    "雅婷",
    "家豪",
    "怡君",
    "宗翰",
    "佩珊",
    "冠宇",
    "欣怡",
    "文雄",
    "麗華",
    "承恩",
    "詩涵",
)


def hundredths(values: np.ndarray) -> np.ndarray:
    """Each row of ``values`` (n, k; nonnegative, NaN = absent) as integer hundredths of a
    percent of its row's sum, summing to exactly 10000 (largest remainder; ties to the left).
    Absent entries get 0."""
    present = ~np.isnan(values)
    v = np.where(present, values, 0.0)
    total = v.sum(axis=1, keepdims=True)
    raw = np.divide(v * 10000, total, out=np.zeros_like(v), where=total > 0)
    base = np.floor(raw).astype(np.int64)
    short = 10000 - base.sum(axis=1)
    short[total[:, 0] == 0] = 0
    frac = np.where(present, raw - base, -1.0)
    rank = np.argsort(np.argsort(-frac, axis=1, kind="stable"), axis=1, kind="stable")
    shares: np.ndarray = base + (rank < short[:, None])
    return shares


@dataclass(frozen=True)
class Series:
    """A dataset of one symbol: its dates (``datetime64[D]``) and the columns by name."""

    dates: np.ndarray
    cols: dict[str, Any]


class Ownership:
    """The four ownership datasets of one market, built once per symbol."""

    def __init__(self, market: Market) -> None:
        self.market = market
        self._cache: dict[tuple[str, str], Series] = {}
        self._lock = Lock()

    def _get(self, kind: str, inst: Instrument, make: Any) -> Series:
        key = (kind, inst.symbol)
        with self._lock:
            got = self._cache.get(key)
        if got is None:
            got = make(inst)
            with self._lock:
                self._cache[key] = got
        return got

    # --- institutional trades ----------------------------------------------------------------

    def institutional(self, inst: Instrument) -> Series:
        return self._get("institutional", inst, self._institutional)

    def _institutional(self, inst: Instrument) -> Series:
        daily = self.market.daily(inst.symbol)
        shares = daily.volume.astype(np.int64) * (inst.board_lot if inst.unit == "lots" else 1)
        rng = self.market.rng("ownership-institutional", inst.symbol)
        n = len(shares)
        cols: dict[str, Any] = {}
        total = np.zeros(n, dtype=np.int64)
        for who, reach in _CLASSES:
            part = rng.uniform(0.1, 1.0) * reach  # this class's usual share of the volume
            skew = np.clip(rng.normal(0.0, 0.35, n), -0.95, 0.95)
            active = rng.random(n) < (0.6 if who == "trust" else 0.97)  # trusts skip days
            buy = np.where(active, np.rint(shares * part * (1 + skew)), 0).astype(np.int64)
            sell = np.where(active, np.rint(shares * part * (1 - skew)), 0).astype(np.int64)
            cols[who] = (buy, sell, buy - sell)
            total += buy - sell
        cols["total"] = total
        return Series(daily.dates, cols)

    # --- ETF holdings ------------------------------------------------------------------------

    def etf(self, inst: Instrument) -> Series:
        return self._get("etf", inst, self._etf)

    def _etf(self, inst: Instrument) -> Series:
        held = self.market.holdings(inst.symbol)  # the basket the fund's price comes from
        dates = self.market.daily(inst.symbol).dates
        at = np.searchsorted(cal.all_trading_days(), dates) - held.p0
        qty = held.quantity[at]
        close = np.full(qty.shape, np.nan)
        for j, m in enumerate(held.members):  # each holding at its last close on or before the day
            d = self.market.daily(m.symbol)
            idx = np.searchsorted(d.dates, dates, side="right") - 1
            close[idx >= 0, j] = d.close[idx[idx >= 0]]
        value = qty * close
        return Series(
            dates, {"members": held.members, "quantity": qty, "weight": hundredths(value)}
        )

    # --- director holdings -------------------------------------------------------------------

    def directors(self, inst: Instrument) -> Series:
        return self._get("directors", inst, self._directors)

    def _directors(self, inst: Instrument) -> Series:
        rng = self.market.rng("ownership-directors", inst.symbol)
        first = inst.first_day
        months = np.arange(np.datetime64(first, "M"), np.datetime64(cal.CALENDAR_END, "M") + 1)
        n, k = len(months), int(rng.integers(7, 11))
        titles = ["董事長", *["董事"] * (k - 4), *["獨立董事"] * 3]
        names = [
            f"{_SURNAMES[i]}{_GIVEN[j]}"
            for i, j in zip(
                rng.choice(len(_SURNAMES), k, replace=False),
                rng.integers(0, len(_GIVEN), k),
                strict=True,
            )
        ]
        independent = np.array([t == "獨立董事" for t in titles])
        base = rng.integers(200, 60_000, k) * 1000.0
        held = np.rint(base * np.exp(np.cumsum(rng.normal(0, 0.01, (n, k)), axis=0)) / 1000)
        held = (held * 1000).astype(np.int64)
        held[:, independent] = 0
        term = (
            months.astype("datetime64[Y]").astype(int)
            - months[0].astype("datetime64[Y]").astype(int)
        ) // 3  # boards are elected every three years
        starts = np.searchsorted(term, term, side="left")
        elected = held[starts]
        pledge = rng.choice([0.0, 0.0, 0.0, 0.15, 0.3, 0.55], k)
        pledged = (np.rint(held * pledge / 1000) * 1000).astype(np.int64)
        related = np.where(rng.random(k) < 0.5, 0, rng.integers(10, 5_000, k) * 1000)
        related = np.where(independent, 0, related).astype(np.int64)
        related_pledged = (
            np.rint(related * rng.choice([0.0, 0.2], k) / 1000).astype(np.int64) * 1000
        )
        return Series(
            months,
            {
                "titles": titles,
                "names": names,
                "elected": elected,
                "held": held,
                "pledged": pledged,
                "related": related,
                "related_pledged": related_pledged,
            },
        )

    # --- TDCC distribution -------------------------------------------------------------------

    def tdcc(self, inst: Instrument) -> Series:
        return self._get("tdcc", inst, self._tdcc)

    def _tdcc(self, inst: Instrument) -> Series:
        rng = self.market.rng("ownership-tdcc", inst.symbol)
        days = cal.trading_days(inst.first_day, cal.CALENDAR_END)
        week = (days - np.datetime64("1970-01-05")).astype(np.int64) // 7
        dates = days[np.r_[week[1:] != week[:-1], True]]  # the last trading day of each week
        n, b = len(dates), len(TDCC_BRACKETS)
        outstanding = self.market.shares(inst.symbol)  # its capitalisation's shares
        spots = rng.uniform(0.3, 0.6, b - 1)
        avg = np.array(
            [lo + int((hi - lo) * u) for (lo, hi), u in zip(_BOUNDED, spots, strict=True)],
            dtype=np.int64,
        )
        weights = np.geomspace(1.0, 3.0, b - 1) * rng.uniform(0.7, 1.3, b - 1)
        share = rng.uniform(0.15, 0.4)  # of the outstanding shares held below 1,000,001
        base = outstanding * share * weights / weights.sum() / avg
        level = np.zeros(b - 1)
        holders = np.empty((n, b), dtype=np.int64)
        for t in range(n):  # mean-reverting week-to-week changes in the number of holders
            level = 0.97 * level + rng.normal(0.0, 0.02, b - 1)
            holders[t, :-1] = np.rint(base * np.exp(level))
        shares = np.empty((n, b), dtype=np.int64)
        shares[:, :-1] = holders[:, :-1] * avg
        shares[:, -1] = outstanding - shares[:, :-1].sum(axis=1)
        big = int(rng.integers(40, 1500))
        holders[:, -1] = np.maximum(1, np.minimum(big, shares[:, -1] // 1_000_001))
        return Series(
            dates,
            {"holders": holders, "shares": shares, "proportion": hundredths(shares.astype(float))},
        )


def rows_institutional(s: Series, sl: slice) -> list[dict[str, Any]]:
    out = []
    for i in range(sl.start, sl.stop):
        row: dict[str, Any] = {"date": str(s.dates[i])}
        for who, _ in _CLASSES:
            buy, sell, net = s.cols[who]
            row[who] = {"buy": int(buy[i]), "sell": int(sell[i]), "net": int(net[i])}
        row["total"] = int(s.cols["total"][i])
        out.append(row)
    return out


def rows_etf(s: Series, sl: slice) -> list[dict[str, Any]]:
    qty, weight, members = s.cols["quantity"], s.cols["weight"], s.cols["members"]
    out = []
    for i in range(sl.start, sl.stop):
        comps = []
        for j in np.argsort(-weight[i], kind="stable"):  # largest holding first
            if np.isnan(qty[i, j]):
                continue
            c: dict[str, Any] = {
                "symbol": members[j].symbol,
                "name": members[j].name,
                "quantity": int(qty[i, j]),
                "weight": px(int(weight[i, j])),
            }
            if i > 0 and not np.isnan(qty[i - 1, j]):  # no previous disclosure: omitted
                c["quantityChange"] = int(qty[i, j] - qty[i - 1, j])
                c["weightChange"] = px(int(weight[i, j] - weight[i - 1, j]))
            comps.append(c)
        out.append({"date": str(s.dates[i]), "components": comps})
    return out


def _ratio(part: int, whole: int) -> float | None:
    return num(round(part / whole * 100, 2)) if whole else None


def rows_directors(s: Series, sl: slice) -> list[dict[str, Any]]:
    c = s.cols
    out = []
    for i in range(sl.start, sl.stop):
        people = []
        for j, (title, name) in enumerate(zip(c["titles"], c["names"], strict=True)):
            held, pledged = int(c["held"][i, j]), int(c["pledged"][i, j])
            rel, rel_pledged = int(c["related"][j]), int(c["related_pledged"][j])
            people.append(
                {
                    "order": j + 1,
                    "title": title,
                    "name": name,
                    "electedShares": int(c["elected"][i, j]),
                    "heldShares": held,
                    "pledgedShares": pledged,
                    "pledgeRatio": _ratio(pledged, held),
                    "relatedHeldShares": rel,
                    "relatedPledgedShares": rel_pledged,
                    "relatedPledgeRatio": _ratio(rel_pledged, rel),
                }
            )
        out.append({"date": str(s.dates[i]), "directors": people})
    return out


def rows_tdcc(s: Series, sl: slice) -> list[dict[str, Any]]:
    c = s.cols
    return [
        {
            "date": str(s.dates[i]),
            "distributions": [
                {
                    "range": label,
                    "holders": int(c["holders"][i, b]),
                    "shares": int(c["shares"][i, b]),
                    "proportion": px(int(c["proportion"][i, b])),
                }
                for b, (label, _, _) in enumerate(TDCC_BRACKETS)
            ],
        }
        for i in range(sl.start, sl.stop)
    ]
