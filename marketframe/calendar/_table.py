"""The calendar's data: coverage, the project's corrections to the base calendar (each with
its evidence) and the hours of every session."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from marketframe._time import TZ_NAME

TAIPEI = ZoneInfo(TZ_NAME)

#: First and last day the calendar answers for.
FIRST_DAY = dt.date(2010, 1, 1)
LAST_DAY = dt.date(2035, 12, 31)
#: Last day of the last year whose official schedule the table holds (TWSE announces a year's
#: schedule in the autumn before it: 2026's on 2025-10-29). Past it the calendar is
#: PROVISIONAL: XTAI's rules alone (its holiday rules, lunar dates and observances), which may
#: differ from the schedule TWSE will announce; the functions warn ``ProvisionalSchedule``.
OFFICIAL_LAST_DAY = dt.date(2026, 12, 31)

Market = Literal["stock", "futopt"]
SessionName = Literal["regular", "afterhours", "oddlot", "oddlot_afterhours"]
Backend = Literal["pandas", "polars"]
DateLike = dt.date | str | pd.Timestamp | np.datetime64
Kind = Literal["closed", "open", "saturday"]


@dataclass(frozen=True)
class Correction:
    """One day where the base calendar (XTAI) is wrong.

    ``kind``: ``"closed"``, the base has a session but the market was closed;
    ``"open"``, the base has a weekday closed but the market traded;
    ``"saturday"``, a make-up Saturday the market traded (the base trades Monday-Friday only).
    """

    day: dt.date
    kind: Kind
    what: str
    source: str


_D = dt.date
_TWSE_SATURDAYS = (
    "TWSE traded on government make-up Saturdays (補行上班日) until 2018; from 2019 it does "
    "not (Liberty Times 2018-11-20, http://news.ltn.com.tw/news/business/breakingnews/2618735)"
)
_DGPA = "the DGPA work calendar of the year lists it as the make-up workday"

#: The project's corrections to the base calendar, oldest first: the one place to add one.
CORRECTIONS: tuple[Correction, ...] = (
    Correction(
        _D(2010, 2, 6),
        "saturday",
        "make-up Saturday for the 2010-02-19 Lunar New Year bridge holiday",
        f"{_DGPA}; {_TWSE_SATURDAYS}; no TWSE notice for this date itself was seen",
    ),
    Correction(
        _D(2010, 4, 30),
        "closed",
        "Labour Day (Saturday 2010-05-01) observed on the Friday",
        "vacanza/holidays' XTAI calendar (its test_labor_day), citing TWSE's 2010 schedule "
        "archived at web.archive.org/web/20100215175517/http://www.twse.com.tw/en/trading/"
        "trading_days.php; not seen first-hand",
    ),
    Correction(
        _D(2011, 5, 2),
        "closed",
        "Labour Day (Sunday 2011-05-01) observed on the Monday",
        "vacanza/holidays' XTAI calendar (its test_labor_day), citing TWSE's 2011 schedule "
        "archived at web.archive.org/web/20110410195932/http://www.twse.com.tw/en/trading/"
        "trading_days.php; not seen first-hand",
    ),
    Correction(
        _D(2012, 2, 4),
        "saturday",
        "make-up Saturday for the 2012-01-27 Lunar New Year bridge holiday",
        "TWSE 2012 schedule (CNA 2011-11-30, www2.ntdtv.com/b5/2011/11/30/a625318.html); "
        + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2012, 3, 3),
        "saturday",
        "make-up Saturday for the 2012-02-27 Peace Memorial Day bridge holiday",
        "TWSE 2012 schedule (CNA 2011-11-30, www2.ntdtv.com/b5/2011/11/30/a625318.html); "
        + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2012, 12, 22),
        "saturday",
        "make-up Saturday for the 2012-12-31 New Year bridge holiday",
        "TWSE 2012 schedule (CNA 2011-11-30, www2.ntdtv.com/b5/2011/11/30/a625318.html); "
        + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2013, 2, 23),
        "saturday",
        "make-up Saturday for the 2013-02-15 Lunar New Year bridge holiday",
        "TWSE 2013 schedule (ETtoday, tw.bg3.co/a/gao-bie-long-nian-tai-gu-2-6feng-guan-2-"
        "18kai-hong-pan-ying-jie-xiao-long-nian.html); " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2013, 9, 14),
        "saturday",
        "make-up Saturday for the 2013-09-20 Mid-Autumn bridge holiday",
        "TWSE 2013 schedule (ETtoday, tw.bg3.co/a/gao-bie-long-nian-tai-gu-2-6feng-guan-2-"
        "18kai-hong-pan-ying-jie-xiao-long-nian.html); " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2014, 12, 27),
        "saturday",
        "make-up Saturday for the 2015-01-02 New Year bridge holiday",
        f"{_DGPA} (2015); {_TWSE_SATURDAYS}; no TWSE notice for this date itself was seen",
    ),
    Correction(
        _D(2016, 1, 30),
        "saturday",
        "make-up Saturday for the 2016-02-12 Lunar New Year bridge holiday",
        "TWSE reminder (Liberty Times 2016-01-12, ec.ltn.com.tw/article/breakingnews/1569388)",
    ),
    Correction(
        _D(2016, 6, 4),
        "saturday",
        "make-up Saturday for the 2016-06-10 Dragon Boat bridge holiday",
        f"{_DGPA}; {_TWSE_SATURDAYS}; no TWSE notice for this date itself was seen",
    ),
    Correction(
        _D(2016, 9, 10),
        "saturday",
        "make-up Saturday for the 2016-09-16 Mid-Autumn bridge holiday",
        f"{_DGPA}; {_TWSE_SATURDAYS}; no TWSE notice for this date itself was seen",
    ),
    Correction(
        _D(2017, 2, 18),
        "saturday",
        "make-up Saturday for the 2017-02-27 Peace Memorial Day bridge holiday",
        "Bank of China (Taipei) 2017 holiday table, www.bankofchina.com/tw/bocinfo/bi1/201702/"
        "t20170213_8627945.html; " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2017, 6, 3),
        "saturday",
        "make-up Saturday for the 2017-05-29 Dragon Boat bridge holiday",
        "Bank of China (Taipei) 2017 holiday table, www.bankofchina.com/tw/bocinfo/bi1/201702/"
        "t20170213_8627945.html; " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2017, 9, 30),
        "saturday",
        "make-up Saturday for the 2017-10-09 National Day bridge holiday",
        "Bank of China (Taipei) 2017 holiday table, www.bankofchina.com/tw/bocinfo/bi1/201702/"
        "t20170213_8627945.html; " + _TWSE_SATURDAYS,
    ),
    Correction(
        _D(2018, 3, 31),
        "saturday",
        "make-up Saturday for the 2018-04-06 Tomb Sweeping bridge holiday",
        "TWSE 2018 schedule: the market opens that Saturday (Economic Daily News 2017-11-09, "
        "reposted at s8088.com/article/1113354)",
    ),
    Correction(
        _D(2018, 12, 22),
        "saturday",
        "make-up Saturday for the 2018-12-31 New Year bridge holiday",
        "TWSE 2018 schedule: the market opens that Saturday (Economic Daily News 2017-11-09, "
        "reposted at s8088.com/article/1113354)",
    ),
    Correction(
        _D(2022, 2, 4),
        "closed",
        "Lunar New Year bridge holiday (make-up workday 2022-01-22, no trading)",
        "TWSE holiday schedule 2022, reported in exchange_calendars issue 164 "
        "(github.com/gerrymanoim/exchange_calendars/issues/164); DGPA 2022 calendar",
    ),
    Correction(
        _D(2023, 1, 18),
        "closed",
        "no trading before Lunar New Year (clearing and settlement only)",
        "TWSE 2023 (ROC 112) schedule as republished by KGI Securities, www.kgi.com.tw/zh-tw/"
        "product-market/calendar-overview/stock-market-calendar: 1/18 and 1/19 no trading",
    ),
    Correction(
        _D(2024, 10, 31),
        "closed",
        "Typhoon Kong-rey: Taipei suspended work, TWSE/TAIFEX closed all day",
        "Bloomberg 2024-10-31 (bnnbloomberg.ca/business/international/2024/10/31/taiwan-"
        "braces-for-super-typhoon-kong-rey-after-shutting-exchange): the third storm halt of "
        "2024, after Gaemi (07-24, 07-25) and Krathon (10-02, 10-03), which XTAI has",
    ),
)


@dataclass(frozen=True)
class Hours:
    """The hours of one kind of session (Asia/Taipei) and where they come from."""

    open: dt.time
    close: dt.time
    overnight: bool  # closes on the next calendar day
    since: dt.date  # first day the session exists
    source: str


_AH_INTRO = (
    "TAIFEX's after-hours introduction (www.taifex.com.tw/enl/eng4/aHIntroduction): 15:00 for "
    "domestic index, foreign index (but TOPIX) and crude oil products; 17:25 for TOPIX "
    "futures, FX, gold and equity products; to 05:00 the next day"
)
_ODDLOT_2020 = (
    "TWSE (topunlisted.com.tw/news/detail/33249646, 2020-09-10): intraday odd lots from "
    "2020-10-26, orders from 09:00, first match 09:10, then a call auction every 3 minutes"
)
_ODDLOT_LATER = (
    "TWSE (SETN via tw.news.yahoo.com, '盤中零股交易撮合間隔時間縮短至5秒 12/2上路'): the "
    "interval went from 3 minutes to 1 on 2022-12-19 and from 1 minute to 5 seconds on "
    "2024-12-02"
)

#: Session hours by (market, session); the futures and options rows are TAIFEX's domestic
#: index products' (the ``"index"`` group of :data:`GROUPS`).
HOURS: dict[tuple[str, str], Hours] = {
    ("stock", "regular"): Hours(
        dt.time(9), dt.time(13, 30), False, FIRST_DAY, "spec/wire-facts.md: 09:00-13:30"
    ),
    ("stock", "oddlot"): Hours(
        dt.time(9),
        dt.time(13, 30),
        False,
        dt.date(2020, 10, 26),
        "intraday odd lots: orders from 09:00, first match 09:10, then a call auction every "
        "3 minutes; every minute from 2022-12-19; every 5 seconds from 2024-12-02 "
        f"(ODDLOT_INTERVALS). {_ODDLOT_2020}; {_ODDLOT_LATER}; the spec only says odd lots "
        "are selectable (type=oddlot)",
    ),
    ("stock", "oddlot_afterhours"): Hours(
        dt.time(13, 40),
        dt.time(14, 30),
        False,
        FIRST_DAY,
        "TWSE after-hours odd-lot trading: orders 13:40-14:30, one match at 14:30",
    ),
    ("stock", "afterhours"): Hours(
        dt.time(14),
        dt.time(14, 30),
        False,
        FIRST_DAY,
        "TWSE after-hours fixed-price trading 14:00-14:30 (spec/wire-facts.md: a fixed-price "
        "row may carry serial 99999999)",
    ),
    ("futopt", "regular"): Hours(
        dt.time(8, 45), dt.time(13, 45), False, FIRST_DAY, "TAIFEX day session 08:45-13:45"
    ),
    ("futopt", "afterhours"): Hours(
        dt.time(15),
        dt.time(5),
        True,
        dt.date(2017, 5, 15),
        "spec/wire-facts.md: after-hours 15:00-05:00 next day; TAIFEX opened it 2017-05-15 "
        "(Taipei Times 2016-11-19; LeapRate 2017-05-15). Held on the evening of every day "
        "with a day session, the last one before a closure too, by the FSC's principle that "
        "a day session has its night session (有日盤交易時段即有夜盤交易): on 2024-02-05, the "
        "last day before Lunar New Year, until 05:00 (FSC on the 2024 schedule, Economic "
        "Daily News money.udn.com/money/story/5607/7669420 and ETtoday "
        "finance.ettoday.net/news/2651930); likewise 2021-02-05 (FSC, reprinted at "
        "lotmg.com/a/tai-bei-gu-shi-tai-gu-shu-nian-5ri-feng-guan-17ri-niu-nian-kai-shi.html), "
        "2025-01-22 (a broker's 2025 table at kaoli77.com, '台指期貨 交易到 1/23(四) 05:00') "
        "and 2026-02-11 (udn.com/news/story/12806/9290965)",
    ),
}

_MARKETS = ("stock", "futopt")
_SESSIONS = {m: tuple(s for mm, s in HOURS if mm == m) for m in _MARKETS}


@dataclass(frozen=True)
class OddLotInterval:
    """From ``since``, TWSE's intraday odd lots match every ``seconds`` (from 09:10)."""

    since: dt.date
    seconds: int
    source: str


#: The intraday odd-lot matching interval over time, oldest first.
ODDLOT_INTERVALS: tuple[OddLotInterval, ...] = (
    OddLotInterval(dt.date(2020, 10, 26), 180, _ODDLOT_2020),
    OddLotInterval(dt.date(2022, 12, 19), 60, _ODDLOT_LATER),
    OddLotInterval(dt.date(2024, 12, 2), 5, _ODDLOT_LATER),
)

#: The first intraday odd-lot match of a day, then one every interval to the 13:30 close.
ODDLOT_FIRST_MATCH = dt.time(9, 10)


Group = Literal["index", "equity", "fx", "gold", "topix"]


@dataclass(frozen=True)
class ProductGroup:
    """TAIFEX's hours for a group of products: its day session, the open of its night session
    (which closes at 05:00 like every group's), and the close of the expiring month on its
    last trading day (None: not modelled, the group's products differ)."""

    products: str
    regular_open: dt.time
    regular_close: dt.time
    afterhours_open: dt.time
    last_day_close: dt.time | None
    source: str


_TE_SPEC = (
    "TAIFEX Electronics Sector Index Futures specification (selaw.com.tw LW10833616, "
    "2018-08-08): 08:45-13:45, 08:45-13:30 on the last trading day for the delivery month "
    "contract, which is the third Wednesday; after hours 15:00-05:00, none on the last "
    "trading day for the delivery month contract (TX's specification says the same)"
)

_NIGHT_1725 = f"after hours 17:25-05:00, none on the expiring month's last day; {_AH_INTRO}"

#: TAIFEX's product groups and their hours (``group=`` of the session functions): the index
#: products' night opens at 15:00, the others' at 17:25, after a day to 13:45 or 16:15.
GROUPS: dict[str, ProductGroup] = {
    "index": ProductGroup(
        "domestic index futures and options: TX (TXF), MTX (MXF), TMF, TE, ZEF, SOF, M1F, TXO",
        dt.time(8, 45),
        dt.time(13, 45),
        dt.time(15),
        dt.time(13, 30),
        f"{_TE_SPEC}; {_AH_INTRO}",
    ),
    "equity": ProductGroup(
        "single-stock futures on stocks and domestic ETFs",
        dt.time(8, 45),
        dt.time(13, 45),
        dt.time(17, 25),
        None,
        "TAIFEX Single Stock Futures specification (selaw.com.tw LW10850706, 2024-06-25): "
        "08:45-13:45 (08:45-16:15 on ETFs of foreign securities), for the contracts TAIFEX "
        f"announces {_NIGHT_1725}",
    ),
    "fx": ProductGroup(
        "FX futures: RTF, RHF, XEF, XJF, XAF, XBF",
        dt.time(8, 45),
        dt.time(16, 15),
        dt.time(17, 25),
        None,
        "TAIFEX USD/CNH (selaw.com.tw 199484, 2018-11-13; last day to 11:00) and USD/JPY "
        "(selaw.com.tw LW10872630; last day to 14:00) FX futures specifications: 08:45-16:15, "
        + _NIGHT_1725,
    ),
    "gold": ProductGroup(
        "gold products: TGF, GDF, TGO",
        dt.time(8, 45),
        dt.time(16, 15),
        dt.time(17, 25),
        None,
        "TAIFEX NT Dollar Gold Futures specification (selaw.com.tw, 2018-05-11): 08:45-16:15, "
        + _NIGHT_1725,
    ),
    "topix": ProductGroup(
        "TOPIX futures: TJF",
        dt.time(8),
        dt.time(16, 15),
        dt.time(17, 25),
        None,
        "TAIFEX TOPIX Futures specification (selaw.com.tw LW10869606, 2024-10-22): "
        "08:00-16:15, " + _NIGHT_1725,
    ),
}
