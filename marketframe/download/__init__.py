"""``marketframe.download`` and ``marketframe.Ticker``: any range of many symbols in one call,
in yfinance's words where a yfinance user would use them.

``_download`` is the call and ``_check`` its arguments checked before any request (:func:`check`),
``_yf`` yfinance's vocabulary translated once into the service's (periods, intervals, Yahoo's
suffixes, the wide layout) and ``_keywords`` its other keywords, ``_ticker`` the ``Ticker``
of one symbol over a shared client (and ``Tickers``, several), ``_fastinfo`` its ``fast_info``.

``marketframe.download`` is the function, not this package: ``marketframe/__init__.py``
imports it eagerly, so importing any module of this folder never hides it.
"""

from marketframe.download._check import check
from marketframe.download._download import download
from marketframe.download._ticker import Ticker, Tickers
from marketframe.download._yf import INTERVALS, PERIODS, resolve

__all__ = ["INTERVALS", "PERIODS", "Ticker", "Tickers", "check", "download", "resolve"]
