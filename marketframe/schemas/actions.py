"""Schemas of the corporate-action endpoints (capital changes, dividends, applicants)."""

from __future__ import annotations

from marketframe.schemas._core import col as _c
from marketframe.schemas._core import many as _many
from marketframe.schemas._core import schema as _schema

CAPITAL_CHANGES = _schema(
    [
        _c("symbol", "str", req=True),
        _c("name", "str"),
        _c("exchange", "cat"),
        _c("actionType", "cat"),
        *_many("date", "effectiveDate haltDate resumeDate"),
        _c("adjustmentFactor", "float"),
        *_many(
            "float",
            "raw.reductionRatio raw.splitRatio raw.parValueBefore "
            "raw.parValueAfter raw.lastClosePrice raw.previousClose raw.referencePrice "
            "raw.limitUpPrice raw.limitDownPrice raw.openingReferencePrice "
            "raw.refundPerShare raw.rightsOfferingRatio raw.rightsOfferingPrice "
            "raw.exRightsReferencePrice raw.exrightReferencePrice",
        ),
        _c("raw.sharesPerThousand", "float", "shares per 1000 shares"),
        *_many("str", "raw.splitType raw.reductionReason raw.reason"),
    ],
    rows=True,
    ignore="start_date end_date sort",
)

DIVIDENDS = _schema(
    [
        _c("date", "date", req=True),
        _c("exchange", "cat"),
        _c("symbol", "str", req=True),
        _c("name", "str"),
        *_many("float", "previousClose referencePrice dividend"),
        _c("dividendType", "cat"),
        *_many(
            "float",
            "limitUpPrice limitDownPrice openingReferencePrice "
            "exdividendReferencePrice cashDividend",
        ),
        _c("stockDividendShares", "float", "shares per 1000 shares"),
    ],
    rows=True,
    ignore="start_date end_date sort",
)

LISTING_APPLICANTS = _schema(
    [
        _c("symbol", "str"),
        _c("name", "str"),
        _c("exchange", "cat"),
        _c("applicationDate", "date"),
        _c("chairman", "str"),
        _c("capitalAtApplication", "float", "thousand TWD"),
        *_many(
            "date",
            "reviewCommitteeDate boardApprovalDate contractFilingDate "
            "contractApprovalDate listedDate",
        ),
        _c("underwriter", "str"),
        _c("underwritingPrice", "float"),
        _c("remarks", "str"),
    ],
    rows=True,
    ignore="start_date end_date sort",
)
