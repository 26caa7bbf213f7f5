"""The local provider's two models side by side: integer products (the default since ADR 0041) and float32 ones.

    make bench-models [LOCOMO=locomo10.zip]
    .venv/bin/python bench/local_models.py [--out bench/out] [--memories 1000] [--rounds 2] [--locomo PATH]

For each model: each text's vector against the float32 one (cosine, mean and worst, on recall_bench's corpus); CPU a
text on one thread; ``Brain.add_many`` memories/s and CPU a memory (write_bench's measure, rounds interleaved); and,
with ``--locomo``, LoCoMo's development (26, 30, 41, 42, 43) and held-out (44, 47, 48, 49, 50) halves through the
whole pipeline — issue 18 allows a change of the vectors if held-out R@10 stays within 0.005. The load average is
printed before and after; results are meant for docs/benchmarks.md and ADR 0041.
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
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="bench/out")
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--locomo", help="locomo10.zip: also measure retrieval quality on both halves")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # recall_bench's home (model caches, the brains' registry), never the user's own
    os.environ.setdefault("CEREBRO_HOME", str((out / "home").resolve()))
    from cerebro.embed import local

    models = (local.FLOAT_MODEL_ID, local.MODEL_ID)
    results: dict[str, object] = {"date": time.strftime("%Y-%m-%d %H:%M"), "load_average_before": os.getloadavg()}
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
