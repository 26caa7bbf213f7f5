"""The local provider's two models side by side: integer products (the default since ADR 0041) and float32 ones.

    make bench-models [LOCOMO=locomo10.zip]
    .venv/bin/python bench/local_models.py [--out bench/out] [--memories 1000] [--rounds 2] [--locomo PATH]
    .venv/bin/python bench/local_models.py --levels [--rounds 5] [--locomo PATH]
    .venv/bin/python bench/local_models.py --run-sizes [--rounds 3]
    .venv/bin/python bench/local_models.py --floor [--rounds 5]
    .venv/bin/python bench/local_models.py --fusions [--rounds 5]

For each model: each text's vector against the float32 one (cosine, mean and worst, on recall_bench's corpus); CPU a
text on one thread; ``Brain.add_many`` memories/s and CPU a memory (write_bench's measure, rounds interleaved); and,
with ``--locomo``, LoCoMo's development (26, 30, 41, 42, 43) and held-out (44, 47, 48, 49, 50) halves through the
whole pipeline — issue 18 allows a change of the vectors if held-out R@10 stays within 0.005. The load average is
printed before and after; results are meant for docs/benchmarks.md and ADR 0041.

``--levels`` instead compares ONNX Runtime's graph optimisation levels for each model (ADR 0049): CPU a text on one
thread (a query, a memory, and a memory in runs of 16 windows; the best of ``--rounds`` interleaved rounds) and the
vectors' cosine to the float32 model's at the basic level, on LoCoMo-like bench sentences.

``--run-sizes`` instead times the default model's runs (ADR 0050): CPU a window for runs of 1–32 windows and for
runs cut at a budget of padded tokens, on windows of 14 (queries), 47 (bench sentences), 64, 128 and 256 tokens.

``--floor`` instead splits a memory's embedding (ADR 0057): CPU a window of bench sentences through the whole model,
in the runs ``cerebro`` makes, against its 36 integer matrix products alone (the same kernel, shapes and runs, in a
graph of their own) — the floor no rewrite of the other operators can go under on this CPU — and the products'
rate in multiply-adds a second. ``--fusions`` instead times the graph with and without ``graph_fusions``' rewrites
(ADR 0057), rounds interleaved, and compares their vectors.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import recall_bench  # the bench folder is not a package: found through sys.path above
import write_bench

DEV, HELD_OUT = (26, 30, 41, 42, 43), (44, 47, 48, 49, 50)


def fidelity_and_cpu(models: tuple[str, ...], texts: list[str]) -> dict[str, float]:
    import numpy as np

    from cerebro.embed import local

    out, vectors = {}, {}
    for model in models:
        embedder = local.LocalEmbedder(model, threads=1)
        embedder.embed(texts[:8])  # loaded and warm
        started = time.process_time()
        vectors[model] = np.asarray(embedder.embed(texts))
        out[f"cpu_ms_per_text_one_thread {model}"] = round((time.process_time() - started) * 1000 / len(texts), 2)
    cosines = (vectors[local.FLOAT_MODEL_ID] * vectors[local.MODEL_ID]).sum(axis=1)
    out["cosine_to_float32_mean"] = round(float(cosines.mean()), 4)
    out["cosine_to_float32_min"] = round(float(cosines.min()), 4)
    return out


def writes(models: tuple[str, ...], items: list[dict[str, object]], rounds: int) -> dict[str, float]:
    runs: dict[str, list[tuple[float, float]]] = {model: [] for model in models}
    with tempfile.TemporaryDirectory() as tmp:
        for _round in range(rounds):
            for model in models:
                runs[model].append(write_bench.write_once(Path(tmp), "local", items, model=model))
    out = {}
    for model, measured in runs.items():
        out[f"memories_per_second {model}"] = round(statistics.median(r[0] for r in measured), 1)
        out[f"cpu_ms_per_memory {model}"] = round(statistics.median(r[1] for r in measured), 2)
    return out


def locomo(models: tuple[str, ...], source: Path) -> dict[str, dict[str, float]]:
    from cerebro.evals import locomo as evaluation

    out = {}
    for half, numbers in (("development", DEV), ("held_out", HELD_OUT)):
        for model in models:
            report = evaluation.run(evaluation.load(source, numbers), embed_model=model).to_dict()
            overall = report["runs"]["pipeline"]["all"]
            out[f"{half} {model}"] = {
                key: round(overall[key], 4) for key in ("recall@5", "recall@10", "recall@20", "MRR")
            }
    return out


LEVELS = ("ORT_ENABLE_EXTENDED", "ORT_ENABLE_BASIC")


def _cpu_ms_a_text(run: Callable[[Any], object], batches: list[Any], texts: int) -> float:
    """CPU ms a text of ``run(batch)`` for every batch (ONNX Runtime's threads included)."""
    started = time.process_time()
    for batch in batches:
        run(batch)
    return (time.process_time() - started) * 1000 / texts


def _keep_best(best: dict[str, float], key: str, cpu: float, digits: int = 2) -> None:
    """The best (lowest) of the rounds' figures under ``key``."""
    best[key] = round(min(best.get(key, cpu), cpu), digits)


def levels(rounds: int, locomo: Path | None = None) -> dict[str, float]:
    """CPU ms a text for each (model, level), sessions built from the model as ``local`` builds its cache (uncached),
    and each (model, level)'s vectors against the float32 model's at the basic level (cosine mean and worst) — on
    bench sentences, and with ``locomo`` on the first 600 turns of its development conversations (as stored), where
    the integer model's two levels are compared with each other too."""
    import numpy as np
    import onnxruntime

    from cerebro.embed import local
    from cerebro.embed.runs import plan

    rng = random.Random(3)
    tokenizer = local.LocalEmbedder(threads=1)
    tokenizer.embed(["load the tokenizer"])
    windows = {
        "query": [tokenizer._windows(recall_bench.query(rng))[0] for _ in range(200)],
        "memory": [tokenizer._windows(recall_bench.sentence(rng))[0] for _ in range(200)],
    }
    memories = windows["memory"]
    runs = [sorted(range(len(memories)), key=lambda i: len(memories[i]))[i : i + 16] for i in range(0, 200, 16)]
    sessions = {
        (model, level): onnxruntime.InferenceSession(
            local._source(local.model_path(), model),
            sess_options=local._session_options(onnxruntime, level),
            providers=["CPUExecutionProvider"],
        )
        for model in local.MODEL_IDS
        for level in LEVELS
    }
    best: dict[str, float] = {}
    for _round in range(rounds):
        for (model, level), session in sessions.items():
            for kind, texts in (*windows.items(), ("memory in runs of 16", memories)):
                batches = runs if kind.endswith("16") else [[i] for i in range(len(texts))]
                cpu = _cpu_ms_a_text(partial(tokenizer._run, session, texts), batches, len(texts))
                _keep_best(best, f"cpu_ms {kind} {model} {level}", cpu)

    def unit(session: object, texts: list[list[int]]) -> np.ndarray:
        vectors = np.zeros((len(texts), local.DIMENSIONS), dtype=np.float32)
        for batch in plan([len(w) for w in texts], 1):
            vectors[batch] = tokenizer._run(session, texts, batch)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    corpora = {"bench sentences": memories}
    if locomo is not None:
        from cerebro.evals import locomo as evaluation

        turns = [content for c in evaluation.load(locomo, DEV) for _, content in c.turns][:600]
        corpora["LoCoMo turns"] = [tokenizer._windows(text)[0] for text in turns]
    for corpus, texts in corpora.items():
        vectors = {key: unit(session, texts) for key, session in sessions.items()}
        reference = vectors[(local.FLOAT_MODEL_ID, "ORT_ENABLE_BASIC")]
        for (model, level), got in vectors.items():
            cosines = (got * reference).sum(axis=1)
            best[f"cosine_to_float32 mean {model} {level}, {corpus}"] = round(float(cosines.mean()), 5)
            best[f"cosine_to_float32 min {model} {level}, {corpus}"] = round(float(cosines.min()), 5)
        between = (vectors[(local.MODEL_ID, LEVELS[0])] * vectors[(local.MODEL_ID, LEVELS[1])]).sum(axis=1)
        best[f"cosine between the levels mean, {corpus}"] = round(float(between.mean()), 5)
        best[f"cosine between the levels p1, {corpus}"] = round(float(np.percentile(between, 1)), 5)
        best[f"cosine between the levels min, {corpus}"] = round(float(between.min()), 5)
        best[f"same vector at both levels, {corpus}"] = int((between > 0.999999).sum())
    return best


def run_sizes(rounds: int) -> dict[str, float]:
    """CPU ms a window of the default model, one thread, by run size (windows) and by padded-token budget."""
    from cerebro.embed import local, runs

    rng = random.Random(3)
    embedder = local.LocalEmbedder(threads=1)
    embedder.embed(["load the model"])

    def cut(length: int) -> list[int]:  # a window of exactly this many tokens, [CLS] and [SEP] included
        ids = embedder._windows(" ".join(recall_bench.sentence(rng) for _ in range(12)))[0][1:-1]
        return [embedder._cls, *ids[: length - 2], embedder._sep]

    kinds = {
        "14 tokens (queries)": [embedder._windows(recall_bench.query(rng))[0] for _ in range(240)],
        "47 tokens (bench sentences)": [embedder._windows(recall_bench.sentence(rng))[0] for _ in range(240)],
        **{f"{n} tokens": [cut(n) for _ in range(160 if n < 256 else 96)] for n in (64, 128, 256)},
    }
    best: dict[str, float] = {}
    for _round in range(rounds):
        for kind, windows in kinds.items():
            order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
            plans = {f"{n} a run": [order[i : i + n] for i in range(0, len(order), n)] for n in (1, 2, 4, 8, 16, 32)}
            plans[f"budget {runs.RUN_TOKENS} tokens"] = runs.plan([len(w) for w in windows], 1)
            for label, planned in plans.items():
                cpu = _cpu_ms_a_text(partial(embedder._run, embedder._session, windows), planned, len(windows))
                _keep_best(best, f"cpu_ms_per_window {kind}, {label}", cpu)
    return best


# MiniLM-L6's matrix products a layer, (rows, columns) of the weights: query, key, value, attention output, then the
# feed-forward pair; six layers.
PRODUCTS = [(384, 384)] * 4 + [(384, 1536), (1536, 384)]
LAYERS = 6


def _products_graph() -> bytes:
    """A model of the 36 products alone: ``MatMulIntegerToFloat`` of a uint8 input (…, K) with int8 weights (K, N),
    as integer_graph emits them; inputs ``a384`` and ``a1536``, outputs unused by one another."""
    import numpy as np

    from cerebro.onnx_wire import FLOAT, INT8, UINT8, field, graph_initializer, graph_node

    def unshaped(name: str, element: int) -> bytes:  # a ValueInfoProto with a type and no shape
        return field(1, name) + field(2, field(1, field(1, element)))

    rng = np.random.default_rng(0)
    body = [graph_initializer("one", FLOAT, [], np.float32(1).tobytes())]
    outputs = []
    for layer in range(LAYERS):
        for index, (rows, columns) in enumerate(PRODUCTS):
            name = f"w{layer}_{index}"
            weights = rng.integers(-127, 128, size=(rows, columns), dtype=np.int8)
            body.append(graph_initializer(name, INT8, [rows, columns], weights.tobytes()))
            body.append(graph_initializer(f"{name}_scales", FLOAT, [columns], np.full(columns, 1e-3, "<f4").tobytes()))
            body.append(
                graph_node(
                    "MatMulIntegerToFloat",
                    [f"a{rows}", name, "one", f"{name}_scales"],
                    [f"y{name}"],
                    domain="com.microsoft",
                )
            )
            outputs.append(f"y{name}")
    graph = b"".join(body) + field(2, "products")
    graph += field(11, unshaped("a384", UINT8)) + field(11, unshaped("a1536", UINT8))
    graph += b"".join(field(12, unshaped(name, FLOAT)) for name in outputs)
    opsets = field(8, field(1, "") + field(2, 17)) + field(8, field(1, "com.microsoft") + field(2, 1))
    return field(1, 8) + opsets + field(7, graph)


def floor(rounds: int) -> dict[str, float]:
    """CPU ms a window of bench sentences: the whole model, and its integer products alone, in the same runs."""
    import numpy as np
    import onnxruntime

    from cerebro.embed import local, runs

    rng = random.Random(3)
    embedder = local.LocalEmbedder(threads=1)
    embedder.embed(["load the model"])
    windows = [embedder._windows(recall_bench.sentence(rng))[0] for _ in range(240)]
    planned = runs.plan([len(w) for w in windows], 1)
    products = onnxruntime.InferenceSession(
        _products_graph(), sess_options=local._session_options(onnxruntime, "ORT_ENABLE_BASIC")
    )
    noise = np.random.default_rng(1)
    feeds = []
    for batch in planned:
        tokens = len(batch) * max(len(windows[i]) for i in batch)  # the run's padded matrix, row by row
        feeds.append({f"a{k}": noise.integers(0, 128, size=(tokens, k), dtype=np.uint8) for k in (384, 1536)})
    best: dict[str, float] = {}
    for _round in range(rounds):
        whole = _cpu_ms_a_text(partial(embedder._run, embedder._session, windows), planned, len(windows))
        alone = _cpu_ms_a_text(partial(products.run, None), feeds, len(windows))
        _keep_best(best, "cpu_ms_per_window whole model", whole)
        _keep_best(best, "cpu_ms_per_window products alone", alone)
    padded = sum(len(feed["a384"]) for feed in feeds) / len(windows)
    multiply_adds = padded * LAYERS * sum(rows * columns for rows, columns in PRODUCTS)
    best["padded_tokens_per_window"] = round(padded, 1)
    best["products_g_multiply_adds_per_s"] = round(multiply_adds / best["cpu_ms_per_window products alone"] / 1e6, 1)
    best["cpu_ms_per_window rest"] = round(
        best["cpu_ms_per_window whole model"] - best["cpu_ms_per_window products alone"], 2
    )
    return best


def fusions(rounds: int) -> dict[str, float]:
    """CPU ms a window of the default model's graph with and without graph_fusions' rewrites (ADR 0057), one thread,
    basic level, rounds interleaved (the best of each), and the two graphs' vectors against each other."""
    import numpy as np
    import onnxruntime

    from cerebro.embed import local, runs
    from cerebro.embed.graph_fusions import fuse
    from cerebro.embed.integer_graph import rewrite

    rng = random.Random(3)
    embedder = local.LocalEmbedder(threads=1)
    embedder.embed(["load the tokenizer"])
    rewritten = rewrite(local.model_path().read_bytes())
    sessions = {
        name: onnxruntime.InferenceSession(
            graph,
            sess_options=local._session_options(onnxruntime, "ORT_ENABLE_BASIC"),
            providers=["CPUExecutionProvider"],
        )
        for name, graph in (("unfused", rewritten), ("fused", fuse(rewritten)))
    }
    long = " ".join(recall_bench.sentence(rng) for _ in range(400))
    kinds = {
        "query (14 tokens), alone": [embedder._windows(recall_bench.query(rng))[0] for _ in range(240)],
        "memory (47 tokens), runs of 128 tokens": [
            embedder._windows(recall_bench.sentence(rng))[0] for _ in range(240)
        ],
        "128-token windows, alone": [embedder._windows(long)[0][:128] for _ in range(60)],
    }
    best: dict[str, float] = {}
    for _round in range(rounds):
        for kind, windows in kinds.items():
            planned = runs.plan([len(w) for w in windows], 1) if "runs" in kind else [[i] for i in range(len(windows))]
            for name, session in sessions.items():
                cpu = _cpu_ms_a_text(partial(embedder._run, session, windows), planned, len(windows))
                _keep_best(best, f"cpu_ms_per_window {kind}, {name}", cpu, 3)
    for kind in kinds:
        best[f"fused / unfused, {kind}"] = round(
            best[f"cpu_ms_per_window {kind}, fused"] / best[f"cpu_ms_per_window {kind}, unfused"], 3
        )
    windows = kinds["memory (47 tokens), runs of 128 tokens"]
    vectors = []
    for session in sessions.values():
        pooled = np.concatenate([embedder._run(session, windows, [i]) for i in range(len(windows))])
        vectors.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
    cosines = (vectors[0] * vectors[1]).sum(axis=1)
    best["cosine fused to unfused, bench sentences, min"] = round(float(cosines.min()), 7)
    best["same vector, bench sentences"] = int((cosines > 0.9999999).sum())
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/out")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--locomo", help="locomo10.zip: also measure retrieval quality on both halves")
    parser.add_argument("--levels", action="store_true", help="compare graph optimisation levels instead (ADR 0049)")
    parser.add_argument("--run-sizes", action="store_true", help="time the model's run sizes instead (ADR 0050)")
    parser.add_argument(
        "--floor", action="store_true", help="split a window's CPU: the products and the rest (ADR 0057)"
    )
    parser.add_argument("--fusions", action="store_true", help="the graph with and without its fusions (ADR 0057)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # recall_bench's home (model caches, the brains' registry), never the user's own
    os.environ.setdefault("CEREBRO_HOME", str((out / "home").resolve()))
    from cerebro.embed import local

    models = (local.FLOAT_MODEL_ID, local.MODEL_ID)
    results: dict[str, object] = {"date": time.strftime("%Y-%m-%d %H:%M"), "load_average_before": os.getloadavg()}
    if args.levels:
        results["levels"] = levels(max(args.rounds, 1), Path(args.locomo) if args.locomo else None)
    if args.run_sizes:
        results["run_sizes"] = run_sizes(max(args.rounds, 1))
    if args.floor:
        results["floor"] = floor(max(args.rounds, 1))
    if args.fusions:
        results["fusions"] = fusions(max(args.rounds, 1))
    if args.levels or args.run_sizes or args.floor or args.fusions:
        results["load_average_after"] = os.getloadavg()
        print(json.dumps(results, indent=2))
        return
    rng = random.Random(5)
    texts = [recall_bench.sentence(rng) for _ in range(512)]
    results["fidelity"] = fidelity_and_cpu(models, texts)
    print(json.dumps(results["fidelity"]), file=sys.stderr)
    rng = random.Random(args.memories)
    items = [{"content": recall_bench.sentence(rng)} for _ in range(args.memories + 1)]
    results["writes"] = writes(models, items, args.rounds)
    print(json.dumps(results["writes"]), file=sys.stderr)
    if args.locomo:
        results["locomo_pipeline_all"] = locomo(models, Path(args.locomo))
    results["load_average_after"] = os.getloadavg()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
