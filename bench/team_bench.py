"""Team brain beside brain file (issue 20): the same synthetic memories in a SQLite brain and in a PostgreSQL team
brain, writes/s and in-process recall p50/p95, measured in one run, queries interleaved.

    .venv/bin/python bench/team_bench.py --sizes 10000 [--queries 50] [--store postgresql+psycopg://…]

Without --store, a throwaway PostgreSQL 18 + pgvector from the tests' fixture (``tests/postgres.py``) serves the
team brain on this machine. The corpus and queries are ``bench/recall_bench.py``'s; the model is the default
local one in both; recall excludes the query embedding (the vector is given), as recall_bench's first column.
Prints JSON; the load average is logged before and after (a shared machine makes every figure noisier).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.recall_bench import TYPES, percentile, query, sentence


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def build(target: str | Path, size: int, team_project: str | None) -> dict[str, float]:
    from cerebro import Brain

    rng = random.Random(size)
    items = [
        {"content": sentence(rng), "type": rng.choice(TYPES), "importance": round(rng.uniform(0.1, 0.9), 2)}
        for _ in range(size)
    ]
    Brain.init(target, team_project=team_project)
    with Brain.open(target, team_project=team_project) as brain:
        wall, cpu = time.perf_counter(), _cpu()
        ids = brain.add_many(items, batch_size=256)
        wall, cpu = time.perf_counter() - wall, _cpu() - cpu
        for _ in range(size // 20):  # some graph structure
            a, b = rng.sample(ids, 2)
            brain.add_edge(a, b, rng.choice(("supports", "derived_from", "relates_to")))
    return {"add_per_second_wall": round(size / wall, 1), "add_ms_cpu_each": round(cpu / size * 1000, 2)}


def bench_recall(brains: dict[str, object], queries: list[str]) -> dict[str, dict[str, float]]:
    from cerebro.brain.retrieval import recall_options
    from cerebro.recall import recall as run_recall

    samples: dict[str, list[float]] = {name: [] for name in brains}
    first = next(iter(brains.values()))
    vectors = first.handle.embed(queries)  # type: ignore[attr-defined]
    for brain in brains.values():
        brain.recall("warm up")  # type: ignore[attr-defined]
        brain.recall("warm up the index")  # type: ignore[attr-defined]
    for text, vector in zip(queries, vectors, strict=True):
        for name, brain in brains.items():  # interleaved: each query on each engine in turn
            h = brain.handle  # type: ignore[attr-defined]
            with h.snapshot() as conn:
                options = recall_options(h.store, conn, limit=20, threshold=0.3, warm=h.warm(conn), mean=h.brain_mean)
                started = time.perf_counter()
                run_recall(h.store, conn, text, vector, options, mode="hybrid")
                samples[name].append((time.perf_counter() - started) * 1000)
    return {
        name: {"recall_p50_ms": round(statistics.median(s), 1), "recall_p95_ms": round(percentile(s, 0.95), 1)}
        for name, s in samples.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--store", default=None, help="a team database's URL (default: a throwaway local server)")
    args = parser.parse_args()
    from cerebro import Brain

    server = None
    url = args.store
    if url is None:
        from tests import postgres

        server = postgres.start()
        url = server.create_database()
    home = Path(tempfile.mkdtemp(prefix="team-bench-"))
    os.environ["CEREBRO_HOME"] = str(home)
    rng = random.Random(7)
    queries = [query(rng) for _ in range(args.queries)]
    results: dict[str, object] = {"load_before": os.getloadavg()}
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            file_brain = home / f"brain-{size}.sqlite"
            project = f"bench-{size}-{uuid.uuid4().hex[:6]}"
            row = {"sqlite": build(file_brain, size, None), "postgresql": build(url, size, project)}
            with Brain.open(file_brain) as on_file, Brain.open(url, team_project=project) as on_team:
                for name, numbers in bench_recall({"sqlite": on_file, "postgresql": on_team}, queries).items():
                    row[name].update(numbers)
            results[str(size)] = row
            print(json.dumps({size: row}), flush=True)
    finally:
        results["load_after"] = os.getloadavg()
        if server is not None:
            server.stop()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
