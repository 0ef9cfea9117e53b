"""``marketframe.download`` and ``marketframe.Ticker``: any range of many symbols in one call,
in yfinance's words where a yfinance user would use them.

``_download`` is the call and ``_check`` its arguments checked before any request (:func:`check`),
``_yf`` yfinance's vocabulary translated once into the service's (periods, intervals, Yahoo's
suffixes, the wide layout), ``_ticker`` the ``Ticker`` of one symbol over a shared client.

``marketframe.download`` is the function, not this package: ``marketframe/__init__.py``
imports it eagerly, so importing any module of this folder never hides it.
"""

from marketframe.download._check import check
from marketframe.download._download import download
from marketframe.download._ticker import Ticker

__all__ = ["Ticker", "check", "download"]
