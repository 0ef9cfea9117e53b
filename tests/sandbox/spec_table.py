"""The REST spec (shared/spec/rest-api.md) as data, written from the document, not from the
sandbox: for every endpoint a request, the fields marked `*` and the JSON type of every field.

Types: s string, n number, b boolean, o object, a array. A trailing `?` allows null (announced
dividends, listing-applicant dates).
"""

from __future__ import annotations

D = "from=2026-01-05&to=2026-11-20&timeframe=D"

QUOTE_TYPES = {
    "date": "s",
    "type": "s",
    "exchange": "s",
    "market": "s",
    "symbol": "s",
    "name": "s",
    **{
        k: "n"
        for k in (
            "referencePrice",
            "previousClose",
            "openPrice",
            "openTime",
            "highPrice",
            "highTime",
            "lowPrice",
            "lowTime",
            "closePrice",
            "closeTime",
            "avgPrice",
            "change",
            "changePercent",
            "amplitude",
            "lastPrice",
            "lastSize",
            "lastUpdated",
            "serial",
        )
    },
    "bids": "a",
    "asks": "a",
    "total": "o",
    "lastTrade": "o",
    "lastTrial": "o",
    "tradingHalt": "o",
    **{
        k: "b"
        for k in (
            "isLimitDownPrice",
            "isLimitUpPrice",
            "isLimitDownBid",
            "isLimitUpBid",
            "isLimitDownAsk",
            "isLimitUpAsk",
            "isLimitDownHalt",
            "isLimitUpHalt",
            "isTrial",
            "isDelayedOpen",
            "isDelayedClose",
            "isContinuous",
            "isOpen",
            "isClose",
        )
    },
}
CANDLE_ROW = {k: "n" for k in ("open", "high", "low", "close", "volume", "average")} | {"date": "s"}
HIST_ROW = {k: "n" for k in ("open", "high", "low", "close", "volume", "turnover", "change")} | {
    "date": "s"
}
TRADE_ROW = {k: "n" for k in ("bid", "ask", "price", "size", "volume", "time", "serial")}
SNAP_ROW = {"type": "s", "symbol": "s", "name": "s"} | {
    k: "n"
    for k in (
        "openPrice",
        "highPrice",
        "lowPrice",
        "closePrice",
        "change",
        "changePercent",
        "tradeVolume",
        "tradeValue",
        "lastUpdated",
    )
}
TECH = {"symbol": "s", "from": "s", "to": "s", "timeframe": "s", "data": "a"}
TECH_REQ = ("symbol", "from", "to", "timeframe", "data")
OWN_ENV = {"type": "s", "exchange": "s", "market": "s", "symbol": "s", "data": "a"}
FUTOPT_DAILY_ROW = {
    "contractMonth": "s",
    "callPut": "s?",
    "strikePrice": "n?",
    "exchange": "s",
    **{
        k: "n?"
        for k in (
            "openPrice",
            "highPrice",
            "lowPrice",
            "closePrice",
            "change",
            "changePercent",
            "volumeSpread",
            "openInterest",
            "settlementPrice",
        )
    },
    "volume": "n",
}
ACTIONS_ENV = {"start_date": "s", "end_date": "s", "sort": "s", "data": "a"}

# name: (path and query, {field: type}, required fields, {row field: type}, required row fields)
ENDPOINTS: dict[str, tuple[str, dict, tuple, dict, tuple]] = {
    "stock.intraday.tickers": (
        "stock/intraday/tickers?type=EQUITY&exchange=TWSE&isNormal=true",
        {
            "date": "s",
            "type": "s",
            "exchange": "s",
            "market": "s",
            "industry": "s",
            "isNormal": "b",
            "isAttention": "b",
            "isDisposition": "b",
            "isHalted": "b",
            "data": "a",
        },
        ("date", "type", "exchange"),
        {"symbol": "s", "name": "s"},
        ("symbol", "name"),
    ),
    "stock.intraday.ticker": (
        "stock/intraday/ticker/2330",
        {
            "date": "s",
            "type": "s",
            "exchange": "s",
            "market": "s",
            "symbol": "s",
            "name": "s",
            "nameEn": "s",
            "industry": "s",
            "securityType": "s",
            "previousClose": "n",
            "referencePrice": "n",
            "limitUpPrice": "n",
            "limitDownPrice": "n",
            **{
                k: "b"
                for k in (
                    "canDayTrade",
                    "canBuyDayTrade",
                    "canBelowFlatMarginShortSell",
                    "canBelowFlatSBLShortSell",
                    "isAttention",
                    "isDisposition",
                    "isUnusuallyRecommended",
                    "isSpecificAbnormally",
                )
            },
            "matchingInterval": "n",
            "securityStatus": "s",
            "boardLot": "n",
            "tradingCurrency": "s",
        },
        ("date", "type", "exchange", "symbol", "name"),
        {},
        (),
    ),
    "stock.intraday.quote": (
        "stock/intraday/quote/2330",
        QUOTE_TYPES,
        ("date", "type", "exchange", "market", "symbol", "name"),
        {},
        (),
    ),
    "stock.intraday.candles": (
        "stock/intraday/candles/2330?timeframe=5",
        {
            "date": "s",
            "type": "s",
            "exchange": "s",
            "market": "s",
            "symbol": "s",
            "timeframe": "s",
            "data": "a",
        },
        ("date", "type", "exchange", "symbol", "timeframe", "data"),
        CANDLE_ROW,
        tuple(CANDLE_ROW),
    ),
    "stock.intraday.trades": (
        "stock/intraday/trades/2330?limit=20",
        {"date": "s", "type": "s", "exchange": "s", "market": "s", "symbol": "s", "data": "a"},
        ("date", "type", "exchange", "symbol", "data"),
        TRADE_ROW,
        ("price", "size", "time", "serial"),
    ),
    "stock.intraday.volumes": (
        "stock/intraday/volumes/2330",
        {"date": "s", "type": "s", "exchange": "s", "market": "s", "symbol": "s", "data": "a"},
        ("date", "type", "exchange", "symbol"),
        {"price": "n", "volume": "n", "volumeAtBid": "n", "volumeAtAsk": "n"},
        ("price", "volume", "volumeAtBid", "volumeAtAsk"),
    ),
    "stock.snapshot.quotes": (
        "stock/snapshot/quotes/TSE",
        {"date": "s", "time": "s", "market": "s", "data": "a"},
        ("date", "time", "market", "data"),
        SNAP_ROW,
        tuple(SNAP_ROW),
    ),
    "stock.snapshot.movers": (
        "stock/snapshot/movers/TSE?direction=down&change=value",
        {"date": "s", "time": "s", "market": "s", "change": "s", "data": "a"},
        ("date", "time", "market", "change", "data"),
        SNAP_ROW,
        tuple(SNAP_ROW),
    ),
    "stock.snapshot.actives": (
        "stock/snapshot/actives/OTC?trade=volume",
        {"date": "s", "time": "s", "market": "s", "trade": "s", "data": "a"},
        ("date", "time", "market", "trade", "data"),
        SNAP_ROW,
        tuple(SNAP_ROW),
    ),
    # sdk-parity section 3 (internal; from the recorded prod payload and the Rust SDK's model)
    "stock.snapshot.heatmap": (
        "stock/snapshot/heatmap/IX0001",
        {"date": "s", "time": "s", "symbol": "s", "data": "a"},
        ("date", "time", "symbol", "data"),
        SNAP_ROW
        | {
            "date": "s",
            "previousClose": "n",
            "tradeValueWeight": "n",
            "marketValueWeight": "n",
            "industry": "s",
        },
        (*SNAP_ROW, "previousClose"),
    ),
    "stock.historical.candles": (
        "stock/historical/candles/0050?from=2025-01-01&to=2025-12-31&fields="
        "open,high,low,close,volume,turnover,change",
        {
            "date": "s",
            "type": "s",
            "exchange": "s",
            "market": "s",
            "symbol": "s",
            "timeframe": "s",
            "data": "a",
        },
        # the spec marks date and timeframe `*`; the real payload
        # (samples/stock_historical_candles.json) has neither: wire-facts.md, "where the spec
        # and a real payload disagree, code must accept both"
        ("type", "exchange", "market", "symbol", "data"),
        HIST_ROW,
        tuple(HIST_ROW),
    ),
    "stock.historical.stats": (
        "stock/historical/stats/2330",
        {
            "date": "s",
            "type": "s",
            "exchange": "s",
            "market": "s",
            "symbol": "s",
            "name": "s",
            **{
                k: "n"
                for k in (
                    "openPrice",
                    "highPrice",
                    "lowPrice",
                    "closePrice",
                    "change",
                    "changePercent",
                    "tradeVolume",
                    "tradeValue",
                    "previousClose",
                    "week52High",
                    "week52Low",
                )
            },
        },
        (
            "date",
            "type",
            "exchange",
            "market",
            "symbol",
            "name",
            "openPrice",
            "highPrice",
            "lowPrice",
            "closePrice",
            "change",
            "changePercent",
            "tradeVolume",
            "tradeValue",
            "previousClose",
            "week52High",
            "week52Low",
        ),
        {},
        (),
    ),
    "stock.technical.sma": (
        f"stock/technical/sma/2330?{D}&period=20",
        TECH | {"period": "n"},
        (*TECH_REQ, "period"),
        {"date": "s", "sma": "n"},
        ("date", "sma"),
    ),
    "stock.technical.rsi": (
        f"stock/technical/rsi/2330?{D}&period=14",
        TECH | {"period": "n"},
        (*TECH_REQ, "period"),
        {"date": "s", "rsi": "n"},
        ("date", "rsi"),
    ),
    "stock.technical.kdj": (
        f"stock/technical/kdj/2330?{D}&rPeriod=9&kPeriod=3&dPeriod=3",
        TECH | {"rPeriod": "n", "kPeriod": "n", "dPeriod": "n"},
        (*TECH_REQ, "rPeriod", "kPeriod", "dPeriod"),
        {"date": "s", "k": "n", "d": "n", "j": "n"},
        ("date", "k", "d", "j"),
    ),
    "stock.technical.macd": (
        f"stock/technical/macd/2330?{D}&fast=12&slow=26&signal=9",
        TECH | {"fast": "n", "slow": "n", "signal": "n"},
        (*TECH_REQ, "fast", "slow", "signal"),
        {"date": "s", "macdLine": "n", "signalLine": "n"},
        ("date", "macdLine", "signalLine"),
    ),
    "stock.technical.bb": (
        f"stock/technical/bb/2330?{D}&period=20",
        TECH | {"period": "n"},
        TECH_REQ,
        {"date": "s", "upper": "n", "middle": "n", "lower": "n"},
        ("date", "upper", "middle", "lower"),
    ),
    "stock.corporate_actions.capital_changes": (
        "stock/corporate-actions/capital-changes?start_date=2025-01-01&end_date=2025-12-31",
        ACTIONS_ENV,
        ("data",),
        {
            "symbol": "s",
            "name": "s",
            "exchange": "s",
            "actionType": "s",
            "effectiveDate": "s",
            "haltDate": "s",
            "resumeDate": "s",
            "adjustmentFactor": "n",
            "raw": "o",
        },
        ("symbol", "name", "actionType", "effectiveDate", "adjustmentFactor", "raw"),
    ),
    "stock.corporate_actions.dividends": (
        "stock/corporate-actions/diviends?start_date=2026-06-01&end_date=2027-01-10",
        ACTIONS_ENV,
        ("data",),
        {
            "date": "s",
            "exchange": "s",
            "symbol": "s",
            "name": "s",
            "dividendType": "s",
            **{
                k: "n?"
                for k in (
                    "previousClose",
                    "referencePrice",
                    "dividend",
                    "limitUpPrice",
                    "limitDownPrice",
                    "openingReferencePrice",
                    "exdividendReferencePrice",
                    "cashDividend",
                    "stockDividendShares",
                )
            },
        },
        ("date", "symbol", "name", "dividendType"),
    ),
    "stock.corporate_actions.listing_applicants": (
        "stock/corporate-actions/listing-applicants?start_date=2026-01-01&end_date=2026-11-20",
        ACTIONS_ENV,
        ("data",),
        {
            "symbol": "s",
            "name": "s",
            "exchange": "s",
            "applicationDate": "s?",
            "chairman": "s?",
            "capitalAtApplication": "n?",
            "reviewCommitteeDate": "s?",
            "boardApprovalDate": "s?",
            "contractFilingDate": "s?",
            "contractApprovalDate": "s?",
            "listedDate": "s?",
            "underwriter": "s?",
            "underwritingPrice": "n?",
            "remarks": "s?",
        },
        ("symbol", "name", "exchange", "applicationDate"),
    ),
    "futopt.intraday.products": (
        "futopt/intraday/products?type=FUTURE",
        {
            "type": "s",
            "exchange": "s",
            "session": "s",
            "contractType": "s",
            "status": "s",
            "data": "a",
        },
        ("type", "data"),
        {
            "symbol": "s",
            "type": "s",
            "name": "s",
            "underlyingSymbol": "s",
            "contractType": "s",
            "contractSize": "n",
            "statusCode": "s",
            "tradingCurrency": "s",
            "quoteAcceptable": "b",
            "startDate": "s",
            "canBlockTrade": "b",
            "expiryType": "s",
            "underlyingType": "s",
            "marketCloseGroup": "n",
            # the spec gives "0 regular, 1 after-hours"; prod sends a string
            # (sdk-parity.md section 7)
            "endSession": "s",
        },
        ("symbol", "type", "name"),
    ),
    "futopt.intraday.tickers": (
        "futopt/intraday/tickers?type=OPTION&product=TXO",
        {
            "type": "s",
            "exchange": "s",
            "session": "s",
            "product": "s",
            "contractType": "s",
            "data": "a",
        },
        ("type", "exchange", "data"),
        {
            "type": "s",
            "symbol": "s",
            "name": "s",
            "referencePrice": "n",
            "contractType": "s",
            "startDate": "s",
            "endDate": "s",
            "flowGroup": "n",
            "settlementDate": "s",
            "isDynamicBanding": "b",
        },
        ("type", "symbol", "name"),
    ),
    "futopt.intraday.ticker": (
        "futopt/intraday/ticker/TXFL6",
        {
            "date": "s",
            "type": "s",
            "exchange": "s",
            "symbol": "s",
            "name": "s",
            "referencePrice": "n",
            "settlementDate": "s",
            "startDate": "s",
            "endDate": "s",
        },
        ("date", "type", "exchange", "symbol", "name"),
        {},
        (),
    ),
    "futopt.intraday.quote": (
        "futopt/intraday/quote/TXFL6",
        {
            "date": "s",
            "type": "s",
            "exchange": "s",
            "symbol": "s",
            "name": "s",
            **{
                k: "n"
                for k in (
                    "previousClose",
                    "openPrice",
                    "openTime",
                    "highPrice",
                    "highTime",
                    "lowPrice",
                    "lowTime",
                    "closePrice",
                    "closeTime",
                    "avgPrice",
                    "change",
                    "changePercent",
                    "amplitude",
                    "lastPrice",
                    "lastSize",
                    "lastUpdated",
                )
            },
            "serial": "s",
            "total": "o",
            "lastTrade": "o",
        },
        ("date", "type", "exchange", "symbol", "name"),
        {},
        (),
    ),
    "futopt.intraday.candles": (
        "futopt/intraday/candles/MXFL6?timeframe=15",
        {
            "date": "s",
            "type": "s",
            "exchange": "s",
            "market": "s",
            "symbol": "s",
            "timeframe": "s",
            "data": "a",
        },
        ("date", "type", "exchange", "symbol", "timeframe", "data"),
        CANDLE_ROW,
        tuple(CANDLE_ROW),
    ),
    "futopt.intraday.trades": (
        "futopt/intraday/trades/TXFL6?limit=30&session=afterhours",
        {"date": "s", "type": "s", "exchange": "s", "symbol": "s", "data": "a"},
        ("date", "type", "exchange", "symbol", "data"),
        {"bid": "n", "ask": "n", "price": "n", "size": "n", "time": "n", "serial": "s"},
        ("price", "size", "time", "serial"),
    ),
    "futopt.intraday.volumes": (
        "futopt/intraday/volumes/TXFL6",
        {"date": "s", "type": "s", "exchange": "s", "symbol": "s", "data": "a"},
        ("date", "type", "exchange", "symbol", "data"),
        {"price": "n", "volume": "n"},
        ("price", "volume"),
    ),
    # sdk-parity section 1 (no recorded payload: the official SDKs' types)
    **{
        f"stock.ownership.{name}": (
            f"stock/ownership/{name.replace('_', '-')}/{symbol}?from=2026-01-05&to=2026-11-20",
            OWN_ENV,
            ("symbol", "data"),
            {"date": "s", **rows},
            ("date",),
        )
        for name, symbol, rows in (
            ("etf_holdings", "0050", {"components": "a"}),
            (
                "institutional_trades",
                "2330",
                {"foreign": "o?", "trust": "o?", "dealer": "o?", "total": "n?"},
            ),
            ("director_holdings", "2330", {"directors": "a"}),
            ("tdcc_distribution", "2330", {"distributions": "a"}),
        )
    },
    # from sdk-parity.md section 2 (the post-#727 contract); volumeSpread: futures rows only
    "futopt.historical.daily": (
        "futopt/historical/daily/TXF?date=2026-11-19",
        {
            "date": "s",
            "product": "s",
            "exchange": "s",
            "session": "s",
            "contractMonth": "s",
            "data": "a",
        },
        ("date", "product", "exchange", "session", "data"),
        FUTOPT_DAILY_ROW,
        tuple(k for k in FUTOPT_DAILY_ROW if k != "volumeSpread"),
    ),
    "futopt.historical.candles": (
        "futopt/historical/candles/TXF?contractMonth=1%21&from=2026-10-01&to=2026-11-20"
        "&timeframe=5&sort=desc",
        {
            "product": "s",
            "contractMonth": "s",
            "exchange": "s",
            "session": "s",
            "timeframe": "s",
            "sort": "s",
            "data": "a",
        },
        ("product", "exchange", "session", "timeframe", "sort", "data"),
        {
            "date": "s",
            "contractMonth": "s",
            **{
                k: "n"
                for k in (
                    "open",
                    "high",
                    "low",
                    "close",
                    "volume",
                    "average",
                    "transaction",
                    "change",
                )
            },
        },
        ("date", "contractMonth"),
    ),
}
