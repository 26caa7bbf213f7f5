"""A length prior: a memory that says more is more often what was asked for.

Both lanes favour short texts. BM25 divides a term's weight by the text's length relative to the average, and a short
text's embedding is dominated by the few words it has, so "Wow, that's great!" lands near many questions. Singhal,
Buckley and Mitra ("Pivoted document length normalization", SIGIR 1996) measured the same bias in cosine ranking: the
chance that a document is relevant grows with its length faster than its chance of being retrieved does, and tilting
scores around a pivot length corrects it. Measured here on the LoCoMo development half (ADR 0035): the evidence's
median length is 37 words, the other results in the top ten 26; only 2 % of evidence is under 12 words, against 10 %
of the rest.

So each result's fused value is multiplied by ``(words / pivot) ** EXPONENT``, with the pivot the median length of
this recall's results (each brain and query sets its own scale) and the ratio held within [1/3, 3] (:data:`SPAN`):
a note of a few words keeps at least 0.76 of its value and a long one gains at most 1.32×, so a crisp, exactly
matching note still beats a long, loosely related one. The list is re-sorted (stable). No store access.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from cerebro.values import Node, ScoredNode

EXPONENT = 0.25  # LoCoMo development half: 0.1, 0.25 and 0.4 measured (ADR 0035)
SPAN = 3.0  # the length ratio counts only within [1/SPAN, SPAN]


def words(text: str) -> int:
    """The text's length in words (at least 1), remembered by text: a recall weighs ~100 results, and a process that
    keeps a rows copy (ADR 0051) hands it the same text objects again, whose hash Python keeps."""
    found = _WORDS.get(text)
    if found is None:
        if len(_WORDS) >= _WORDS_KEPT:
            _WORDS.clear()
        found = _WORDS[text] = max(1, len(text.split()))
    return found


_WORDS: dict[str, int] = {}
_WORDS_KEPT = 20_000  # texts remembered (~4 MB of text at most, most of it a rows copy's own); then forgotten at once


def favour_informative(ordered: Sequence[ScoredNode]) -> list[ScoredNode]:
    """``ordered`` with each fused value tilted by its length against the results' median length, re-sorted."""
    if len(ordered) < 2:
        return list(ordered)
    tilted = [s.revalued(s.rank_value * m) for s, m in zip(ordered, factors([s.node for s in ordered]), strict=True)]
    tilted.sort(key=lambda s: -s.rank_value)  # stable: equals keep the fused order
    return tilted


def factors(nodes: Sequence[Node]) -> list[float]:
    """Each result's multiplier (1.0 for all when there are fewer than two)."""
    if len(nodes) < 2:
        return [1.0] * len(nodes)
    lengths = [words(node.content) for node in nodes]
    pivot = median(lengths)
    return [factor(n, pivot) for n in lengths]


def median(values: Sequence[int]) -> float:
    """The middle value (the mean of the two middle ones for an even count), as ``statistics.median`` gives it:
    that module's import (fractions, decimal) would cost every recall's start-up ~5 ms."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def factor(length: int, pivot: float) -> float:
    """The multiplier of a text of ``length`` words among results whose median length is ``pivot``."""
    ratio = min(max(length / pivot, 1 / SPAN), SPAN)
    return float(ratio**EXPONENT)
