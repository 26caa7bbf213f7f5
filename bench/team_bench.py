"""Team brain beside brain file (issue 20): the same synthetic memories in a SQLite brain and in a PostgreSQL team
brain, writes/s and in-process recall p50/p95, measured in one run, queries interleaved.

    .venv/bin/python bench/team_bench.py --sizes 10000,100000 [--queries 50] [--store postgresql+psycopg://…]

Without --store, a throwaway PostgreSQL 18 + pgvector from the tests' fixture (``tests/postgres.py``) serves the
team brain on this machine. The corpus and queries are ``bench/recall_bench.py``'s, on the default local model.

Vectors: the first 10,000 memories are embedded by the model once (cached in ``bench/out``); beyond that each
memory's vector is one of those plus a little noise, renormalised (clustered like real ones; the model at ~24 ms
of CPU a memory would need 40 minutes to embed 100k here). Both engines get the same vectors through the same
write path (``Brain.add_many``), so writes/s compares the engines' write paths, embedding excluded; the team
brain's HNSW index build (past ``HNSW_MIN_VECTORS``) is timed on its own, and the database's statistics are
gathered after the load (``VACUUM ANALYZE``, as autovacuum would). Recall excludes the query embedding (the
vector is given, from the model), as recall_bench's first column. Prints JSON; the load average is logged
before and after (a shared machine makes every figure noisier).
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


BASE = 10_000  # memories embedded by the model; the rest are their noisy copies
NOISE = 0.02


class GivenVectors:
    """An embedder that answers from vectors made beforehand (by content), so that both engines are loaded with the
    same vectors and the load measures the write path, not the model."""

    def __init__(self, rows: dict[str, int], matrix: object, model: object) -> None:
        self.rows, self.matrix, self.model = rows, matrix, model

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.matrix[self.rows[t]].tolist() for t in texts]  # type: ignore[index]

    def __getattr__(self, name: str) -> object:
        return getattr(self.model, name)


def corpus(size: int, out: Path) -> tuple[list[dict[str, object]], dict[str, int], object]:
    """The first ``size`` memories of one stream (a smaller size is a prefix of a larger one), their rows in the
    vector matrix, and the matrix."""
    import numpy as np

    from cerebro.embed.registry import make_embedder, resolve_settings

    rng = random.Random(7919)
    items = [
        {"content": sentence(rng), "type": rng.choice(TYPES), "importance": round(rng.uniform(0.1, 0.9), 2)}
        for _ in range(max(size, BASE))
    ]
    cache = out / f"team-bench-base-{BASE}.npy"
    if cache.is_file():
        base = np.load(cache)
    else:
        model = make_embedder(*resolve_settings("local", None, None))
        texts = [str(item["content"]) for item in items[:BASE]]
        base = np.zeros((BASE, 384), dtype=np.float32)
        for start in range(0, BASE, 256):
            chunk = texts[start : start + 256]
            base[start : start + len(chunk)] = np.asarray(model.embed(chunk), dtype=np.float32)
        out.mkdir(parents=True, exist_ok=True)
        np.save(cache, base)
    items = items[:size]
    matrix = np.zeros((size, 384), dtype=np.float32)
    matrix[: min(size, BASE)] = base[: min(size, BASE)]
    if size > BASE:
        noisy = base[np.arange(BASE, size) % BASE] + np.random.default_rng(size).normal(0, NOISE, (size - BASE, 384))
        matrix[BASE:] = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
    rows = {str(item["content"]): i for i, item in enumerate(items)}
    return items, rows, matrix


def build(target: str | Path, items: list, given: tuple[dict[str, int], object], team_project: str | None) -> dict:
    from cerebro import Brain
    from cerebro.store.postgres import vec as pg_vec

    rng = random.Random(len(items))
    Brain.init(target, team_project=team_project)
    with Brain.open(target, team_project=team_project) as brain:
        brain.handle.embedder = GivenVectors(*given, brain.handle.embedder)
        threshold, pg_vec.HNSW_MIN_VECTORS = pg_vec.HNSW_MIN_VECTORS, 10**12  # the index is timed on its own
        try:
            wall, cpu = time.perf_counter(), _cpu()
            ids = brain.add_many(items, batch_size=256)
            wall, cpu = time.perf_counter() - wall, _cpu() - cpu
        finally:
            pg_vec.HNSW_MIN_VECTORS = threshold
        for _ in range(len(items) // 20):  # some graph structure
            a, b = rng.sample(ids, 2)
            brain.add_edge(a, b, rng.choice(("supports", "derived_from", "relates_to")))
        row = {"add_per_second_wall": round(len(items) / wall, 1), "add_ms_cpu_each": round(cpu / len(items) * 1000, 3)}
        if team_project is not None:
            conn = brain.handle.raw
            conn.execute("VACUUM ANALYZE nodes")
            conn.execute("VACUUM ANALYZE edges")
            conn.execute("VACUUM ANALYZE node_vectors")
            started = time.perf_counter()
            brain.handle.tend_vector_index()
            built = pg_vec.project_indexes(conn, team_project)
            row["hnsw_index"] = any(built.values())  # a valid one: a failed concurrent build leaves an invalid one
            if row["hnsw_index"]:
                row["hnsw_build_s"] = round(time.perf_counter() - started, 1)
    return row


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
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
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
            items, rows, matrix = corpus(size, args.out)
            file_brain = home / f"brain-{size}.sqlite"
            project = f"bench-{size}-{uuid.uuid4().hex[:6]}"
            given = (rows, matrix)
            row = {"sqlite": build(file_brain, items, given, None), "postgresql": build(url, items, given, project)}
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
