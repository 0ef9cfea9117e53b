"""The sandbox's technical indicators: a plain implementation, independent of
``marketframe.indicators`` on purpose (this module must never import it), so that the package's
cross-check has a genuinely separate service to audit.

The sandbox's conventions (documented in docs/sandbox.md; the cross-check must find them):

* The series is computed over the candles of the requested range only (``from``..``to``, or the
  latest 30 days for minute timeframes); bars still warming up are omitted from ``data``.
* SMA(n): mean of the last n closes. First value on bar n-1.
* RSI(n): Wilder smoothing seeded with the mean gain and loss of the first n changes;
  RSI = 100 * G / (G + L) (50 when both are 0). First value on bar n.  (= TA-Lib)
* KDJ(r, k, d): RSV = 100 (C - LLV_r) / (HHV_r - LLV_r) (50 when HHV = LLV);
  K = ((k-1) K' + RSV) / k and D = ((d-1) D' + K) / d, seeded K' = D' = 50 (the recursion common
  in Taiwan, not TA-Lib's SMA smoothing); J = 3K - 2D. First value on bar r-1.
* MACD(f, s, g): EMAs with alpha = 2/(n+1) seeded with the FIRST close (not TA-Lib's SMA seed);
  macdLine = EMA_f - EMA_s; signalLine = EMA_g(macdLine) seeded with the first macdLine value.
  Values are published from bar s+g-2 on (the same first bar as TA-Lib's).
* Bollinger(n): middle = SMA(n); upper/lower = middle +/- 2 x the SAMPLE standard deviation
  (ddof = 1, not TA-Lib's population deviation). First value on bar n-1.
"""

from __future__ import annotations

import math

import numpy as np

NAN = float("nan")


def _sma(x: list[float], n: int) -> list[float]:
    out = [NAN] * len(x)
    for i in range(n - 1, len(x)):
        out[i] = math.fsum(x[i - n + 1 : i + 1]) / n
    return out


def _ema_first(x: list[float], n: int) -> list[float]:
    alpha = 2.0 / (n + 1)
    out = [NAN] * len(x)
    prev = None
    for i, v in enumerate(x):
        prev = v if prev is None else prev + alpha * (v - prev)
        out[i] = prev
    return out


def sma(close: list[float], period: int) -> dict[str, list[float]]:
    return {"sma": _sma(close, period)}


def rsi(close: list[float], period: int) -> dict[str, list[float]]:
    out = [NAN] * len(close)
    if len(close) <= period:
        return {"rsi": out}
    changes = [close[i] - close[i - 1] for i in range(1, len(close))]
    gain = math.fsum(max(c, 0.0) for c in changes[:period]) / period
    loss = math.fsum(max(-c, 0.0) for c in changes[:period]) / period

    def value(g: float, lo: float) -> float:
        return 50.0 if g + lo == 0 else 100.0 * g / (g + lo)

    out[period] = value(gain, loss)
    for i in range(period + 1, len(close)):
        c = changes[i - 1]
        gain = (gain * (period - 1) + max(c, 0.0)) / period
        loss = (loss * (period - 1) + max(-c, 0.0)) / period
        out[i] = value(gain, loss)
    return {"rsi": out}


def kdj(
    high: list[float], low: list[float], close: list[float], r: int, k: int, d: int
) -> dict[str, list[float]]:
    size = len(close)
    ks, ds, js = [NAN] * size, [NAN] * size, [NAN] * size
    kp = dp = 50.0
    for i in range(r - 1, size):
        hh, ll = max(high[i - r + 1 : i + 1]), min(low[i - r + 1 : i + 1])
        rsv = 50.0 if hh == ll else 100.0 * (close[i] - ll) / (hh - ll)
        kp = ((k - 1) * kp + rsv) / k
        dp = ((d - 1) * dp + kp) / d
        ks[i], ds[i], js[i] = kp, dp, 3 * kp - 2 * dp
    return {"k": ks, "d": ds, "j": js}


def macd(close: list[float], fast: int, slow: int, signal: int) -> dict[str, list[float]]:
    ef, es = _ema_first(close, fast), _ema_first(close, slow)
    line = [a - b for a, b in zip(ef, es, strict=True)]
    sig = _ema_first(line, signal)
    start = slow + signal - 2
    line = [v if i >= start else NAN for i, v in enumerate(line)]
    sig = [v if i >= start else NAN for i, v in enumerate(sig)]
    return {"macdLine": line, "signalLine": sig}


def bb(close: list[float], period: int) -> dict[str, list[float]]:
    mid = _sma(close, period)
    up, lo = [NAN] * len(close), [NAN] * len(close)
    for i in range(period - 1, len(close)):
        w = close[i - period + 1 : i + 1]
        var = math.fsum((v - mid[i]) ** 2 for v in w) / (period - 1) if period > 1 else 0.0
        sd = math.sqrt(var)
        up[i], lo[i] = mid[i] + 2 * sd, mid[i] - 2 * sd
    return {"upper": up, "middle": mid, "lower": lo}


def compute(
    name: str, high: np.ndarray, low: np.ndarray, close: np.ndarray, params: dict[str, int]
) -> dict[str, np.ndarray]:
    h, lo, c = high.tolist(), low.tolist(), close.tolist()
    if name == "sma":
        got = sma(c, params["period"])
    elif name == "rsi":
        got = rsi(c, params["period"])
    elif name == "kdj":
        got = kdj(h, lo, c, params["rPeriod"], params["kPeriod"], params["dPeriod"])
    elif name == "macd":
        got = macd(c, params["fast"], params["slow"], params["signal"])
    elif name == "bb":
        got = bb(c, params["period"])
    else:  # pragma: no cover - the route table only names the five above
        raise ValueError(name)
    return {k: np.asarray(v, dtype=float) for k, v in got.items()}
