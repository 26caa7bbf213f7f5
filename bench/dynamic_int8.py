"""The local model with ONNX Runtime's dynamic int8 quantisation against the float32 graph cerebro runs today.

    make bench-int8 [LOCOMO=locomo10.zip]
    .venv/bin/python bench/dynamic_int8.py [--out bench/out] [--memories 1000] [--locomo PATH]

The make target installs the ``onnx`` package into bench/out/onnx-site (never into the product), then runs this.
Builds ``minilm-dynamic-int8.onnx`` from the optimised graph cerebro caches
(``onnxruntime.quantization.quantize_dynamic``: int8 weights per channel, activations quantised at run time,
MatMulInteger on the CPU's integer units) and measures, for both graphs: each text's vector against the float32
one (cosine, mean and worst, on recall_bench's corpus); CPU a text on one thread; ``Brain.add_many`` memories/s
and CPU a memory (write_bench's measure); and, with ``--locomo``, LoCoMo's development (26, 30, 41, 42, 43) and
held-out (44, 47, 48, 49, 50) halves through the whole pipeline — issue 18 allows a change of the vectors if
held-out R@10 stays within 0.005. The quantised graph is swapped in by replacing
``cerebro.embed.local._open_session`` in this process only; the product is unchanged. The load average is printed
before and after; results are meant for docs/benchmarks.md and ADR 0039.
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


def build(out: Path) -> Path:
    """The quantised graph, made afresh from the optimised float32 graph cached for this ONNX Runtime (built here if
    missing): a graph left by another version or another run is never reused."""
    import onnxruntime

    from cerebro.embed import local

    target = out / "minilm-dynamic-int8.onnx"
    local.LocalEmbedder().embed(["build the optimised graph's cache"])
    source = local._cache_dir(onnxruntime) / local.CACHE_MODEL
    sys.path.append(str(out / "onnx-site"))  # after the venv's own packages: its numpy wins
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8, per_channel=True)
    os.chmod(target, 0o600)
    return target


def use_graph(graph: Path | None) -> None:
    """Make this process's local embedder load ``graph`` (None: the product's own float32 graph)."""
    from cerebro.embed import local

    original = getattr(use_graph, "original", local._open_session)
    use_graph.original = original  # type: ignore[attr-defined]
    local._LOADED.clear()
    if graph is None:
        local._open_session = original
        return

    def open_quantised(onnxruntime, _path, threads):  # noqa: ANN001, ANN202 - onnxruntime's untyped objects
        options = local._session_options(onnxruntime, threads, "ORT_ENABLE_ALL")
        return onnxruntime.InferenceSession(str(graph), sess_options=options, providers=["CPUExecutionProvider"])

    local._open_session = open_quantised


def fidelity_and_cpu(graph: Path, texts: list[str]) -> dict[str, float]:
    import numpy as np

    from cerebro.embed import local

    cpu = {}
    vectors = {}
    for name, chosen in (("float32", None), ("dynamic_int8", graph)):
        use_graph(chosen)
        embedder = local.LocalEmbedder(threads=1)
        embedder.embed(texts[:8])
        started = time.process_time()
        vectors[name] = np.asarray(embedder.embed(texts))
        cpu[name] = (time.process_time() - started) * 1000 / len(texts)
    use_graph(None)
    cosines = (vectors["float32"] * vectors["dynamic_int8"]).sum(axis=1)
    return {
        "cosine_mean": round(float(cosines.mean()), 4),
        "cosine_min": round(float(cosines.min()), 4),
        "cpu_ms_per_text_float32_one_thread": round(cpu["float32"], 2),
        "cpu_ms_per_text_dynamic_int8_one_thread": round(cpu["dynamic_int8"], 2),
    }


def writes(graph: Path, items: list[dict[str, object]], rounds: int) -> dict[str, float]:
    results: dict[str, list[tuple[float, float]]] = {"float32": [], "dynamic_int8": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _round in range(rounds):
            for name, chosen in (("float32", None), ("dynamic_int8", graph)):
                use_graph(chosen)
                results[name].append(write_bench.write_once(Path(tmp), "local", items))
    use_graph(None)
    out = {}
    for name, runs in results.items():
        out[f"memories_per_second_{name}"] = round(statistics.median(r[0] for r in runs), 1)
        out[f"cpu_ms_per_memory_{name}"] = round(statistics.median(r[1] for r in runs), 2)
    return out


def locomo(graph: Path, source: Path) -> dict[str, dict[str, float]]:
    from cerebro.evals import locomo as evaluation

    out = {}
    for half, numbers in (("development", DEV), ("held_out", HELD_OUT)):
        for name, chosen in (("float32", None), ("dynamic_int8", graph)):
            use_graph(chosen)
            report = evaluation.run(evaluation.load(source, numbers)).to_dict()
            overall = report["runs"]["pipeline"]["all"]
            keys = ("recall@5", "recall@10", "recall@20", "MRR")
            out[f"{half}_{name}"] = {key: round(overall[key], 3) for key in keys}
    use_graph(None)
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
    results: dict[str, object] = {"date": time.strftime("%Y-%m-%d %H:%M"), "load_average_before": os.getloadavg()}
    graph = build(out)
    rng = random.Random(5)
    texts = [recall_bench.sentence(rng) for _ in range(512)]
    results["fidelity"] = fidelity_and_cpu(graph, texts)
    print(json.dumps(results["fidelity"]), file=sys.stderr)
    rng = random.Random(args.memories)
    items = [{"content": recall_bench.sentence(rng)} for _ in range(args.memories + 1)]
    results["writes"] = writes(graph, items, args.rounds)
    print(json.dumps(results["writes"]), file=sys.stderr)
    if args.locomo:
        results["locomo_pipeline_all"] = locomo(graph, Path(args.locomo))
    results["load_average_after"] = os.getloadavg()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
