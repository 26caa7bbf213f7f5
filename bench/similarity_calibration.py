"""How similar is a question to the memory that answers it, under an embedding provider? The measurement behind
each provider's default ``search_threshold`` (docs/benchmarks.md, "Search thresholds").

    .venv/bin/python bench/similarity_calibration.py PATH/TO/locomo10.zip [--provider local] [--model M]

For each LoCoMo question (the development conversations), the cosine of the question with each of its evidence
turns (relevant pairs) and with every other turn of the conversation (irrelevant pairs). Prints the
percentiles of both and the thresholds that keep a given share of relevant pairs, and how many irrelevant
turns per question each threshold lets through. LoCoMo is not in the repository (its licence); point at a copy.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))
    return ordered[index]


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)) or 1.0)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("locomo", type=Path)
    parser.add_argument("--provider", default="local")
    parser.add_argument("--model", default=None)
    args = parser.parse_args(argv)

    from cerebro.embed.registry import make_embedder, resolve_settings
    from cerebro.evals import locomo

    provider, model, dims = resolve_settings(args.provider, args.model, None)
    embedder = make_embedder(provider, model, dims)
    relevant: list[float] = []
    irrelevant: list[float] = []
    questions = 0
    for conversation in locomo.load(args.locomo, locomo.DEVELOPMENT):
        turn_ids = [dia for dia, _ in conversation.turns]
        turn_vectors = dict(zip(turn_ids, embedder.embed([text for _, text in conversation.turns]), strict=True))
        asked = [(q, evidence) for q, evidence, category in conversation.questions if category != 5]
        question_vectors = embedder.embed([q for q, _ in asked])
        for (_, evidence), vector in zip(asked, question_vectors, strict=True):
            questions += 1
            for dia, turn_vector in turn_vectors.items():
                (relevant if dia in evidence else irrelevant).append(cosine(vector, turn_vector))
        print(f"conversation {conversation.number}: {len(asked)} questions", file=sys.stderr)

    print(f"provider {provider} model {model} ({dims} dims): {questions} questions, {len(relevant)} relevant pairs")
    print("| | p10 | p25 | p50 | p75 | p90 | p99 |")
    print("|---|---|---|---|---|---|---|")
    for name, values in (("relevant", relevant), ("irrelevant", irrelevant)):
        cells = " | ".join(f"{percentile(values, s):.3f}" for s in (0.1, 0.25, 0.5, 0.75, 0.9, 0.99))
        print(f"| {name} | {cells} |")
    print()
    print("| threshold | relevant kept | irrelevant turns let through per question |")
    print("|---|---|---|")
    for keep in (0.9, 0.75, 0.5, 0.25):
        threshold = percentile(relevant, 1 - keep)
        through = sum(1 for s in irrelevant if s >= threshold) / max(questions, 1)
        print(f"| {threshold:.3f} | {keep:.0%} | {through:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
