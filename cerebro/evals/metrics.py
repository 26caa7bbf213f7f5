"""Ranking metrics, macro-averaged over questions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

CUTOFFS = (5, 10, 20)


def recall_at(retrieved: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(relevant.intersection(retrieved[:k])) / len(relevant)


def hit_at(retrieved: Sequence[str], relevant: set[str], k: int) -> float:
    return 1.0 if relevant.intersection(retrieved[:k]) else 0.0


def reciprocal_rank(retrieved: Sequence[str], relevant: set[str]) -> float:
    for rank, item in enumerate(retrieved, start=1):
        if item in relevant:
            return 1.0 / rank
    return 0.0


@dataclass
class Tally:
    """Running sums for one slice of questions (a category, or all of them)."""

    count: int = 0
    sums: dict[str, float] = field(default_factory=dict)

    def add(self, retrieved: Sequence[str], relevant: set[str]) -> None:
        self.count += 1
        for k in CUTOFFS:
            self.sums[f"recall@{k}"] = self.sums.get(f"recall@{k}", 0.0) + recall_at(retrieved, relevant, k)
            self.sums[f"hit@{k}"] = self.sums.get(f"hit@{k}", 0.0) + hit_at(retrieved, relevant, k)
        self.sums["MRR"] = self.sums.get("MRR", 0.0) + reciprocal_rank(retrieved, relevant)

    def means(self) -> dict[str, float]:
        if not self.count:
            return {"questions": 0}
        return {"questions": self.count, **{k: round(v / self.count, 4) for k, v in self.sums.items()}}
