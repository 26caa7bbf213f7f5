"""cerebro.scoring: the pure ranking formulas (upstream scoring_test, decay_units_test,
outcome_scoring_test, expand_gate_test, recall_fusion_test, search_test's Surprise/PrimeScore, mmr_test)."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from cerebro import scoring
from cerebro.values import DECAY_RATES, DEFAULT_DECAY_RATE

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


# ----------------------------------------------------------------------------- composite


def test_weights_are_upstreams():
    assert (scoring.W_RELEVANCE, scoring.W_IMPORTANCE, scoring.W_RECENCY, scoring.W_STRUCTURAL) == (
        0.35,
        0.25,
        0.25,
        0.15,
    )
    assert pytest.approx(1.0) == scoring.W_RELEVANCE + scoring.W_IMPORTANCE + scoring.W_RECENCY + scoring.W_STRUCTURAL


def test_composite_against_hand_computed_numbers():
    parts = scoring.composite(
        similarity=0.8,
        importance=0.6,
        access_count=3,
        decay_rate=0.02,
        days_since_access=10.0,
        structural=0.5,
        metadata=None,
    )
    # importance term: 0.6 × (1 + ln 4) = 0.6 × 2.386294361 = 1.431776617
    assert parts.importance == pytest.approx(1.431776617, abs=1e-9)
    # recency: exp(−0.02 × 10) = exp(−0.2) = 0.818730753
    assert parts.recency == pytest.approx(0.818730753, abs=1e-9)
    assert parts.relevance == 0.8
    assert parts.structural == 0.5
    assert parts.outcome == 1.0
    # 0.35×0.8 + 0.25×1.431776617 + 0.25×0.818730753 + 0.15×0.5
    # = 0.28 + 0.357944154 + 0.204682688 + 0.075 = 0.917626843
    assert parts.score == pytest.approx(0.917626843, abs=1e-8)


def test_composite_multiplies_by_the_outcome_factor():
    metadata = {"outcomes": {"success": 3, "failure": 0}}
    parts = scoring.composite(
        similarity=1.0,
        importance=0.5,
        access_count=0,
        decay_rate=0.15,
        days_since_access=0.0,
        structural=0.0,
        metadata=metadata,
    )
    # base: 0.35×1 + 0.25×0.5 + 0.25×1 + 0 = 0.725; factor 1 + 0.1×ln 4 = 1.138629436
    assert parts.outcome == pytest.approx(1.138629436, abs=1e-9)
    assert parts.score == pytest.approx(0.725 * 1.138629436, abs=1e-9)  # 0.825506341


def test_composite_all_zero_inputs_give_only_the_recency_term():
    parts = scoring.composite(
        similarity=0.0, importance=0.0, access_count=0, decay_rate=0.15, days_since_access=0.0, structural=0.0
    )
    assert parts.score == pytest.approx(0.25)  # 0.25 × exp(0) = 0.25


def test_score_parts_to_dict_rounds_and_names_every_component():
    parts = scoring.composite(
        similarity=1 / 3, importance=0.5, access_count=0, decay_rate=0.0, days_since_access=0, structural=0
    )
    assert set(parts.to_dict()) == {"relevance", "importance", "recency", "structural", "outcome", "score", "anchor"}
    assert parts.to_dict()["relevance"] == 0.333333
    assert parts.anchor == 1.0  # the code-anchor factor is applied after fusion (ordering.apply_anchors)


@pytest.mark.parametrize(
    ("status", "factor"), [("stale", 0.8), ("missing", 0.6), ("verified", 1.0), ("unknown", 1.0), (None, 1.0)]
)
def test_anchor_factor(status, factor):
    assert scoring.anchor_factor(status) == factor


# ----------------------------------------------------------------------------- recency / decay


@pytest.mark.parametrize(("node_type", "rate"), [*DECAY_RATES.items(), ("unknown", DEFAULT_DECAY_RATE)])
def test_decay_is_per_day_not_per_hour(node_type, rate):
    one_day_later = T0 + timedelta(hours=24)
    days = scoring.days_between(T0, one_day_later)
    assert days == 1.0
    value = scoring.recency(rate, days)
    assert value == pytest.approx(math.exp(-rate))  # per day
    assert value != pytest.approx(math.exp(-rate * 24))  # the pre-3.1.0 per-hour bug
    # Half-life ln2/λ days: episode 4.6 d, concept 34.7 d, procedure 138.6 d, reflection 13.9 d.
    assert scoring.recency(rate, math.log(2) / rate) == pytest.approx(0.5)


def test_decay_rates_per_type():
    assert DECAY_RATES == {"episode": 0.15, "concept": 0.02, "procedure": 0.005, "reflection": 0.05}
    assert DEFAULT_DECAY_RATE == 0.1


def test_days_between_is_real_valued_and_never_negative():
    assert scoring.days_between(T0, T0 + timedelta(hours=6)) == 0.25
    assert scoring.days_between(T0 + timedelta(days=2), T0) == 0.0  # future timestamp: no boost above 1
    assert scoring.days_between(None, T0) == 0.0
    assert scoring.recency(0.15, -3) == 1.0


@pytest.mark.parametrize("node_type", sorted(DECAY_RATES))
def test_recall_applies_per_day_decay_for_each_type(fake_brain, node_type):
    from cerebro import clock

    clock.set_now(T0)
    node_id = fake_brain.add(f"decay probe {node_type} walrus", type=node_type)
    clock.set_now(T0 + timedelta(days=1))
    result = fake_brain.recall("walrus probe")
    (hit,) = [r for r in result if r.node.id == node_id]
    assert hit.parts.recency == pytest.approx(math.exp(-DECAY_RATES[node_type]), abs=1e-9)


# ----------------------------------------------------------------------------- importance term


@pytest.mark.parametrize(
    ("importance", "access_count", "expected"),
    [
        (0.5, 0, 0.5),  # 0.5 × (1 + ln 1)
        (0.5, 1, 0.846573590),  # 0.5 × (1 + ln 2)
        (0.5, 9, 1.651292546),  # 0.5 × (1 + ln 10)
        (1.0, 100, 5.615120517),  # 1 + ln 101: unbounded, above 1 on purpose
        (0.0, 50, 0.0),
        (0.5, -4, 0.5),  # a negative count counts as 0
    ],
)
def test_importance_term(importance, access_count, expected):
    assert scoring.importance_term(importance, access_count) == pytest.approx(expected, abs=1e-9)


# ----------------------------------------------------------------------------- outcome factor


@pytest.mark.parametrize(
    ("metadata", "expected"),
    [
        (None, 1.0),  # neutral: no metadata
        ({}, 1.0),
        ({"anchor": "x"}, 1.0),  # no outcomes key
        ({"outcomes": {}}, 1.0),  # 1 + 0 − 0
        ({"outcomes": {"success": 3}}, 1.138629436),  # boost: 1 + 0.10×ln 4
        ({"outcomes": {"failure": 3}}, 0.792055846),  # penalty: 1 − 0.15×ln 4
        ({"outcomes": {"success": 1, "failure": 1}}, 0.965342641),  # 1 + 0.10×ln2 − 0.15×ln2
        ({"outcomes": {"failure": 1_000_000}}, 0.2),  # 1 − 0.15×ln(1e6+1) = −1.07 → floor 0.2
        ({"outcomes": {"failure": 250}}, 0.2),  # 1 − 0.15×ln 251 = 0.1710 → floor 0.2
        (
            {"outcomes": {"failure": 200}},
            0.204504,
        ),  # 1 − 0.15×ln 201 = 1 − 0.795496 = 0.204504 (just above the floor)
        ('{"outcomes": {"success": 1}}', 1.069314718),  # metadata as JSON text: 1 + 0.1×ln 2
        # garbage: neutral, never an error
        ("not json {", 1.0),
        ("[1, 2]", 1.0),
        ([1, 2], 1.0),
        (42, 1.0),
        ({"outcomes": "many"}, 1.0),
        ({"outcomes": [1, 2]}, 1.0),
        ({"outcomes": {"success": "lots"}}, 1.0),
        ({"outcomes": {"success": None, "failure": None}}, 1.0),
        ({"outcomes": {"success": -5}}, 1.0),  # negative counts as 0
        # not a count: an infinite score (and NaN fused values), or an OverflowError that failed every recall
        ({"outcomes": {"success": "inf"}}, 1.0),
        ({"outcomes": {"success": "inf", "failure": "inf"}}, 1.0),
        ({"outcomes": {"failure": "-inf", "success": 1}}, 1.069314718),  # negative counts as 0
        ({"outcomes": {"success": 10**400}}, 1.0),
        ({"outcomes": {"success": "nan"}}, 1.0),
    ],
)
def test_outcome_factor(metadata, expected):
    assert scoring.outcome_factor(metadata) == pytest.approx(expected, abs=1e-6)


def test_outcome_floor_constant():
    assert scoring.OUTCOME_FLOOR == 0.2


# ----------------------------------------------------------------------------- structural


@pytest.mark.parametrize(
    ("citations", "expected"),
    [
        (0, 0.0),
        (-1, 0.0),
        (1, 0.289064826),  # ln 2 / ln 11
        (3, 0.578129653),  # ln 4 / ln 11
        (10, 1.0),  # ln 11 / ln 11
        (100, 1.0),  # capped at 1
    ],
)
def test_indegree_structural(citations, expected):
    assert scoring.indegree_structural(citations) == pytest.approx(expected, abs=1e-9)


def test_citation_class_is_derived_from_and_supports_only():
    assert set(scoring.CITATION_RELATIONS) == {"derived_from", "supports"}


@pytest.mark.parametrize(
    ("weight", "expected"),
    [
        (0.4, 0.4),
        (1.0, 1.0),
        (2.5, 1.0),  # ADR 0059: above 1.0 counts as 1.0
        (1e308, 1.0),
        (0.0, 1.0),
        (-0.3, 1.0),
        (None, 1.0),
        (math.nan, 1.0),
        (math.inf, 1.0),
    ],
)
def test_edge_structural(weight, expected):
    assert scoring.edge_structural(weight) == expected


# ----------------------------------------------------------------------------- expansion gate

NAN = math.nan

# (similarities, requested_k, top, spread, fires, why) — upstream's expand_gate_test rows.
GATE_ROWS = [
    ([], 10, 0.75, 0.0, False, "K=0 never fires"),
    ([], 10, 0.1, 0.5, False, "K=0 never fires, even with both thresholds on"),
    ([0.80], 1, 0.75, 0.0, True, "T1: max 0.80 > 0.75"),
    ([0.75], 1, 0.75, 0.0, False, "T1 is strict: max == top does not fire"),
    ([0.74, 0.5], 2, 0.75, 0.0, False, "T1: max below top"),
    ([0.99], 1, 0.0, 0.0, False, "top 0.0 is the off sentinel"),
    ([0.99], 1, NAN, 0.0, False, "NaN top never fires"),
    ([0.99], 1, -0.5, 0.0, False, "negative top never fires"),
    ([0.99], 1, 1.5, 0.0, False, "top > 1: cosine never exceeds it"),
    ([0.80, 0.78], 2, 0.0, 0.05, True, "T2: spread 0.02 < 0.05 with K == requested"),
    ([0.80, 0.78, 0.79], 2, 0.0, 0.05, True, "T2: K > requested also fires"),
    ([0.75, 0.5], 2, 0.0, 0.25, False, "T2 is strict: spread 0.25 == 0.25 does not fire"),
    ([0.75, 0.5], 2, 0.0, 0.375, True, "T2: spread 0.25 < 0.375"),
    ([0.80], 1, 0.0, 0.05, False, "T2 needs K >= 2 (K=1)"),
    ([0.80, 0.79], 5, 0.0, 0.05, False, "T2 needs K >= requested (K=2 < 5)"),
    ([0.80, 0.79], 2, 0.0, 0.0, False, "spread 0.0 is the off sentinel"),
    ([0.80, 0.79], 2, 0.0, NAN, False, "NaN spread never fires"),
    ([0.80, 0.79], 2, 0.0, -0.1, False, "negative spread never fires"),
    ([0.9, 0.1], 2, 0.0, 1.5, True, "spread > 1: any set of K >= requested fires"),
    ([0.9, 0.1], 2, 0.75, 0.05, True, "T1 alone is enough with both on"),
    ([0.6, 0.59], 2, 0.75, 0.05, True, "T2 alone is enough with both on"),
    ([0.6, 0.3], 2, 0.75, 0.05, False, "neither condition holds"),
    ([0.6, 0.59], 2, NAN, NAN, False, "both NaN: never fires"),
]


@pytest.mark.parametrize(
    ("sims", "requested", "top", "spread", "fires"),
    [row[:5] for row in GATE_ROWS],
    ids=[row[5] for row in GATE_ROWS],
)
def test_expansion_gate_truth_table(sims, requested, top, spread, fires):
    assert scoring.should_skip_expansion(sims, requested, top, spread) is fires


# ----------------------------------------------------------------------------- RRF


def test_rrf_empty_second_lane_is_the_identity():
    fused = scoring.rrf([["a", "b", "c"], []])
    assert [item for item, _ in fused] == ["a", "b", "c"]
    assert [v for _, v in fused] == pytest.approx([1 / 61, 1 / 62, 1 / 63])


def test_rrf_ties_keep_first_seen_order():
    # a: 1/61 + 1/62, b: 1/62 + 1/61 — equal; a was seen first (vector lane first).
    fused = scoring.rrf([["a", "b"], ["b", "a"]])
    assert [item for item, _ in fused] == ["a", "b"]
    assert fused[0][1] == fused[1][1]
    fused = scoring.rrf([["b", "a"], ["a", "b"]])
    assert [item for item, _ in fused] == ["b", "a"]


def test_rrf_keyword_only_item_is_added():
    # a: 1/61 = 0.016393; b: 1/62 + 1/61 = 0.032522; c (keyword only): 1/62 = 0.016129
    fused = dict(scoring.rrf([["a", "b"], ["b", "c"]]))
    assert list(fused) == ["b", "a", "c"]
    assert fused["c"] == pytest.approx(1 / 62)
    assert fused["b"] == pytest.approx(1 / 61 + 1 / 62)
    # A keyword-only item at rank 1 ties with the vector lane's rank 1 and goes after it (first-seen).
    fused = scoring.rrf([["a", "b", "c"], ["d"]])
    assert [item for item, _ in fused] == ["a", "d", "b", "c"]


def test_rrf_weights():
    # a: 1×1/61 = 0.016393; b: 2×1/61 = 0.032787
    fused = scoring.rrf([["a"], ["b"]], weights=[1.0, 2.0])
    assert [item for item, _ in fused] == ["b", "a"]
    assert fused[0][1] == pytest.approx(2 / 61)
    # A zero-weight lane contributes nothing but its items still appear.
    fused = scoring.rrf([["a", "b"], ["c"]], weights=[1.0, 0.0])
    assert [item for item, _ in fused] == ["a", "b", "c"]
    assert fused[2][1] == 0.0


def test_rrf_weights_must_match_lanes():
    with pytest.raises(ValueError):
        scoring.rrf([["a"], ["b"]], weights=[1.0])


@pytest.mark.parametrize("k", [0, -5, 1])
def test_rrf_k_is_clamped_to_at_least_1(k):
    fused = scoring.rrf([["a", "b"]], k=k)
    assert [v for _, v in fused] == pytest.approx([1 / 2, 1 / 3])  # 1/(1+1), 1/(1+2)


def test_rrf_default_k_is_60():
    assert scoring.RRF_K == 60
    assert scoring.rrf([["a"]])[0][1] == pytest.approx(1 / 61)


def test_rrf_no_lanes():
    assert scoring.rrf([]) == []
    assert scoring.rrf([[], []]) == []


# ----------------------------------------------------------------------------- surprise / prime score


def test_surprise_updated_and_never_surfaced_is_1():
    assert scoring.surprise(T0, None, T0 + timedelta(hours=5)) == 1.0


def test_surprise_updated_after_last_surfaced_is_1():
    assert scoring.surprise(T0 + timedelta(minutes=1), T0, T0 + timedelta(hours=5)) == 1.0


def test_surprise_neither_updated_nor_surfaced_is_half():
    assert scoring.surprise(None, None, T0) == 0.5


def test_surprise_grows_with_hours_since_surfaced():
    # never updated, surfaced 100 h ago: 1 − exp(−0.01 × 100) = 1 − e^−1 = 0.632120559
    assert scoring.surprise(None, T0, T0 + timedelta(hours=100)) == pytest.approx(0.632120559, abs=1e-9)
    # updated before it was surfaced 10 h ago: 1 − exp(−0.1) = 0.095162582
    assert scoring.surprise(T0 - timedelta(days=3), T0, T0 + timedelta(hours=10)) == pytest.approx(
        0.095162582, abs=1e-9
    )
    # updated exactly when surfaced: not "after", so the formula: just surfaced → 0
    assert scoring.surprise(T0, T0, T0) == 0.0


def test_prime_score():
    assert scoring.prime_score(0.5, 1.0) == pytest.approx(0.7)  # 0.6×0.5 + 0.4×1.0
    assert scoring.prime_score(1.0, 0.5) == pytest.approx(0.8)  # 0.6 + 0.2
    assert scoring.prime_score(0.0, 0.0) == 0.0


# ----------------------------------------------------------------------------- MMR


def test_mmr_prefers_a_diverse_item_over_a_near_duplicate():
    scores = {"a": 0.9, "dup": 0.85, "other": 0.6}
    vectors = {"a": [1.0, 0.0], "dup": [0.99, 0.01], "other": [0.0, 1.0]}
    # After a: dup → 0.6×0.85 − 0.4×cos(dup, a)=0.51 − 0.4×0.99995 = 0.110; other → 0.6×0.6 − 0 = 0.36
    assert scoring.mmr_select(["dup", "other", "a"], scores, vectors, 2) == ["a", "other"]
    assert scoring.mmr_select(["dup", "other", "a"], scores, vectors, 3) == ["a", "other", "dup"]


def test_mmr_candidate_without_vector_gets_no_penalty():
    scores = {"a": 0.9, "dup": 0.85, "other": 0.6}
    vectors = {"a": [1.0, 0.0], "other": [0.0, 1.0]}  # dup has no vector: 0.6×0.85 = 0.51 > 0.36
    assert scoring.mmr_select(["a", "dup", "other"], scores, vectors, 2) == ["a", "dup"]


def test_mmr_first_pick_is_the_best_score_and_limit_is_respected():
    scores = {"x": 0.2, "y": 0.7, "z": 0.4}
    vectors = {"x": [1, 0], "y": [0, 1], "z": [1, 1]}
    assert scoring.mmr_select(list(scores), scores, vectors, 1) == ["y"]
    assert scoring.mmr_select(list(scores), scores, vectors, 0) == []
    assert sorted(scoring.mmr_select(list(scores), scores, vectors, 10)) == ["x", "y", "z"]
    assert scoring.mmr_select([], {}, {}, 5) == []


def test_mmr_lambda_is_0_6():
    assert scoring.PRIME_LAMBDA == 0.6


def test_cosine():
    assert scoring.cosine([1, 0], [1, 0]) == 1.0
    assert scoring.cosine([1, 0], [0, 1]) == 0.0
    assert scoring.cosine([0, 0], [1, 0]) == 0.0
    assert scoring.cosine([1, 1], [1, 0]) == pytest.approx(1 / math.sqrt(2))


# --------------------------------------------------------------- fusion and MMR, exactly (mutation survivors)


def test_min_max_scales_to_the_unit_interval_and_equal_scores_to_one():
    assert scoring.min_max({"x": 2.0, "y": 4.0, "z": 3.0}) == {"x": 0.0, "y": 1.0, "z": 0.5}
    assert scoring.min_max({"x": -5.0, "y": 5.0}) == {"x": 0.0, "y": 1.0}
    assert scoring.min_max({"x": 7.0, "y": 7.0}) == {"x": 1.0, "y": 1.0}
    assert scoring.min_max({}) == {}


def test_blend_is_the_weighted_sum_of_normalised_lanes_a_missing_lane_counting_zero():
    fused = scoring.blend({"a": 3.0, "b": 1.0, "c": 2.0}, {"c": -1.0, "d": -3.0}, 0.5)
    # primary → a 1, b 0, c 0.5; keyword → c 1, d 0; ties (b, d) keep primary order first
    assert fused == [("c", 0.75), ("a", 0.5), ("b", 0.0), ("d", 0.0)]
    weighted = dict(scoring.blend({"a": 3.0, "b": 1.0}, {"b": 9.0, "e": 1.0}, 0.25))
    assert weighted == {"a": 0.75, "b": 0.25, "e": 0.0}


def test_cosine_of_vectors_that_are_not_unit_length():
    assert scoring.cosine([3.0, 4.0], [6.0, 8.0]) == pytest.approx(1.0)
    assert scoring.cosine([1.0, 0.0], [2.0, 2.0]) == pytest.approx(1 / math.sqrt(2))
    assert scoring.cosine([0.0, 0.0], [1.0, 0.0]) == 0.0


def test_mmr_breaks_an_exact_tie_for_the_higher_score_and_normalises_vectors():
    # After c, a (score 1.0, cosine 0.6 to c) and b (score 0.4, cosine 0 to c) tie exactly at λ = 0.5:
    # 0.5·1.0 − 0.5·0.6 = 0.5·0.4 − 0 = 0.2. The higher score wins; no vector is unit length.
    scores = {"c": 3.0, "b": 0.4, "a": 1.0}
    vectors = {"c": [2.0, 0.0], "a": [3.0, 4.0], "b": [0.0, 5.0]}
    assert scoring.mmr_select(["b", "a", "c"], scores, vectors, 2, lam=0.5) == ["c", "a"]
    # a slightly lower: b wins — the penalty's weight is (1 − λ)
    assert scoring.mmr_select(["b", "a", "c"], {**scores, "a": 0.999}, vectors, 2, lam=0.5) == ["c", "b"]


def test_mmr_keeps_the_given_order_among_equal_scores():
    assert scoring.mmr_select(["b", "a"], {"a": 0.5, "b": 0.5}, {}, 1) == ["b"]
    assert scoring.mmr_select(["a", "b"], {"a": 0.5, "b": 0.5}, {}, 1) == ["a"]


def _eager_mmr(candidates, scores, vectors, limit, lam=scoring.PRIME_LAMBDA):
    """MMR as written first: every candidate compared with every pick (the reference the lazy version must equal)."""
    unit = {k: [x / math.sqrt(sum(y * y for y in v)) for x in v] for k, v in vectors.items() if any(v)}
    pool = sorted(candidates, key=lambda c: -scores[c])
    closest = dict.fromkeys(pool, 0.0)
    chosen = []
    while pool and len(chosen) < limit:
        best = max(pool, key=lambda c: lam * scores[c] - (1.0 - lam) * closest[c])
        chosen.append(best)
        pool.remove(best)
        if best in unit:
            for c in pool:
                if c in unit:
                    closest[c] = max(closest[c], sum(a * b for a, b in zip(unit[c], unit[best], strict=True)))
    return chosen


@pytest.mark.parametrize("seed", range(40))
def test_lazy_mmr_chooses_exactly_what_comparing_every_pair_chooses(seed: int):
    """Prime's MMR compares a candidate with new picks only when it could still win (ADR 0036): the same picks, in the
    same order, as the eager greedy — with ties in score, near duplicates, negative cosines and missing vectors."""
    rng = random.Random(seed)
    n = rng.randrange(1, 40)
    keys = [f"m{i}" for i in range(n)]
    scores = {k: rng.choice([0.5, 0.25, round(rng.random(), 2), rng.random()]) for k in keys}
    base = [rng.gauss(0, 1) for _ in range(8)]
    vectors = {
        k: [b * rng.random() * 3 + rng.gauss(0, 1) for b in base]
        if rng.random() < 0.5
        else [rng.gauss(0, 1) for _ in base]
        for k in keys
        if rng.random() < 0.85
    }
    lam = rng.choice([scoring.PRIME_LAMBDA, 0.0, 1.0, rng.random()])
    limit = rng.randrange(0, n + 2)
    assert scoring.mmr_select(keys, scores, vectors, limit, lam) == _eager_mmr(keys, scores, vectors, limit, lam)


def test_mmr_refuses_a_lambda_outside_zero_to_one():
    with pytest.raises(ValueError, match="lambda"):
        scoring.mmr_select(["a"], {"a": 1.0}, {}, 1, lam=1.5)


def test_the_parts_and_results_recall_builds_without_their_constructors_are_whole() -> None:
    """``composite`` and recall's ``_score`` build their frozen values without ``__init__`` (~110 a recall): each must
    hold every field, as the constructor would — a field added to the class and not to the builder fails here."""
    import dataclasses

    from cerebro.candidates import Candidate as _Candidate
    from cerebro.candidates import score_of as _score
    from cerebro.scoring import ScoreParts
    from cerebro.values import Node, ScoredNode

    parts = scoring.composite(
        similarity=0.5, importance=0.7, access_count=2, decay_rate=0.01, days_since_access=3.0, structural=0.2
    )
    assert parts.__dict__.keys() == {f.name for f in dataclasses.fields(ScoreParts)}
    assert parts == ScoreParts(*(getattr(parts, f.name) for f in dataclasses.fields(ScoreParts)))
    assert parts.anchor == 1.0

    required = [f.name for f in dataclasses.fields(Node) if f.default is f.default_factory is dataclasses.MISSING]
    node = Node(**(dict.fromkeys(required) | {"id": "n1", "importance": 0.7, "access_count": 2, "decay_rate": 0.01}))
    scored = _score(_Candidate(node, 0.5, 0.2, {"vector": 1}), datetime(2026, 3, 1, 12, tzinfo=UTC))
    assert scored.__dict__.keys() == {f.name for f in dataclasses.fields(ScoredNode)}
    assert scored == ScoredNode(node, scored.score, 0.5, scored.parts, {"vector": 1})
