"""Recall benchmark: synthetic brains of 1k / 10k / 100k memories on the default local model.

    .venv/bin/python bench/recall_bench.py --sizes 1000,10000 [--out bench/out] [--queries 50]

Reports p50/p95 of in-process ``Brain.recall`` with the query embedding excluded (vector given) and
included, CLI wall time (median of 10 warm runs) of ``cerebro recall --prime``, ``cerebro recall "…"`` and
the Claude Code hook ``cerebro hook prime --event sessionstart`` (a fresh session each run),
and add throughput (``Brain.add_many``). Brains are cached in --out, so re-runs skip the build.
Results are meant for docs/benchmarks.md, with the machine they ran on.
"""

from __future__ import annotations

import argparse
import json
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


def query(rng: random.Random) -> str:
    """Three or four content words (not the 50 most common ones), as an agent would ask."""
    return " ".join(rng.choices(VOCABULARY[50:], weights=ZIPF[50:], k=rng.randint(3, 4)))


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


def bench_in_process(path: Path, queries: list[str]) -> dict[str, float]:
    from cerebro import Brain
    from cerebro.brain.retrieval import recall_options
    from cerebro.recall import recall as run_recall

    with Brain.open(path) as brain:
        brain.recall("warm up the model")
        brain.recall("warm up the index")  # a long-lived process: the second recall builds the warm index
        h = brain.handle
        vectors = h.embed(queries)
        excluded, included = [], []
        for query, vector in zip(queries, vectors, strict=True):
            with h.snapshot() as conn:
                options = recall_options(h.store, conn, limit=20, threshold=0.3, warm=h.warm(conn), mean=h.brain_mean)
                started = time.perf_counter()
                run_recall(h.store, conn, query, vector, options, mode="hybrid")
                excluded.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            brain.recall(query, limit=20)
            included.append((time.perf_counter() - started) * 1000)
    return {
        "recall_p50_ms_excl_embedding": round(statistics.median(excluded), 1),
        "recall_p95_ms_excl_embedding": round(percentile(excluded, 0.95), 1),
        "recall_p50_ms_incl_embedding": round(statistics.median(included), 1),
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
    args = parser.parse_args()
    out = Path(args.out).resolve()
    home = out / "home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["CEREBRO_HOME"] = str(home)
    (home / "project").mkdir(exist_ok=True)
    rng = random.Random(7)
    queries = [query(rng) for _ in range(args.queries)]
    results = {
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(), "platform": platform.platform()}
    }
    for size in (int(s) for s in args.sizes.split(",")):
        path = out / f"brain-{size}.sqlite"
        row: dict[str, float] = {}
        if not path.exists():
            row["add_per_second"] = round(build(path, size, home), 1)
        row.update(bench_in_process(path, queries))
        for name in list(home.joinpath("projects").glob("*.sqlite")) if home.joinpath("projects").exists() else []:
            name.unlink()
        row["cli_recall_prime_ms"] = bench_cli(path, home, ["recall", "--prime"])
        row["cli_recall_query_ms"] = bench_cli(path, home, ["recall", queries[0]])
        row["cli_hook_prime_ms"] = bench_cli(path, home, ["hook", "prime", "--event", "sessionstart"])
        results[str(size)] = row
        print(json.dumps({size: row}), flush=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
