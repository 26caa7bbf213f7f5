"""Recalls while the rows copy (ADR 0051) is built beside them: the slowest recalls and when the build ran.

    .venv/bin/python bench/rows_build_hitch.py [--size 100000] [--recalls 400] [--before DIR]

One process recalls back to back (the real local model, ``limit=10``) on a copy of ``bench/recall_bench.py``'s brain
of that size, as a long-lived server would: the first recalls load the model and the warm indexes, and once the
recalls at one state have earned it (ski rental) a rows copy is built on its thread. Prints the median recall, every
recall over three times it (with when it started, ms from the start) and when each build and each full garbage
collection ran. ``--before DIR``: the same with another checkout's package first on ``sys.path`` (``git worktree
add --detach DIR <commit>``), run after this one.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def measure(size: int, recalls: int) -> None:
    sys.path.insert(0, str(HERE))
    import recall_bench

    from cerebro import Brain
    from cerebro.store import warm_keywords, warm_rows

    started, events = time.perf_counter(), []

    def timed(name: str, work):  # noqa: ANN001, ANN202 - a build's function, wrapped
        def run(*args: object, **kwargs: object) -> object:
            events.append((f"{name} build start", time.perf_counter()))
            try:
                return work(*args, **kwargs)
            finally:
                events.append((f"{name} build end", time.perf_counter()))

        return run

    warm_rows.read_copy = timed("rows", warm_rows.read_copy)
    warm_keywords.read_copy = timed("keywords", warm_keywords.read_copy)
    gc.callbacks.append(
        lambda phase, info: info["generation"] == 2 and events.append((f"full collection {phase}", time.perf_counter()))
    )
    folder = Path(tempfile.mkdtemp())
    try:
        path = folder / "brain.sqlite"
        shutil.copy(HERE / "out" / f"brain-{size}.sqlite", path)
        rng = random.Random(7)
        queries = [recall_bench.query(rng) for _ in range(recalls)]
        spans = []
        with Brain.open(path) as brain:
            for text in queries:
                begin = time.perf_counter()
                brain.recall(text, limit=10)
                spans.append((begin, time.perf_counter()))
        walls = [(end - begin) * 1000 for begin, end in spans]
        median = statistics.median(walls)
        slowest = max(walls[3:], default=0.0)  # after the first three: the model's load and the warm indexes'
        print(f"recalls {recalls}, median {median:.1f} ms, slowest {slowest:.1f} ms after the first three")
        for number, wall in enumerate(walls):
            if wall > 3 * median:
                print(f"  recall {number}: {wall:.1f} ms, at {(spans[number][0] - started) * 1000:.0f} ms")
        for name, at in events:
            print(f"  {name} at {(at - started) * 1000:.0f} ms")
    finally:
        shutil.rmtree(folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--recalls", type=int, default=400)
    parser.add_argument("--before", help="another checkout's folder (holding cerebro/), measured after this one")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.size, args.recalls)
        return
    for name, code in [("this checkout", None), ("before", args.before)]:
        if name == "before" and code is None:
            break
        env = {**os.environ}
        env.pop("PYTHONPATH", None)
        if code is not None:
            env["PYTHONPATH"] = code
        print(f"{name} (load {os.getloadavg()[0]:.2f}):", flush=True)
        argv = [sys.executable, __file__, "--measure", "--size", str(args.size), "--recalls", str(args.recalls)]
        subprocess.run(argv, env=env, check=True)


if __name__ == "__main__":
    main()
