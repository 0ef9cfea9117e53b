"""``import marketframe`` vs ``import pandas, pyarrow`` (the two it cannot do without).

Each measurement is a fresh interpreter timing its own import statement (interpreter start-up
excluded), in wall and in CPU time (the latter steadier when other work shares the machine);
baseline and ours alternate, and the ratio printed is the median of the pairs' ratios, with
their spread. Target: <= 1.2x. Also lists the heavy optional libraries that
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
SNIPPET = (
    "import sys, time; t, c = time.perf_counter(), time.process_time(); import {mods}; "
    "print(time.perf_counter() - t, time.process_time() - c); "
    "print(','.join(m for m in {heavy!r} if m in sys.modules))"
)


def timed(mods: str, src: str = str(ROOT)) -> tuple[float, float, str]:
    """Wall and CPU seconds one fresh interpreter takes to import ``mods``, and the heavy
    modules it got. ``src``: the directory it runs in, whose ``marketframe/`` it imports."""
    out = subprocess.run(
        [sys.executable, "-c", SNIPPET.format(mods=mods, heavy=HEAVY)],
        capture_output=True,
        text=True,
        check=True,
        cwd=src,
    ).stdout.split("\n")
    wall, cpu = map(float, out[0].split())
    return wall, cpu, out[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=11, help="interleaved pairs (default 11)")
    parser.add_argument(
        "--src",
        default=str(ROOT),
        help="directory holding the marketframe/ to import (default: this "
        "checkout; e.g. `git archive REV marketframe | tar -x -C DIR` "
        "to measure an older commit)",
    )
    args = parser.parse_args()
    timed("marketframe", args.src)  # warm the file cache and the bytecode of both sides
    timed("pandas, pyarrow")
    walls, cpus = [], []
    heavy = ""
    for _ in range(args.pairs):
        b_wall, b_cpu, _unused = timed("pandas, pyarrow")
        o_wall, o_cpu, heavy = timed("marketframe", args.src)
        walls.append((b_wall, o_wall))
        cpus.append((b_cpu, o_cpu))
    for what, pairs in (("wall", walls), ("CPU", cpus)):
        r = [o / b for b, o in pairs]
        base, ours = statistics.median(b for b, _ in pairs), statistics.median(o for _, o in pairs)
        print(
            f"{what:4s}: import pandas, pyarrow median {base:.3f} s; "
            f"import marketframe median {ours:.3f} s; "
            f"ratio per pair min {min(r):.2f}, median {statistics.median(r):.2f}, "
            f"max {max(r):.2f}"
        )
    print(f"heavy optional modules loaded by import marketframe: {heavy or 'none'}")
    med = statistics.median(o / b for b, o in walls)
    cpu = statistics.median(o / b for b, o in cpus)
    print_ratios(
        [
            (
                f"import marketframe / import pandas, pyarrow, wall ({args.pairs} pairs)",
                med,
                "met" if med <= TARGET else "MISSED",
            ),
            ("  the same in CPU time (steadier on a loaded machine)", cpu, ""),
        ]
    )


if __name__ == "__main__":
    main()
