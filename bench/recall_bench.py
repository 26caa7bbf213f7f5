"""Recall benchmark: synthetic brains of 1k / 10k / 100k memories on the default local model.

    .venv/bin/python bench/recall_bench.py --sizes 1000,10000,100000 [--out bench/out] [--queries 50] [--no-cli]

Reports p50/p95 of in-process ``Brain.recall`` with the query embedding excluded (a memo embedder) and
included, its CPU beside the memory-bandwidth floor (a NumPy float32 matrix-vector product as big as the
brain's vectors, measured between the recalls) and the scaling exponent b (CPU ∝ N^b) between sizes; CLI
wall time (median of 10 warm runs) of ``cerebro recall --prime``, ``cerebro recall "…"`` and the Claude Code
hook ``cerebro hook prime --event sessionstart`` (a fresh session each run),
and add throughput (``Brain.add_many``). Brains are cached in --out, so re-runs skip the build.
Results are meant for docs/benchmarks.md, with the machine, date, commit and load average the run prints.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORDS = [
    "auth",
    "token",
    "refresh",
    "jwt",
    "session",
    "cookie",
    "deploy",
    "pipeline",
    "docker",
    "build",
    "cache",
    "test",
    "flaky",
    "retry",
    "timeout",
    "database",
    "index",
    "query",
    "migration",
    "schema",
    "sqlite",
    "vector",
    "embedding",
    "recall",
    "memory",
    "graph",
    "edge",
    "node",
    "prime",
    "hook",
    "plugin",
    "config",
    "setting",
    "flag",
    "release",
    "version",
    "changelog",
    "bug",
    "fix",
    "regression",
    "crash",
    "error",
    "log",
    "trace",
    "metric",
    "latency",
    "throughput",
    "queue",
    "worker",
    "cron",
    "job",
    "script",
    "shell",
    "path",
    "file",
    "folder",
    "permission",
    "secret",
    "key",
    "api",
    "client",
    "server",
    "http",
    "request",
    "response",
    "header",
    "json",
    "yaml",
    "toml",
    "parser",
    "lexer",
    "compiler",
    "type",
    "check",
    "lint",
    "format",
    "style",
    "review",
    "merge",
    "branch",
    "commit",
    "rebase",
    "tag",
    "ci",
    "runner",
    "artifact",
    "wheel",
    "package",
    "lock",
    "dependency",
]
TYPES = ("episode", "episode", "episode", "concept", "procedure", "reflection")
SYLLABLES = [
    "ka",
    "to",
    "ri",
    "mu",
    "se",
    "lo",
    "va",
    "ne",
    "pi",
    "ru",
    "da",
    "go",
    "fe",
    "xi",
    "zo",
    "qua",
    "bel",
    "tor",
    "vin",
    "sar",
    "mek",
    "lut",
    "dor",
    "fin",
    "gap",
]


def vocabulary(size: int = 4000) -> list[str]:
    """Coding words first, then pseudo-words: real memories have a long-tailed vocabulary, and a corpus
    of 100 words would make every keyword match a tenth of the brain."""
    rng = random.Random(11)
    words = list(WORDS)
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    rng.shuffle(words)
    return words


VOCABULARY = vocabulary()
# Zipf's law: the word of rank r appears with weight 1/r^1.07, as in natural text.
ZIPF = [1.0 / (rank + 1) ** 1.07 for rank in range(len(VOCABULARY))]


def sentence(rng: random.Random) -> str:
    words = rng.choices(VOCABULARY, weights=ZIPF, k=rng.randint(8, 18))
    ticket = f" HS-{rng.randint(1, 999):03d}" if rng.random() < 0.2 else ""
    return " ".join(words).capitalize() + ticket + "."


def settle_queries(count: int) -> list[str]:
    """Queries other than the measured ones (another seed), for recalls before the measured ones."""
    rng = random.Random(8)
    return [query(rng) for _ in range(count)]


def query(rng: random.Random) -> str:
    """Three or four content words (not the 50 most common ones), as an agent would ask."""
    return " ".join(rng.choices(VOCABULARY[50:], weights=ZIPF[50:], k=rng.randint(3, 4)))


def on_the_default_model(path: Path) -> bool:
    from cerebro import Brain
    from cerebro.embed.registry import DEFAULT_PROVIDER, PROVIDERS

    with Brain.open(path) as brain:
        return brain.stats().embedding_model == PROVIDERS[DEFAULT_PROVIDER].default_model


def build(path: Path, size: int, home: Path) -> float:
    from cerebro import Brain

    rng = random.Random(size)
    Brain.init(path)
    items = [
        {"content": sentence(rng), "type": rng.choice(TYPES), "importance": round(rng.uniform(0.1, 0.9), 2)}
        for _ in range(size)
    ]
    started = time.perf_counter()
    with Brain.open(path) as brain:
        ids = brain.add_many(items, batch_size=256)
        for _ in range(size // 20):  # some graph structure
            a, b = rng.sample(ids, 2)
            brain.add_edge(a, b, rng.choice(("supports", "derived_from", "relates_to")))
    return size / (time.perf_counter() - started)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class _Memo:
    """An embedder that answers from vectors computed beforehand: recall's own work, without the model's."""

    def __init__(self, real: object, vectors: dict[str, list[float]]) -> None:
        self._real, self._vectors = real, vectors
        self.provider, self.model_id, self.dimensions = real.provider, real.model_id, real.dimensions  # type: ignore[attr-defined]

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [self._vectors[t] for t in texts]


def bench_in_process(path: Path, queries: list[str], rounds: int = 3, settle: int = 0) -> dict[str, float]:
    """Rounds of three phases: ``Brain.recall`` with the query embedding excluded (a memo embedder: the whole
    library path, settings and warm index included) and the pipeline alone; ``Brain.recall`` with the embedding;
    the memory-bandwidth floor (NumPy's float32 matrix-vector product over a random matrix as big as the brain's
    vectors). CPU time of this process (the floor's includes OpenBLAS's threads) beside wall time."""
    import numpy as np

    from cerebro import Brain
    from cerebro.brain.retrieval import recall_options
    from cerebro.recall import recall as run_recall

    def timed(work: object) -> tuple[float, float]:
        cpu, wall = time.process_time(), time.perf_counter()
        work()  # type: ignore[operator]
        return (time.process_time() - cpu) * 1000, (time.perf_counter() - wall) * 1000

    with Brain.open(path) as brain:
        brain.recall("warm up the model")
        brain.recall("warm up the index")  # a long-lived process: the second recall builds the warm index
        h = brain.handle
        real = h.embedder
        vectors = dict(zip(queries, h.embed(queries), strict=True))
        with h.snapshot() as conn:
            count = conn.execute("SELECT COUNT(*) FROM vec_nodes").fetchone()[0]
        floor_matrix = np.random.default_rng(1).standard_normal((count, len(vectors[queries[0]])), dtype=np.float32)
        # --settle: recalls before the measured ones, for a process's steady state — the keyword copy (ADR 0044) is
        # built only once FTS5 has ranked for a while at one state of the index (~50–100 queries here). Other queries
        # than the measured ones: those then pay for their own words' first tokenizing, as a new query does.
        others = settle_queries(min(settle, 100))
        h._embedder = _Memo(real, dict(zip(others, real.embed(others), strict=True)) if others else {})
        for number in range(settle):
            brain.recall(others[number % len(others)], limit=20)
        if settle:
            # The steady state also has the rows copy (ADR 0051) that the settling recalls started building on a thread
            # of its own (~7 s at 100,000 memories): waited for and adopted, rather than measured half built.
            rows = getattr(h, "_rows", None)
            building = getattr(rows, "_build", None) if rows else None
            if building is not None:
                building.done.wait(300)
            brain.recall(others[0], limit=20)
        h._embedder = real
        api_cpu, api_wall, pipe_cpu, floor_cpu, floor_wall, included = [], [], [], [], [], []
        for _round in range(rounds):
            # Phases, not query by query: OpenBLAS's threads spin for a while after the floor's product, and that
            # CPU would land on the recall measured next. A pause before each phase lets them sleep.
            time.sleep(0.5)
            h._embedder = _Memo(real, vectors)  # the handle keeps its embedder here
            for query in queries:
                cpu, wall = timed(lambda q=query: brain.recall(q, limit=20))
                api_cpu.append(cpu)
                api_wall.append(wall)
                with h.snapshot() as conn:
                    options = recall_options(
                        h.store, conn, limit=20, threshold=0.3, warm=h.warm(conn), mean=h.brain_mean
                    )
                    cpu, _ = timed(
                        lambda q=query, c=conn, o=options: run_recall(h.store, c, q, vectors[q], o, mode="hybrid")
                    )
                    pipe_cpu.append(cpu)
            h._embedder = real
            for query in queries:
                included.append(timed(lambda q=query: brain.recall(q, limit=20))[1])
            for query in queries:
                vector = np.asarray(vectors[query], dtype=np.float32)
                cpu, wall = timed(lambda v=vector: floor_matrix @ v)
                floor_cpu.append(cpu)
                floor_wall.append(wall)
    p50 = statistics.median
    return {
        "vectors": count,
        "recall_cpu_p50_ms_excl_embedding": round(p50(api_cpu), 2),
        "recall_cpu_p95_ms_excl_embedding": round(percentile(api_cpu, 0.95), 2),
        "recall_p50_ms_excl_embedding": round(p50(api_wall), 2),
        "recall_p95_ms_excl_embedding": round(percentile(api_wall, 0.95), 2),
        "pipeline_cpu_p50_ms": round(p50(pipe_cpu), 2),
        "floor_matmul_cpu_p50_ms": round(p50(floor_cpu), 3),
        "floor_matmul_p50_ms": round(p50(floor_wall), 3),
        "recall_cpu_over_floor": round(p50(api_cpu) / max(p50(floor_cpu), 1e-6), 2),
        "recall_p50_ms_incl_embedding": round(p50(included), 1),
        "recall_p95_ms_incl_embedding": round(percentile(included, 0.95), 1),
    }


def bench_cli(path: Path, home: Path, args: list[str], runs: int = 10) -> float:
    cerebro = str(Path(sys.executable).with_name("cerebro"))
    env = dict(os.environ, CEREBRO_HOME=str(home))
    project = home / "project"
    brain_link = None
    from cerebro import paths

    os.environ["CEREBRO_HOME"] = str(home)
    brain_link = paths.project_brain_path(project)
    if not brain_link.exists():
        brain_link.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(path, brain_link)
    times = []
    for i in range(runs + 2):
        # Hooks read Claude Code's JSON on stdin; a fresh session id each run so every run primes.
        payload = json.dumps({"session_id": f"bench-{time.time_ns()}", "hook_event_name": "SessionStart"})
        started = time.perf_counter()
        subprocess.run(
            [cerebro, *args, "-p", str(project), "-q"], env=env, check=True, capture_output=True, input=payload.encode()
        )
        if i >= 2:  # two warm-up runs
            times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--out", default="bench/out")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--no-cli", action="store_true", help="in-process figures only")
    parser.add_argument(
        "--settle",
        type=int,
        default=0,
        help="recalls before the measured ones, then the rows copy awaited (a steady state)",
    )
    args = parser.parse_args()
    out = Path(args.out).resolve()
    home = out / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["CEREBRO_HOME"] = str(home)
    (home / "project").mkdir(exist_ok=True)
    rng = random.Random(7)
    queries = [query(rng) for _ in range(args.queries)]
    git = ["git", "rev-parse", "--short", "HEAD"]
    commit = subprocess.run(git, check=False, capture_output=True, text=True).stdout.strip()
    results: dict[str, object] = {
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "platform": platform.platform()},
        "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "commit": commit,
        "load_average_before": os.getloadavg(),
    }
    for size in (int(s) for s in args.sizes.split(",")):
        path = out / f"brain-{size}.sqlite"
        row: dict[str, float] = {}
        if path.exists() and not on_the_default_model(path):
            path.unlink()  # built on another model (the float32 one before ADR 0041): not what a new brain runs
        if not path.exists():
            row["add_per_second"] = round(build(path, size, home), 1)
        row.update(bench_in_process(path, queries, settle=args.settle))
        if args.no_cli:
            results[str(size)] = row
            print(json.dumps({size: row}), flush=True)
            continue
        for name in list(home.joinpath("projects").glob("*.sqlite")) if home.joinpath("projects").exists() else []:
            name.unlink()
        row["cli_recall_prime_ms"] = bench_cli(path, home, ["recall", "--prime"])
        row["cli_recall_query_ms"] = bench_cli(path, home, ["recall", queries[0]])
        row["cli_hook_prime_ms"] = bench_cli(path, home, ["hook", "prime", "--event", "sessionstart"])
        results[str(size)] = row
        print(json.dumps({size: row}), flush=True)
    sizes = [key for key in results if key.isdigit()]
    for small, big in itertools.pairwise(sizes):  # recall CPU ∝ N^b between consecutive sizes (issue 18: b ≤ 0.35)
        t_small = results[small]["recall_cpu_p50_ms_excl_embedding"]  # type: ignore[index]
        t_big = results[big]["recall_cpu_p50_ms_excl_embedding"]  # type: ignore[index]
        results[f"b_{small}_{big}"] = round(math.log(t_big / t_small) / math.log(int(big) / int(small)), 2)
    results["load_average_after"] = os.getloadavg()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
