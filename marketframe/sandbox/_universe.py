"""The sandbox's instruments: a small, fixed universe that exercises every rule of the service.

Names are the Traditional Chinese short names the real service sends. Prices, volumes and
events are synthetic (see ``_market``); nothing here is real market data.
"""

from __future__ import annotations

from datetime import date

from ._instrument import Instrument, _eq

#: share of a stock's daily variance that is its industry's factor (same industry code)
INDUSTRY_SHARE = 0.15
#: the day on which the index weights of :attr:`Instrument.weight` hold (shares outstanding
#: are set so that each component's capitalisation is that share of its board's that day)
WEIGHT_DAY = date(2025, 6, 30)
#: the capitalisation of each board's index on :data:`WEIGHT_DAY`, TWD (TWSE: about 70
#: trillion in mid-2025; TPEx: about 5.5 trillion)
BOARD_CAP = {"TSE": 70e12, "OTC": 5.5e12}


EQUITIES: tuple[Instrument, ...] = (
    _eq(
        "2330",
        "台積電",
        "TSMC",
        "TWSE",
        "TSE",
        "24",
        64.5,
        38000,
        7000,
        vol=0.016,
        dividend_months=(3, 6, 9, 12),
        growth=0.21,
        beta=0.55,
        weight=0.43,
    ),
    _eq("2317", "鴻海", "Hon Hai", "TWSE", "TSE", "31", 115.0, 42000, 5000, weight=0.035),
    _eq("2454", "聯發科", "MediaTek", "TWSE", "TSE", "24", 320.0, 6000, 3500, weight=0.04),
    _eq(
        "0050",
        "元大台灣50",
        "Yuanta Taiwan Top 50 ETF",
        "TWSE",
        "TSE",
        "00",
        56.0,
        12000,
        3000,
        security_type="24",
        etf=True,
        basket="cap",
        suspensions=((date(2025, 6, 11), date(2025, 6, 17)),),
    ),
    _eq(
        "0056",
        "元大高股息",
        "Yuanta Taiwan Dividend Plus ETF",
        "TWSE",
        "TSE",
        "00",
        23.0,
        20000,
        2500,
        security_type="24",
        etf=True,
        basket="equal",
        basket_excludes=("2330",),
    ),
    _eq(
        "2412",
        "中華電",
        "Chunghwa Telecom",
        "TWSE",
        "TSE",
        "27",
        62.0,
        9000,
        1200,
        vol=0.007,
        beta=0.2,
        weight=0.012,
    ),
    _eq("2881", "富邦金", "Fubon Financial", "TWSE", "TSE", "17", 48.0, 15000, 2500, weight=0.015),
    _eq("2882", "國泰金", "Cathay Financial", "TWSE", "TSE", "17", 45.0, 16000, 2500, weight=0.013),
    _eq("1301", "台塑", "Formosa Plastics", "TWSE", "TSE", "03", 78.0, 8000, 1500, weight=0.004),
    _eq(
        "2002",
        "中鋼",
        "China Steel",
        "TWSE",
        "TSE",
        "10",
        28.0,
        25000,
        2000,
        vol=0.012,
        weight=0.005,
    ),
    _eq(
        "2603",
        "長榮",
        "Evergreen Marine",
        "TWSE",
        "TSE",
        "15",
        21.0,
        30000,
        4000,
        vol=0.028,
        weight=0.007,
        runs=0.3,
    ),
    _eq(
        "2308", "台達電", "Delta Electronics", "TWSE", "TSE", "28", 120.0, 5000, 1800, weight=0.018
    ),
    _eq("3008", "大立光", "Largan", "TWSE", "TSE", "26", 900.0, 800, 1200, vol=0.024, weight=0.004),
    _eq(
        "1101",
        "台泥",
        "Taiwan Cement",
        "TWSE",
        "TSE",
        "01",
        35.0,
        9000,
        1400,
        vol=0.012,
        weight=0.003,
    ),
    _eq(
        "6669",
        "緯穎",
        "Wiwynn",
        "TWSE",
        "TSE",
        "25",
        420.0,
        1200,
        2000,
        vol=0.026,
        listed=date(2019, 3, 27),
        weight=0.006,
    ),
    _eq(
        "6488",
        "環球晶",
        "GlobalWafers",
        "TPEx",
        "OTC",
        "24",
        95.0,
        2500,
        1500,
        vol=0.025,
        weight=0.03,
    ),
    _eq(
        "5483",
        "中美晶",
        "Sino-American Silicon",
        "TPEx",
        "OTC",
        "24",
        40.0,
        6000,
        1600,
        vol=0.025,
        weight=0.02,
    ),
    _eq("8069", "元太", "E Ink", "TPEx", "OTC", "26", 30.0, 7000, 1600, vol=0.024, weight=0.035),
    _eq(
        "3293",
        "鈊象",
        "IGS",
        "TPEx",
        "OTC",
        "32",
        60.0,
        900,
        300,
        vol=0.027,
        suspensions=((date(2018, 3, 1), date(2018, 3, 20)),),
        weight=0.02,
        runs=1.2,
    ),
    _eq(
        "6446",
        "藥華藥",
        "PharmaEssentia",
        "TPEx",
        "OTC",
        "22",
        50.0,
        1500,
        1000,
        vol=0.03,
        listed=date(2016, 7, 11),
        suspensions=((date(2023, 11, 6), date(2023, 11, 10)),),
        weight=0.035,
        runs=0.2,
    ),
    # Emerging board: volume in shares, no price limits.
    _eq(
        "7705",
        "興亞創新",
        "Xingya Innovation",
        "TPEx",
        "ESB",
        "22",
        35.0,
        150000,
        120,
        vol=0.035,
        listed=date(2021, 5, 3),
        day_trade=False,
    ),
)

#: Instruments whose listing changes within the synthetic history, so that a question asked
#: "as of" a date has an answer that differs from today's (a sandbox started with ``now=D``
#: knows nothing after D). Their names are the sandbox's own; none is an index component,
#: so the indices, ETF baskets and every other instrument's data are as without them; and
#: none pays a dividend, so the corporate-actions lists are as without them too.
#:
#: ======  =========================================  ======================================
#: 6901    lists on 2024-03-18                         no data, ticker 404 before
#: 1907    delisted from 2025-09-01                     last session 2025-08-29; TERMINATED,
#:                                                      out of the tickers list from then
#: 2908    suspended 2025-03-03 to 2025-04-14           no trades, SUSPENDED, still listed
#: 00991   an ETF that lists on 2025-02-10              type EQUITY, securityType 24
#: 6905    moves from TPEx (OTC) to TWSE (TSE)          on 2024-09-23 (same symbol)
#: ======  =========================================  ======================================
LIFECYCLE: tuple[Instrument, ...] = (
    _eq(
        "6901",
        "模擬新創",
        "Sandbox Newlist",
        "TWSE",
        "TSE",
        "24",
        58.0,
        3000,
        900,
        vol=0.028,
        listed=date(2024, 3, 18),
        dividend_months=(),
    ),
    _eq(
        "1907",
        "模擬退市",
        "Sandbox Delisted",
        "TWSE",
        "TSE",
        "01",
        24.0,
        4000,
        600,
        vol=0.022,
        growth=-0.05,
        delisted=date(2025, 9, 1),
        dividend_months=(),
    ),
    _eq(
        "2908",
        "模擬停牌",
        "Sandbox Suspended",
        "TWSE",
        "TSE",
        "29",
        33.0,
        2500,
        500,
        suspensions=((date(2025, 3, 3), date(2025, 4, 14)),),
        dividend_months=(),
    ),
    _eq(
        "00991",
        "模擬主題ETF",
        "Sandbox Theme ETF",
        "TWSE",
        "TSE",
        "00",
        15.0,
        9000,
        1200,
        vol=0.012,
        security_type="24",
        etf=True,
        listed=date(2025, 2, 10),
        dividend_months=(),
    ),
    _eq(
        "6905",
        "模擬轉板",
        "Sandbox Uplisted",
        "TPEx",
        "OTC",
        "24",
        70.0,
        1800,
        700,
        vol=0.026,
        moves=((date(2024, 9, 23), "TWSE", "TSE"),),
        dividend_months=(),
    ),
)

INDICES: tuple[Instrument, ...] = (
    Instrument(
        "IX0001",
        "發行量加權股價指數",
        "TAIEX",
        "INDEX",
        "TWSE",
        "TSE",
        "00",
        "00",
        9274.11,
        210_000_000_000,
        3240,
    ),
    Instrument(
        "IX0043",
        "櫃買指數",
        "TPEx Index",
        "INDEX",
        "TPEx",
        "OTC",
        "00",
        "00",
        140.0,
        45_000_000_000,
        3240,
    ),
)

WARRANTS: tuple[Instrument, ...] = (
    Instrument(
        "030501",
        "台積電元大5C01",
        "TSMC Yuanta Call 01",
        "WARRANT",
        "TWSE",
        "TSE",
        "00",
        "10",
        1.2,
        600,
        80,
        vol=0.06,
        listed=date(2026, 1, 5),
        day_trade=False,
        dividend_months=(),
        underlying="2330",
        extra={"exercisePrice": 1800.0, "exerciseRatio": 0.01, "maturityDate": "2027-01-04"},
    ),
)


#: the industries the extra equities are spread over, in turn
_EXTRA_INDUSTRIES = ("24", "28", "25", "26", "31", "17", "03", "15", "20", "22")


def synthetic_equity(i: int) -> Instrument:
    """Extra generic equities for bulk benchmarks (``Sandbox(extra_equities=N)``): stocks of
    the TWSE board that load on the market and their industry's factor like the others, but
    are not components of the sandbox's TAIEX (their dailies would all be needed for it)."""
    symbol = f"9{i:03d}" if i < 1000 else f"9{i:04d}"
    return _eq(
        symbol,
        f"模擬{i:03d}",
        f"Synthetic {i:03d}",
        "TWSE",
        "TSE",
        _EXTRA_INDUSTRIES[i % len(_EXTRA_INDUSTRIES)],
        20.0 + (i * 37) % 280,
        3000 + (i * 113) % 9000,
        300,
        vol=0.015 + (i % 7) / 500,
    )


class Universe:
    def __init__(self, extra_equities: int = 0) -> None:
        extra = tuple(synthetic_equity(i) for i in range(1, extra_equities + 1))
        self.instruments: dict[str, Instrument] = {
            x.symbol: x for x in (*EQUITIES, *LIFECYCLE, *extra, *INDICES, *WARRANTS)
        }

    def __getitem__(self, symbol: str) -> Instrument:
        return self.instruments[symbol]

    def get(self, symbol: str) -> Instrument | None:
        return self.instruments.get(symbol)
