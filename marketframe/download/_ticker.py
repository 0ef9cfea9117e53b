"""``marketframe.Ticker``: one symbol, the way yfinance users reach for it.

``Ticker("2330")`` (or ``"2330.TW"``) gathers what the endpoints say about one symbol:
``history()`` (candles through :func:`marketframe.download`, with ``period``/``interval``),
``dividends``, ``splits`` and ``actions`` (the corporate-actions endpoints), ``info`` (the
ticker and stats endpoints), ``fast_info`` (yfinance's keys: ``_fastinfo``), ``quote`` and
``trades`` (intraday). ``Tickers("2330 0050")`` holds several, as yfinance's does.
Everything goes through one :class:`~marketframe.Client`: the one given, else one shared by
every ``Ticker`` of the process (the real service with ``MARKETFRAME_API_KEY``, else the
embedded sandbox, announced on stderr, as ``download()`` and the commands do). No second
client, no cache of its own: the client's HTTP cache answers repeated calls.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from marketframe._time import taipei_today
from marketframe._typing import DayLike
from marketframe.convert import check_backend, to_frame
from marketframe.download import _keywords, _yf
from marketframe.download._download import download
from marketframe.download._fastinfo import FastInfo
from marketframe.endpoints import EARLIEST, to_date
from marketframe.exceptions import InvalidParams

if TYPE_CHECKING:
    from marketframe.client import Client

_shared: Client[Any] | None = None
_lock = threading.Lock()


def shared_client() -> Client[Any]:
    """The client of every ``Ticker`` made without one (created on first use)."""
    global _shared
    with _lock:
        if _shared is None:  # the rule of download() and the commands
            # the client (requests) loads with the first Ticker that needs one
            from marketframe.client import make_client

            _shared = make_client(notice=sys.stderr)
        return _shared


class Ticker:
    """One symbol's candles, corporate actions, facts and intraday data (see the module).

    ``symbol``: ``"2330"``, or with Yahoo's suffix (``"2330.TW"``, ``"6488.TWO"``: dropped,
    the board checked against the ticker's market on the first call). ``client``: the
    :class:`~marketframe.Client` to use (default: one shared by every Ticker). ``backend``:
    ``"pandas"`` or ``"polars"`` for the frames returned.
    """

    def __init__(self, symbol: str, *, client: Client[Any] | None = None, backend: str = "pandas"):
        if not isinstance(symbol, str) or not symbol.strip():
            raise InvalidParams("Ticker", "symbol", f"has value {symbol!r}", "a symbol like '2330'")
        bare, found = _yf.split_suffixes(symbol.strip(), "Ticker", "symbol")
        self.symbol: str = bare
        self._suffix = found
        self._client = client
        self.backend = check_backend("Ticker", backend)
        self._fast_info: FastInfo | None = None

    def __repr__(self) -> str:
        return f"marketframe.Ticker({self.symbol!r})"

    @property
    def client(self) -> Client[Any]:
        return self._client if self._client is not None else shared_client()

    def _checked(self) -> Client[Any]:
        client = self.client
        if self._suffix:
            _yf.check_boards(client, self._suffix)
            self._suffix = {}
        return client

    # -- candles --------------------------------------------------------------------------

    def history(
        self,
        period: str | None = "1mo",
        interval: str = "1d",
        start: DayLike | None = None,
        end: DayLike | None = None,
        *,
        adjust: str | bool | None = None,
        **options: Any,
    ) -> Any:
        """Candles as :func:`marketframe.download` returns them, for this symbol:
        ``period`` (default ``"1mo"``; ignored when ``start`` or ``end`` is given),
        ``interval`` (default ``"1d"``), ``start``/``end`` (``end`` inclusive),
        ``adjust`` (``True``/``"all"``, ``"splits"``; default prices as traded) and any
        other option of ``download`` (``fields``, ``layout``, ``store`` ...)."""
        options["adjust"] = adjust
        return _candles(
            [self.symbol], self._checked(), self.backend, period, interval, start, end, options
        )

    # -- corporate actions ------------------------------------------------------------------

    def _actions(self, start: DayLike | None, end: DayLike | None) -> tuple[pa.Table, pa.Table]:
        from marketframe.adjust import fetch_actions  # loaded on first use

        hi = to_date("Ticker", "end", end) if end is not None else taipei_today()
        lo = to_date("Ticker", "start", start) if start is not None else EARLIEST["stock"]
        client = self._checked()
        capital, dividends = fetch_actions(client.prepare, client.send_all, lo, hi, "all")
        assert dividends is not None  # mode "all" fetches them
        return _mine(capital, self.symbol), _mine(dividends, self.symbol)

    def get_dividends(self, start: DayLike | None = None, end: DayLike | None = None) -> Any:
        """The dividend rows of this symbol (cash and stock), oldest first; since 2010 by
        default (one request a year, cached by the client)."""
        return self._frame(self._actions(start, end)[1], "date")

    def get_splits(self, start: DayLike | None = None, end: DayLike | None = None) -> Any:
        """The capital changes of this symbol (splits, reductions, par value changes) with
        their price adjustment factors, oldest first."""
        return self._frame(self._actions(start, end)[0], "effective_date")

    def get_actions(self, start: DayLike | None = None, end: DayLike | None = None) -> Any:
        """Dividends and capital changes in one frame: ``date``, ``action``
        (``dividend`` or the capital change's type), ``cash_dividend``,
        ``stock_dividend_shares``, ``adjustment_factor``."""
        capital, dividends = self._actions(start, end)
        cap = capital.to_pandas()
        div = dividends.to_pandas()
        rows = pd.concat(
            [
                pd.DataFrame(
                    {
                        "date": pd.to_datetime(div["date"]).astype("datetime64[us]"),
                        "action": "dividend",
                        "cash_dividend": div["cash_dividend"].astype("float64"),
                        "stock_dividend_shares": div["stock_dividend_shares"].astype("float64"),
                        "adjustment_factor": float("nan"),
                    }
                ),
                pd.DataFrame(
                    {
                        "date": pd.to_datetime(cap["effective_date"]).astype("datetime64[us]"),
                        "action": cap["action_type"].astype(str),
                        "cash_dividend": float("nan"),
                        "stock_dividend_shares": float("nan"),
                        "adjustment_factor": cap["adjustment_factor"].astype("float64"),
                    }
                ),
            ],
            ignore_index=True,
        )
        rows = rows.sort_values("date", kind="stable").reset_index(drop=True)
        return _backend(rows, self.backend)

    @property
    def dividends(self) -> Any:
        """:meth:`get_dividends` since 2010."""
        return self.get_dividends()

    @property
    def splits(self) -> Any:
        """:meth:`get_splits` since 2010."""
        return self.get_splits()

    @property
    def actions(self) -> Any:
        """:meth:`get_actions` since 2010."""
        return self.get_actions()

    # -- facts and intraday -------------------------------------------------------------------

    @property
    def info(self) -> dict[str, Any]:
        """The ticker endpoint's row (name, market, industry, prices of the day's limits ...)
        and the stats endpoint's (latest close, change, volume ...), as one dict."""
        client = self._checked()
        out: dict[str, Any] = {}
        for name in ("stock.intraday.ticker", "stock.historical.stats"):
            table = client.fetch_table(name, symbol=self.symbol)
            if table.num_rows:
                for key, value in table.slice(0, 1).to_pylist()[0].items():
                    out.setdefault(key, value)
        return out

    @property
    def fast_info(self) -> FastInfo:
        """yfinance's ``fast_info``: ``["lastPrice"]``, ``["yearHigh"]`` ... (also
        ``.last_price``), each fetched on first use and kept by this Ticker."""
        if self._fast_info is None:
            self._fast_info = FastInfo(self._fast, self.symbol)
        return self._fast_info

    def _fast(self, group: str) -> pa.Table:
        client = self._checked()
        if group in ("quote", "ticker"):
            return client.fetch_table(f"stock.intraday.{group}", symbol=self.symbol)
        return download([self.symbol], period="1y", backend="arrow", client=client)

    @property
    def quote(self) -> Any:
        """The intraday quote (one row)."""
        return self._checked().load(
            "stock.intraday.quote", symbol=self.symbol, backend=self.backend
        )

    def get_trades(self, **params: Any) -> Any:
        """The day's trades (``limit=``, ``offset=``, ``odd_lot=True`` as the endpoint)."""
        return self._checked().load(
            "stock.intraday.trades", symbol=self.symbol, backend=self.backend, **params
        )

    @property
    def trades(self) -> Any:
        """:meth:`get_trades` with the endpoint's defaults."""
        return self.get_trades()

    def _frame(self, table: pa.Table, when: str) -> Any:
        if table.num_rows:
            table = table.take(pc.sort_indices(table, [(when, "ascending")]))

        return to_frame(table, self.backend)


class Tickers:
    """yfinance's ``Tickers``: several symbols at once, over one client.

    ``symbols``: ``"2330 0050"`` (spaces or commas, as yfinance) or a list; Yahoo's suffixes
    are taken as by :class:`Ticker`. ``.tickers`` maps each symbol, as given, to its
    :class:`Ticker`; ``history()`` (and its yfinance alias ``download()``) is one
    :func:`marketframe.download` of them all, with its options (``layout="wide"`` or
    ``group_by=`` for yfinance's shape; a long frame by default, as ``Ticker.history``).
    """

    def __init__(
        self,
        symbols: str | Sequence[str],
        *,
        client: Client[Any] | None = None,
        backend: str = "pandas",
    ):
        listed = _keywords.symbol_list(symbols)
        listed = [listed] if isinstance(listed, str) else listed
        if not isinstance(listed, Sequence) or not listed:
            raise InvalidParams(
                "Tickers", "symbols", f"has value {symbols!r}", "'2330 0050' or a list of symbols"
            )
        self.tickers: dict[str, Ticker] = {
            str(s).strip(): Ticker(s, client=client, backend=backend) for s in listed
        }
        self.symbols: list[str] = list(self.tickers)
        self._client = client
        self.backend = check_backend("Tickers", backend)

    def __repr__(self) -> str:
        return f"marketframe.Tickers({self.symbols!r})"

    def history(self, period: str | None = "1mo", **options: Any) -> Any:
        """Candles of every symbol in one :func:`marketframe.download` call, with the
        keyword arguments of :meth:`Ticker.history` (``interval``, ``start``, ``end`` ...)."""
        client = self._client if self._client is not None else shared_client()
        interval = options.pop("interval", "1d")
        start, end = options.pop("start", None), options.pop("end", None)
        return _candles(self.symbols, client, self.backend, period, interval, start, end, options)

    download = history  # yfinance's Tickers has both names


def _candles(
    symbols: list[str],
    client: Client[Any],
    backend: str,
    period: str | None,
    interval: str,
    start: DayLike | None,
    end: DayLike | None,
    options: dict[str, Any],
) -> Any:
    """:func:`download` in ``history``'s words: ``start``/``end`` win over ``period``."""
    if start is not None or end is not None:
        period = None
    options.setdefault("backend", backend)
    return download(symbols, start, end, period=period, interval=interval, client=client, **options)


def _mine(table: pa.Table, symbol: str) -> pa.Table:
    return table.filter(pc.equal(table.column("symbol"), pa.scalar(symbol)))


def _backend(frame: Any, backend: str) -> Any:
    if backend == "polars":
        import polars as pl  # an optional extra: loaded when asked for

        return pl.from_pandas(frame)
    return frame
