"""Write throughput: ``Brain.add_many`` into a fresh brain, with the default local model and without embedding.

    .venv/bin/python bench/write_bench.py [--memories 2000] [--rounds 3] [--before /tmp/before]

Each round writes the same ``--memories`` memories (``bench/recall_bench.py``'s corpus) into a fresh brain twice,
interleaved: once with the ``local`` provider (the embedding included, as ``cerebro import`` pays it) and once with
provider ``none`` (the write path alone). Reports memories/s of wall time and CPU milliseconds a memory (this
process's CPU, ONNX Runtime's threads included), medians over the rounds, with the load average before and after.
Results are meant for docs/benchmarks.md (issue 18's target: ≥ 300 memories/s wall, ≤ 6 ms CPU a memory).

``--before DIR`` (another commit's ``cerebro`` and ``alembic``: ``git archive <commit> cerebro alembic alembic.ini
| tar -x -C DIR``) measures that code against this checkout instead: each write in a process of its own, the package
first on ``PYTHONPATH``, the two sides interleaved and their order swapped every round.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import recall_bench  # the bench folder is not a package: found through sys.path above


def write_once(
    folder: Path, provider: str, items: list[dict[str, object]], model: str | None = None
) -> tuple[float, float]:
    """(memories/s wall, CPU ms a memory) of one add_many into a new brain (of ``model``, else the provider's)."""
    from cerebro import Brain

    path = folder / f"{provider}-{time.time_ns()}.sqlite"
    Brain.init(path, embed_provider=provider, embed_model=model)
    with Brain.open(path) as brain:
        brain.add_many(items[:1])  # the model loaded and warm: a long-lived importer's steady state
        cpu, wall = time.process_time(), time.perf_counter()
        brain.add_many(items[1:], batch_size=256)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return (len(items) - 1) / wall, cpu * 1000 / (len(items) - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="another commit's tree (cerebro/, alembic/) to measure against this one")
    parser.add_argument("--one", choices=["local", "none"], help=argparse.SUPPRESS)  # a child's single write
    args = parser.parse_args()
    if args.memories < 2:
        parser.error("--memories must be at least 2 (one warms the model up)")
    rng = random.Random(3)
    items: list[dict[str, object]] = [
        {"content": recall_bench.sentence(rng), "type": rng.choice(recall_bench.TYPES)} for _ in range(args.memories)
    ]
    if args.one:
        with tempfile.TemporaryDirectory() as scratch:
            os.environ["CEREBRO_HOME"] = str(Path(scratch) / "home")
            print(json.dumps(write_once(Path(scratch), args.one, items)))
        return
    if args.before:
        print(json.dumps(against(Path(args.before), args.memories, args.rounds), indent=2))
        return
    git = ["git", "rev-parse", "--short", "HEAD"]
    result: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "commit": subprocess.run(git, check=False, capture_output=True, text=True).stdout.strip(),
        "memories": args.memories,
        "load_average_before": os.getloadavg(),
    }
    runs: dict[str, list[tuple[float, float]]] = {"local": [], "none": []}
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["CEREBRO_HOME"] = str(Path(scratch) / "home")  # throwaway brains stay out of the user's home
        for _round in range(args.rounds):
            for provider in runs:
                runs[provider].append(write_once(Path(scratch), provider, items))
    for provider, samples in runs.items():
        result[provider] = {
            "memories_per_second": round(statistics.median(s[0] for s in samples), 1),
            "cpu_ms_per_memory": round(statistics.median(s[1] for s in samples), 2),
        }
    result["load_average_after"] = os.getloadavg()
    print(json.dumps(result, indent=2))


def against(before: Path, memories: int, rounds: int) -> dict[str, object]:
    """Interleaved rounds of ``before`` and this checkout, each write a child process; medians of each side."""
    script = Path(__file__).resolve()
    here = script.parents[1]
    sides = {"before": before.resolve(), "after": here}
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {(s, p): [] for s in sides for p in ("local", "none")}
    result: dict[str, object] = {"date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "memories": memories}
    result["load_average_before"] = os.getloadavg()
    for round_number in range(rounds):
        for side in list(sides)[:: 1 if round_number % 2 == 0 else -1]:
            for provider in ("local", "none"):
                env = {**os.environ, "PYTHONPATH": str(sides[side])}
                command = [sys.executable, str(script), "--one", provider, "--memories", str(memories)]
                done = subprocess.run(command, env=env, check=True, capture_output=True, text=True)
                samples[side, provider].append(tuple(json.loads(done.stdout.strip().splitlines()[-1])))
    for (side, provider), measured in samples.items():
        result[f"{side} {provider}"] = {
            "memories_per_second": round(statistics.median(m[0] for m in measured), 1),
            "cpu_ms_per_memory": round(statistics.median(m[1] for m in measured), 2),
        }
    result["load_average_after"] = os.getloadavg()
    return result


if __name__ == "__main__":
    main()
