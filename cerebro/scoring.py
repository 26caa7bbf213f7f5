"""Every ranking formula in one place, as pure functions (no I/O): decay, composite score, in-degree
structure, the expansion gate, reciprocal-rank fusion, prime scoring and MMR.

Formulas and constants follow upstream (``upstream-behaviour.md`` §3–4); departures are marked and
recorded in ADR 0008.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

K = TypeVar("K", bound=Hashable)

# Composite weights (upstream README: relevance 0.35, importance 0.25, recency 0.25, structure 0.15).
W_RELEVANCE = 0.35
W_IMPORTANCE = 0.25
W_RECENCY = 0.25
W_STRUCTURAL = 0.15

RRF_K = 60  # the usual constant from Cormack et al.; upstream's defaultRRFK
OUTCOME_FLOOR = 0.2
CITATION_RELATIONS = ("derived_from", "supports")  # relations that count toward in-degree
INDEGREE_SATURATION = 10  # ln(1+in)/ln(1+10): ten citations give the full structural term

PRIME_LAMBDA = 0.6  # MMR: 60 % score, 40 % diversity
SURPRISE_RATE_PER_HOUR = 0.01

# Code anchors (ours, ADR 0018): a memory whose anchored code changed may be out of date, and one whose
# file is gone more likely so. They are still shown (marked) — the agent decides — but rank below an
# otherwise-equal memory whose code is as it was. Multipliers on the final score (recall: the composite and
# the fused value; prime: the prime score), like the outcome factor: 0.8 moves a stale memory below a
# verified twin without burying it under unrelated memories; a missing file is the stronger signal.
ANCHOR_STALE_FACTOR = 0.8
ANCHOR_MISSING_FACTOR = 0.6


@dataclass(frozen=True)
class ScoreParts:
    """The composite score and what it is made of (shown by ``recall --explain``)."""

    relevance: float
    importance: float
    recency: float
    structural: float
    outcome: float
    score: float
    anchor: float = 1.0  # the code-anchor factor (1.0: verified, none, or unknown)

    def to_dict(self) -> dict[str, float]:
        return {k: round(v, 6) for k, v in self.__dict__.items()}


def days_between(earlier: datetime | None, later: datetime) -> float:
    if earlier is None:
        return 0.0
    return max(0.0, (later - earlier).total_seconds() / 86400.0)


def recency(decay_rate: float, days: float) -> float:
    """exp(−λ·days): λ is per day (upstream fixed a per-hour bug in 3.1.0)."""
    return math.exp(-decay_rate * max(0.0, days))


def importance_term(importance: float, access_count: int) -> float:
    """importance × (1 + ln(1 + access_count)) — unbounded on purpose: use raises a memory's standing."""
    return importance * (1.0 + math.log1p(max(0, access_count)))


def outcome_factor(metadata: object) -> float:
    """1 + 0.10·ln(1+success) − 0.15·ln(1+failure), floored at 0.2; 1.0 without recorded outcomes."""
    if isinstance(metadata, str):
        import json  # here: metadata reaches scoring decoded (a dict) on every path but a raw string's

        try:
            metadata = json.loads(metadata)
        except ValueError:
            return 1.0
    if not isinstance(metadata, dict):
        return 1.0
    outcomes = metadata.get("outcomes")
    if not isinstance(outcomes, dict):
        return 1.0
    try:
        success = max(0.0, float(outcomes.get("success") or 0))
        failure = max(0.0, float(outcomes.get("failure") or 0))
    except (TypeError, ValueError, OverflowError):  # OverflowError: an integer past float's range
        return 1.0
    if not math.isfinite(success + failure):  # "inf" made the score infinite and every fused value NaN
        return 1.0
    return max(OUTCOME_FLOOR, 1.0 + 0.10 * math.log1p(success) - 0.15 * math.log1p(failure))


def anchor_factor(status: str | None) -> float:
    """×0.8 for a stale anchor, ×0.6 for a missing one; 1.0 otherwise (verified, unknown, no anchors)."""
    if status == "stale":
        return ANCHOR_STALE_FACTOR
    if status == "missing":
        return ANCHOR_MISSING_FACTOR
    return 1.0


def indegree_structural(citations: int) -> float:
    """min(1, ln(1+in)/ln(11)) over incoming ``derived_from``/``supports`` edges."""
    if citations <= 0:
        return 0.0
    return min(1.0, math.log1p(citations) / math.log1p(INDEGREE_SATURATION))


def edge_structural(weight: float | None) -> float:
    """An edge's weight as a structural value; a weight ≤ 0 (or missing) counts as 1.0, as upstream, and so does one
    above 1.0 (ADR 0059: the term is in [0, 1] like the in-degree baseline, so one link cannot outweigh the rest)."""
    if weight is None or not math.isfinite(weight) or weight <= 0:
        return 1.0
    return min(weight, 1.0)


def composite(
    *,
    similarity: float,
    importance: float,
    access_count: int,
    decay_rate: float,
    days_since_access: float,
    structural: float,
    metadata: object = None,
) -> ScoreParts:
    return parts_of(similarity, importance, access_count, decay_rate, days_since_access, structural, metadata)


def parts_of(
    similarity: float,
    importance: float,
    access_count: int,
    decay_rate: float,
    days_since_access: float,
    structural: float,
    metadata: object,
) -> ScoreParts:
    """:func:`composite` with its inputs in that order (keywords cost a call ~0.3 µs more)."""
    # Two calls skipped where their answer is known: never accessed, the term is the importance itself (ln 1 = 0);
    # without metadata there are no recorded outcomes.
    imp = importance_term(importance, access_count) if access_count else importance
    rec = recency(decay_rate, days_since_access)
    factor = outcome_factor(metadata) if metadata is not None else 1.0
    score = (W_RELEVANCE * similarity + W_IMPORTANCE * imp + W_RECENCY * rec + W_STRUCTURAL * structural) * factor
    # Built as values.evolve builds a copy (no frozen __init__, which sets each field through object.__setattr__).
    parts = object.__new__(ScoreParts)
    parts.__dict__.update(
        relevance=similarity,
        importance=imp,
        recency=rec,
        structural=structural,
        outcome=factor,
        score=score,
        anchor=1.0,
    )
    return parts


def should_skip_expansion(similarities: Sequence[float], requested_k: int, top: float, spread: float) -> bool:
    """The lazy expansion gate, on raw cosine similarities (never the composite score).

    Fires (skip expansion) when T1: ``top > 0 and max > top``, or T2: ``spread > 0 and K ≥ 2 and
    K ≥ requested_k and max − min < spread``. K = 0 never fires; NaN or negative thresholds never fire.
    """
    count = len(similarities)
    if count == 0:
        return False
    highest, lowest = max(similarities), min(similarities)
    if top > 0 and highest > top:  # NaN > 0 is False
        return True
    return spread > 0 and count >= 2 and count >= requested_k and (highest - lowest) < spread


def rrf(lanes: Sequence[Sequence[K]], k: int = RRF_K, weights: Sequence[float] | None = None) -> list[tuple[K, float]]:
    """Reciprocal-rank fusion: Σ wᵢ/(k + rankᵢ) over the lanes an item appears in (ranks from 1).

    Ties keep first-seen order (lane order, then rank), so an empty second lane is the identity.
    """
    k = max(1, int(k))
    weights = list(weights) if weights is not None else [1.0] * len(lanes)
    fused: dict[K, float] = {}
    for lane, weight in zip(lanes, weights, strict=True):
        for rank, item in enumerate(lane, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    return sorted(fused.items(), key=lambda kv: -kv[1])  # stable: ties keep first-seen order


def min_max(scores: dict[K, float]) -> dict[K, float]:
    """Scale a lane's scores to [0, 1] within this query (all equal → 1.0)."""
    if not scores:
        return {}
    high, low = max(scores.values()), min(scores.values())
    if high == low:
        return dict.fromkeys(scores, 1.0)
    return {key: (value - low) / (high - low) for key, value in scores.items()}


def blend(primary: dict[K, float], keyword: dict[K, float], keyword_weight: float) -> list[tuple[K, float]]:
    """Convex combination of min-max-normalised lane scores (higher is better in both):
    (1 − w)·primary + w·keyword, a missing lane counting 0. Ties keep primary order, then keyword order.

    Unlike RRF it keeps how *confident* each lane is, not just its ranks; on LoCoMo's development half it
    beats both lanes alone and RRF at every cut-off (ADR 0010).
    """
    a, b = min_max(primary), min_max(keyword)
    keys = [*primary, *(key for key in keyword if key not in primary)]
    fused = {key: (1.0 - keyword_weight) * a.get(key, 0.0) + keyword_weight * b.get(key, 0.0) for key in keys}
    return sorted(fused.items(), key=lambda kv: -kv[1])  # stable: ties keep primary order, then keyword order


def surprise(updated_at: datetime | None, last_surfaced: datetime | None, now: datetime) -> float:
    """1.0 if changed since last surfaced; 0.5 if never updated nor surfaced; else 1 − e^(−0.01·hours)."""
    if updated_at is not None and (last_surfaced is None or updated_at > last_surfaced):
        return 1.0
    if last_surfaced is None:  # so never updated either (the first branch took updated ones)
        return 0.5
    hours = max(0.0, (now - last_surfaced).total_seconds() / 3600.0)
    return 1.0 - math.exp(-SURPRISE_RATE_PER_HOUR * hours)


def prime_score(importance: float, surprise_value: float) -> float:
    return 0.6 * importance + 0.4 * surprise_value


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    from operator import mul

    dot = sum(map(mul, a, b))
    na = math.sqrt(sum(map(mul, a, a)))
    nb = math.sqrt(sum(map(mul, b, b)))
    return dot / (na * nb) if na and nb else 0.0


def mmr_select(
    candidates: Sequence[K],
    scores: dict[K, float],
    vectors: Mapping[K, Sequence[float]],
    limit: int,
    lam: float = PRIME_LAMBDA,
) -> list[K]:
    """Greedy MMR: pick argmax λ·score − (1−λ)·max cos(candidate, selected).

    Candidates are considered in score order (ties: first wins); one without a vector gets no
    diversity penalty. Evaluated lazily (Minoux's "accelerated greedy"): a candidate's value only falls as picks are
    made, so its value against the picks it was already compared with bounds it from above, and it is compared with
    the newer picks only when that bound could beat the best so far; read in score order, the candidates stop at the
    first whose λ·score cannot. The same choices as comparing everything with every pick — a few dozen dot products
    where that took ~1,000 (prime's pool: ~15 ms of a hook on a slow machine).
    """
    from operator import mul

    if not 0.0 <= lam <= 1.0:  # the bounds need a penalty that never adds: λ within [0, 1]
        raise ValueError(f"MMR's lambda must be within [0, 1], not {lam}")
    unit: dict[K, Sequence[float]] = {}
    for key, vector in vectors.items():
        norm = math.hypot(*vector)  # in C: stored vectors come back unit-length already, most to the last bit
        if norm == 1.0:
            unit[key] = vector
        elif norm:
            unit[key] = [x / norm for x in vector]
    pool = sorted(candidates, key=lambda c: -scores[c])
    closest = dict.fromkeys(pool, 0.0)  # max cosine to the picks compared with so far (never below 0)
    compared = dict.fromkeys(pool, 0)  # how many of the picks (in pick order) each candidate was compared with
    chosen: list[K] = []
    while pool and len(chosen) < limit:
        best, best_value = pool[0], -math.inf
        for candidate in pool:
            if lam * scores[candidate] <= best_value:
                break  # its value is at most λ·score, and so is every later one's: none can beat the best (ties: first)
            if lam * scores[candidate] - (1.0 - lam) * closest[candidate] <= best_value:
                continue  # more picks can only lower it
            own = unit.get(candidate)
            if own is not None:
                for picked in chosen[compared[candidate] :]:
                    other = unit.get(picked)
                    if other is not None:
                        closest[candidate] = max(closest[candidate], sum(map(mul, own, other)))
            compared[candidate] = len(chosen)
            value = lam * scores[candidate] - (1.0 - lam) * closest[candidate]
            if value > best_value:
                best, best_value = candidate, value
        chosen.append(best)
        pool.remove(best)
    return chosen


def shift(vector: Sequence[float], direction: Sequence[float], weight: float) -> Any:  # noqa: ANN401 - as given
    """normalise(v + weight·direction); ``vector`` unchanged when that is the zero vector. NumPy on the warm path
    (``vector`` an array: NumPy is loaded there anyway; the list arithmetic cost ~0.3 ms a recall)."""
    if isinstance(vector, list | tuple):
        moved = [v + weight * d for v, d in zip(vector, direction, strict=True)]
        norm = math.sqrt(sum(x * x for x in moved))
        return [x / norm for x in moved] if norm else list(vector)
    import numpy as np

    if len(direction) != len(vector):  # as zip(strict=True) refuses it on the list path: no broadcasting
        raise ValueError(f"vector of {len(vector)} dimensions shifted along one of {len(direction)}")
    shifted = vector + weight * np.asarray(direction)
    length = math.sqrt(float(shifted @ shifted))
    return shifted / length if length else vector


def feedback(query_vector: Sequence[float], vectors: Sequence[Sequence[float]], weight: float) -> Any:  # noqa: ANN401 - as given
    """normalise(q + weight·mean(vectors)): the query moved toward its top keyword hits; unchanged if none. ``vectors``:
    lists, or a NumPy matrix of them (the warm index's rows)."""
    if len(vectors) == 0:
        return query_vector
    if not isinstance(query_vector, list | tuple):  # a NumPy query (the warm path): NumPy's mean
        import numpy as np

        # np.mean's own arithmetic (a sum along the rows, then ÷ the count), without its Python-level wrapper.
        return shift(query_vector, np.add.reduce(np.asarray(vectors, dtype=np.float64), axis=0) / len(vectors), weight)
    mean = [sum(column) / len(vectors) for column in zip(*vectors, strict=True)]
    return shift(query_vector, mean, weight)


def center(vector: Sequence[float], mean: Sequence[float], weight: float) -> Any:  # noqa: ANN401 - as given
    """normalise(v − weight·mean): ranking by it is ranking by v·d − weight·mean·d, which demotes memories
    that resemble every other memory (hubs), as IDF demotes common words."""
    return shift(vector, mean, -weight)
