"""Futures and options contract codes (``TXFK6``, ``TXO22400L6``, ``MXFA6/C6``) and the forms of
the ``futopt.historical`` parameters, which take a *product* and a *contract month* instead.

TAIFEX codes: product (3 characters) + month letter + last digit of the year; futures months
are ``A``-``L`` (January-December); options put the strike first and use ``A``-``L`` for calls
and ``M``-``X`` for puts; a calendar spread joins two legs with ``/`` (``MXFA6/C6``).
"""

from __future__ import annotations

import datetime as dt
import re

#: a product code: three letters or digits, starting with a letter (``TXF``, ``TXO``, ``MXF``)
PRODUCT_RE = r"[A-Z][A-Z0-9]{2}"
#: ``YYYYMM``, weekly ``YYYYMMWn``/``YYYYMMFn``, a spread ``YYYYMM/YYYYMM``, or ``1!``-``3!``
_MONTH = r"\d{4}(?:0[1-9]|1[0-2])"
CONTRACT_MONTH_RE = rf"{_MONTH}(?:[WF][1-5])?|{_MONTH}/{_MONTH}|[123]!"
CONTRACT_MONTH_FORMS = (
    "YYYYMM (202611), weekly YYYYMMWn or YYYYMMFn (202610W1), a spread "
    "YYYYMM/YYYYMM (202609/202610), or the continuous 1! (front month), "
    "2!, 3!"
)

_CODES = "ABCDEFGHIJKL"
_PUTS = "MNOPQRSTUVWX"
_FUTURE = re.compile(r"([A-Z][A-Z0-9]{2})([A-L])(\d)")
_OPTION = re.compile(r"([A-Z][A-Z0-9]{2})(\d+)([A-X])(\d)")
_SPREAD = re.compile(r"([A-Z][A-Z0-9]{2})([A-L])(\d)/([A-L])(\d)")


def _year(digit: str, today: dt.date | None = None) -> int:
    """The year ending in ``digit`` nearest to today (five years back to four ahead)."""
    now = (today or dt.date.today()).year
    return next(y for y in range(now - 5, now + 5) if y % 10 == int(digit))


def _month(letter: str, digit: str) -> str:
    return f"{_year(digit)}{(_CODES + _PUTS).index(letter) % 12 + 1:02d}"


def product_fix(value: str) -> str:
    """What to pass instead of ``value`` as a product: for a contract code, its product and
    contract month (and strike and side of an option)."""
    text = value.strip().upper()
    if m := _SPREAD.fullmatch(text):
        p, a, ya, b, yb = m.groups()
        return (
            f"a contract code is not a product: pass product={p!r}, "
            f"contractMonth={_month(a, ya) + '/' + _month(b, yb)!r}"
        )
    if m := _FUTURE.fullmatch(text):
        p, letter, digit = m.groups()
        return (
            f"a contract code is not a product: pass product={p!r}, "
            f"contractMonth={_month(letter, digit)!r}"
        )
    if m := _OPTION.fullmatch(text):
        p, strike, letter, digit = m.groups()
        side = "CALL" if letter in _CODES else "PUT"
        return (
            f"a contract code is not a product: pass product={p!r}, "
            f"contractMonth={_month(letter, digit)!r} (candles also take "
            f"strikePrice={int(strike)}, callPut={side!r})"
        )
    return "a product code of three capitals or digits, e.g. 'TXF', 'MXF', 'TXO'"
