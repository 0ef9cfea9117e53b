"""``import marketframe`` vs ``import pandas, pyarrow`` (the two it cannot do without).

Each measurement is a fresh interpreter timing its own import statement (interpreter start-up
excluded); baseline and ours alternate, and the ratio printed is the median of the pairs'
ratios, with their spread. Target: <= 1.2x. Also lists the heavy optional libraries that
``import marketframe`` loaded (should be none).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

from _common import ROOT, print_ratios

TARGET = 1.2
HEAVY = ("polars", "matplotlib", "authlib", "aiohttp", "requests_cache", "requests")
SNIPPET = ("import sys, time; t = time.perf_counter(); import {mods}; "
           "print(time.perf_counter() - t); print(','.join(m for m in {heavy!r} "
           "if m in sys.modules))")


def timed(mods: str) -> tuple[float, str]:
    """Seconds one fresh interpreter takes to import ``mods``, and the heavy modules it got."""
    out = subprocess.run([sys.executable, "-c", SNIPPET.format(mods=mods, heavy=HEAVY)],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout.split("\n")
    return float(out[0]), out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=11, help="interleaved pairs (default 11)")
    args = parser.parse_args()
    timed("marketframe")  # warm the file cache and the bytecode of both sides
    timed("pandas, pyarrow")
    ratios, base, ours = [], [], []
    heavy = ""
    for _ in range(args.pairs):
        b, _unused = timed("pandas, pyarrow")
        o, heavy = timed("marketframe")
        base.append(b)
        ours.append(o)
        ratios.append(o / b)
    med = statistics.median(ratios)
    print(f"import pandas, pyarrow: median {statistics.median(base):.3f} s")
    print(f"import marketframe:     median {statistics.median(ours):.3f} s")
    print(f"ratio per pair: min {min(ratios):.2f}, median {med:.2f}, max {max(ratios):.2f}")
    print(f"heavy optional modules loaded by import marketframe: {heavy or 'none'}")
    print_ratios([(f"import marketframe / import pandas, pyarrow ({args.pairs} pairs)", med,
                   "met" if med <= TARGET else "MISSED")])


if __name__ == "__main__":
    main()
