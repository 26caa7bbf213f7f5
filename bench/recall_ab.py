"""In-process recall, this checkout against another, in alternating runs: the before and after of one table.

    git archive <commit> cerebro alembic alembic.ini | tar -x -C /tmp/before
    .venv/bin/python bench/recall_ab.py --before /tmp/before --sizes 1000,10000,100000 --rounds 3

A shared 2-core machine's speed moves from one hour to the next (the NumPy floor at 100k read 7.6 ms of CPU one day
and 9.0 the next), so a "before" column from another run compares machines as much as code. Here each round runs
``recall_bench.py --no-cli`` on the same brains (``bench/out``) once with the other checkout's package first on
``PYTHONPATH`` and once with this one's, in turn (which goes first alternates): the table gives each side's median
CPU p50 over the rounds, the median of the per-round ratios after / before, and b (t ∝ N^b) per side.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KEY = "recall_cpu_p50_ms_excl_embedding"


def run(code: str | None, sizes: str, out: str, settle: int = 0) -> dict:
    """One recall_bench.py --no-cli run with ``code`` (a checkout's folder) first on sys.path, or this checkout."""
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    if code is not None:
        env["PYTHONPATH"] = code
    argv = [sys.executable, str(HERE / "recall_bench.py"), "--sizes", sizes, "--no-cli", "--out", out]
    argv += ["--settle", str(settle)]
    done = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"recall_bench.py failed: {done.stderr[-800:]}")
    text = done.stdout
    return json.loads(text[text.index("{\n") :])  # the closing summary (one JSON line a size comes before it)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="another checkout's folder (holding cerebro/)")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default="bench/out", help="where recall_bench.py keeps its brains")
    parser.add_argument("--settle", type=int, default=0, help="recalls before the measured ones, each run")
    args = parser.parse_args()
    sides: dict[str, list[dict]] = {"before": [], "after": []}
    for number in range(args.rounds):
        order = [("before", args.before), ("after", None)]
        for name, code in order if number % 2 == 0 else reversed(order):
            sides[name].append(run(code, args.sizes, args.out, args.settle))
            print(f"round {number + 1} {name}: load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
    sizes = args.sizes.split(",")
    print("| memories | before: recall CPU p50 | after | after / before, per round (median) | NumPy floor |")
    print("|---|---|---|---|---|")
    for size in sizes:
        before = [r[size][KEY] for r in sides["before"]]
        after = [r[size][KEY] for r in sides["after"]]
        ratios = [a / b for a, b in zip(after, before, strict=True)]
        floor = statistics.median(r[size]["floor_matmul_cpu_p50_ms"] for r in sides["before"] + sides["after"])
        print(
            f"| {int(size):,} | {statistics.median(before):.2f} ms | **{statistics.median(after):.2f} ms** | "
            f"{statistics.median(ratios):.2f} | {floor:.2f} ms |"
        )
    for small, big in itertools.pairwise(sizes):
        b = {
            name: statistics.median(
                math.log(r[big][KEY] / r[small][KEY]) / math.log(int(big) / int(small)) for r in runs
            )
            for name, runs in sides.items()
        }
        print(f"\nb ({int(small):,} → {int(big):,}): before {b['before']:.2f}, after **{b['after']:.2f}**")
    loads = [r["load_average_after"][0] for runs in sides.values() for r in runs]
    print(
        f"\nLoad average (1 min) after each run: {min(loads):.2f}–{max(loads):.2f}; commit of each run: "
        f"{sides['after'][0].get('commit', '?')} (both sides run this checkout's bench script)."
    )


if __name__ == "__main__":
    main()
