"""``State``: where an indicator left off, and its serialised form (a JSON header and plain
arrays, rings oldest first; never a pickle)."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping

import numpy as np
from numpy.typing import NDArray

from marketframe.exceptions import InvalidParams

from ._spec import IndicatorSpec

FORMAT_VERSION = 1
_FORMAT = "marketframe.indicators.state"


class State:
    """Where an indicator left off, for every symbol (see ``marketframe.indicators.stateful``).

    ``spec``: the indicator; ``symbols``: the panel width, or None for a 1-D series;
    ``bars``: bars consumed so far; ``arrays``: name -> array, the last axis over symbols
    (rings of the last inputs are ``(length, symbols)``, oldest first in the serialised
    form). States are values: ``apply`` returns a new one unless ``inplace=True``.
    """

    __slots__ = ("_machine", "arrays", "bars", "spec", "symbols")

    def __init__(
        self,
        spec: IndicatorSpec,
        symbols: int | None,
        bars: int = 0,
        arrays: Mapping[str, NDArray[np.generic]] | None = None,
    ) -> None:
        self.spec = spec
        self.symbols = symbols
        self.bars = int(bars)
        self._machine = spec.row.machine(spec)
        width = 1 if symbols is None else int(symbols)
        fresh = self._fresh(width)
        if arrays is None:
            self.arrays = fresh
            return
        got = {k: np.asarray(v) for k, v in arrays.items()}
        if set(got) != set(fresh):
            raise InvalidParams(
                spec.indicator, "state", f"holds {sorted(got)}, expected {sorted(fresh)}"
            )
        for k, v in got.items():
            if v.shape != fresh[k].shape or v.dtype != fresh[k].dtype:
                raise InvalidParams(
                    spec.indicator,
                    "state",
                    f"array {k!r} is {v.dtype}{v.shape}, expected {fresh[k].dtype}{fresh[k].shape}",
                )
        self.arrays = {k: v.copy() for k, v in got.items()}

    def _fresh(self, width: int) -> dict[str, NDArray[np.generic]]:
        m = self._machine
        out: dict[str, NDArray[np.generic]] = {}
        for name, length in m.rings.items():
            out[name] = np.full((length, width), np.nan)
        for name, (dtype, value) in m.scalars.items():
            out[name] = np.full(width, value, dtype=dtype)
        return out

    @classmethod
    def new(cls, spec: IndicatorSpec, symbols: int | None = None) -> State:
        """The state before the first bar (``symbols``: panel width; None: a 1-D series)."""
        if symbols is not None and (isinstance(symbols, bool) or int(symbols) < 0):
            raise InvalidParams(spec.indicator, "symbols", f"must be >= 0, got {symbols!r}")
        return cls(spec, symbols)

    def copy(self) -> State:
        return State(self.spec, self.symbols, self.bars, self.arrays)

    def advance(
        self, values: tuple[NDArray[np.float64], ...], out: tuple[NDArray[np.float64], ...],
        *, commit: bool = True,
    ) -> None:  # fmt: skip
        """One bar of a panel state, in place: the hot-loop form of ``step`` (no checks,
        no copies, no result objects). ``values``: one float64 array of one value per symbol
        per input (KDJ: high, low, close); ``out``: one such array per output (``spec``'s
        names, in order), overwritten. ``commit=False``: a peek, the state is left exactly as
        it was (a step writes only its bar's row of each ring and the per-symbol scalars:
        those are saved and put back, not the whole state copied)."""
        m = self._machine
        if commit:
            m.step(self.arrays, self.bars, values, out)
            self.bars += 1
            return
        saved = []
        for name, a in self.arrays.items():
            if name not in m.rings:
                saved.append((name, -1, a.copy()))
            elif a.shape[0]:
                row = self.bars % a.shape[0]
                saved.append((name, row, a[row].copy()))
        try:
            m.step(self.arrays, self.bars, values, out)
        finally:
            for name, row, a in saved:
                if row < 0:
                    self.arrays[name][...] = a
                else:
                    self.arrays[name][row] = a

    @property
    def nbytes(self) -> int:
        """Bytes of state arrays (all symbols)."""
        return sum(a.nbytes for a in self.arrays.values())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return (
            self.spec == other.spec
            and self.symbols == other.symbols
            and self.bars == other.bars
            and all(
                np.array_equal(self._ordered(k), other._ordered(k), equal_nan=True)
                for k in self.arrays
            )
        )

    # equal by value and mutable: not hashable (object's __hash__ is a method to the stubs)
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shape = "series" if self.symbols is None else f"{self.symbols} symbols"
        return f"State({self.spec.indicator} {self.spec.params}, {shape}, bars={self.bars})"

    # -- serialisation: rings oldest first, a JSON header, no pickle

    def _ordered(self, name: str) -> NDArray[np.generic]:
        a = self.arrays[name]
        if name in self._machine.rings and a.shape[0]:
            return np.roll(a, -(self.bars % a.shape[0]), axis=0)  # oldest first
        return a

    def to_parts(self) -> tuple[dict[str, object], dict[str, NDArray[np.generic]]]:
        """A JSON-able header and the arrays (rings oldest first): ``State.from_parts``."""
        meta: dict[str, object] = {
            "format": _FORMAT,
            "version": FORMAT_VERSION,
            "spec": self.spec.to_json(),
            "symbols": self.symbols,
            "bars": self.bars,
            "rings": sorted(self._machine.rings),
        }
        return meta, {k: self._ordered(k).copy() for k in self.arrays}

    @classmethod
    def from_parts(
        cls, meta: Mapping[str, object], arrays: Mapping[str, NDArray[np.generic]]
    ) -> State:
        """The state ``to_parts`` described (checks the format, version and array shapes)."""
        if meta.get("format") != _FORMAT or meta.get("version") != FORMAT_VERSION:
            raise InvalidParams(
                "indicators",
                "state",
                f"is not a version-{FORMAT_VERSION} indicator state:"
                f" format {meta.get('format')!r}, version {meta.get('version')!r}",
            )
        raw_spec = meta["spec"]
        assert isinstance(raw_spec, Mapping)
        sp = IndicatorSpec.from_json(raw_spec)
        symbols = meta["symbols"]
        bars = meta["bars"]
        assert symbols is None or isinstance(symbols, int)
        assert isinstance(bars, int)
        state = cls(sp, symbols, bars, arrays)
        for name, a in state.arrays.items():  # back to ring order (row of bar b: b % length)
            if name in state._machine.rings and a.shape[0]:
                state.arrays[name] = np.roll(a, bars % a.shape[0], axis=0)
        return state

    def to_bytes(self) -> bytes:
        """An ``.npz`` of the arrays plus the JSON header (``np.load(allow_pickle=False)``
        reads it; no Python object is pickled)."""
        meta, arrays = self.to_parts()
        header = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        buf = io.BytesIO()
        np.savez(buf, allow_pickle=False, __meta__=header, **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes) -> State:
        """The state ``to_bytes`` wrote."""
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            meta = json.loads(npz["__meta__"].tobytes().decode())
            arrays = {k: npz[k] for k in npz.files if k != "__meta__"}
        return cls.from_parts(meta, arrays)
