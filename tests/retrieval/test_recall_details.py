"""Details of the recall pipeline and the keyword lane that a user relies on without seeing them (each written
for a mutant that survived the suite): recency counts from the last use, the keyword lane filters by subtype
before it is cut, one feedback document is enough, centering works without the Brain's cache, and the query's
terms are read exactly."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from cerebro import Brain, clock, ordering, recall, scoring
from cerebro.recall import RecallOptions
from cerebro.store import fts

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def clock_at_t0():
    clock.set_now(T0)
    yield
    clock.set_now(None)


def _sql(brain: Brain, statement: str, *params: object) -> None:
    brain.handle.write_raw(lambda conn: conn.execute(statement, params))


def test_recency_counts_from_the_last_use_not_from_creation(fake_brain: Brain) -> None:
    node = fake_brain.add("walrus tusk ivory", type="concept")
    month_ago = clock.format_ts(T0 - timedelta(days=30))
    now = clock.format_ts(T0)
    _sql(fake_brain, "UPDATE nodes SET created_at = ?, last_accessed = ? WHERE id = ?", month_ago, now, node)
    (hit,) = fake_brain.recall("walrus tusk", lanes=("vector",)).results
    assert hit.parts.recency == pytest.approx(1.0)  # used just now
    _sql(fake_brain, "UPDATE nodes SET last_accessed = NULL WHERE id = ?", node)
    (hit,) = fake_brain.recall("walrus tusk", lanes=("vector",)).results
    assert hit.parts.recency == pytest.approx(scoring.recency(0.02, 30.0))  # never used: from its creation


def test_the_keyword_lane_filters_by_subtype_before_it_keeps_its_best(fake_brain: Brain) -> None:
    """With one candidate a lane, the wanted subtype must be chosen inside the lane: a better match of another
    subtype would fill the place and the final filter would leave nothing."""
    fake_brain.add("zebra zebra zebra stripes", subtype="a")  # the better BM25 match
    wanted = fake_brain.add("a zebra once", subtype="b")
    fake_brain.config_set("lane_depth", "1")
    assert fake_brain.recall("zebra", limit=1, subtype="b", lanes=("keyword",)).ids == [wanted]


def test_one_feedback_document_is_enough_to_steer_the_query(fake_brain: Brain) -> None:
    target = fake_brain.add("zebra crossing near the station, painted stripes")
    fake_brain.add("unrelated note about lunch")
    fake_brain.config_set("recall_threshold", "0")
    fake_brain.config_set("feedback_docs", "1")
    steered = {r.node.id: r for r in fake_brain.recall("zebra")}[target]
    fake_brain.config_set("feedback_docs", "0")
    plain = {r.node.id: r for r in fake_brain.recall("zebra")}[target]
    assert steered.parts.relevance >= plain.parts.relevance + 0.1


def _pipeline(brain: Brain, query: str, **options: object) -> list[str]:
    """recall.recall called directly, as a program embedding the pipeline would: no Brain caches."""
    vector = brain.handle.embed([query])[0]
    with brain.handle.snapshot() as conn:
        result = recall.recall(brain.handle.store, conn, query, vector, RecallOptions(now=T0, **options), mode="hybrid")
    return [(r.node.id, round(r.score, 6)) for r in result.results]


def test_centering_without_the_brains_cache_reads_the_mean_itself(fake_brain: Brain) -> None:
    words = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "iris", "juniper"]
    for i in range(60):  # above CENTERING_MIN: the brain has a mean to center on
        fake_brain.add(f"{words[i % 10]} {words[(i * 3 + 1) % 10]} shared common words item{i}")
    query = "cedar harbor"
    cached = _pipeline(fake_brain, query, mean=lambda conn: recall.brain_mean(fake_brain.handle.store, conn))
    uncached = _pipeline(fake_brain, query)
    uncentered = _pipeline(fake_brain, query, centering=0.0)
    assert uncached == cached
    assert uncached != uncentered  # centering did something here, so the equality above means something


def test_a_mean_of_another_width_is_ignored_rather_than_used(fake_brain: Brain) -> None:
    for i in range(5):
        fake_brain.add(f"walrus tusk item{i}")
    other_model = _pipeline(fake_brain, "walrus", mean=lambda conn: [1.0 / math.sqrt(3)] * 3)
    assert other_model == _pipeline(fake_brain, "walrus", centering=0.0)


def test_query_terms_exactly() -> None:
    assert fts.query_terms("") == [] and fts.query_terms(None) == []  # type: ignore[arg-type]
    assert fts.query_terms("Straße STRASSE") == ["Straße", "STRASSE"]  # two words: only case folds them
    assert fts.query_terms("Walrus walrus WALRUS") == ["Walrus"]
    assert fts.query_terms("the, walrus") == ["walrus"]
    assert fts.query_terms("walrus the)'s ...") == ["walrus"]  # punctuation left by the possessive cut: still "the"


def test_keyword_search_for_memories_without_a_subtype(fake_brain: Brain) -> None:
    bare = fake_brain.add("zebra without a subtype")
    fake_brain.add("zebra with one", subtype="x")
    with fake_brain.handle.snapshot() as conn:
        assert [i for i, _ in fake_brain.handle.store.keywords.search(conn, "zebra", 10, subtype=None)] == [bare]
        assert [i for i, _ in fake_brain.handle.store.keywords.search(conn, "zebra", 10, subtype="")] == [bare]
        assert len(fake_brain.handle.store.keywords.search(conn, "zebra", 10)) == 2


def test_keyword_search_can_keep_stop_words(fake_brain: Brain) -> None:
    only_stop = fake_brain.add("the and of")
    walrus = fake_brain.add("walrus")
    with fake_brain.handle.snapshot() as conn:
        assert [i for i, _ in fake_brain.handle.store.keywords.search(conn, "the walrus", 10)] == [walrus]
        assert {
            i for i, _ in fake_brain.handle.store.keywords.search(conn, "the walrus", 10, drop_stop_words=False)
        } == {only_stop, walrus}


@pytest.fixture
def centered_brain(fake_brain: Brain) -> tuple[Brain, str]:
    """Sixty memories share the word "shared" (the brain's mean leans to it); the target is "shared walrus" minus
    the walrus: close to the query as asked (0.71), far from it once the query is centered."""
    words = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "iris", "juniper", "kelp"]
    for i in range(60):  # words whose hashed buckets miss "walrus" and "shared": cosine 0.41, under the 0.5 below
        fake_brain.add(f"shared {words[i % 11]} {words[(i * 3 + 1) % 11]}")
    target = fake_brain.add("shared")
    fake_brain.config_set("lane_depth", "100")  # every memory a candidate: what is tested is the threshold
    fake_brain.config_set("feedback_docs", "0")  # the query as asked is the query searched
    return fake_brain, target


def test_the_threshold_applies_to_the_query_as_asked_not_the_centered_one(centered_brain) -> None:
    brain, target = centered_brain
    query = "shared walrus"
    asked, centered_query = brain.handle.embed([query])[0], None
    with brain.handle.snapshot() as conn:
        mean = recall.brain_mean(brain.handle.store, conn)
        assert mean is not None
        centered_query = scoring.center(asked, mean, 1.0)
        (target_vector,) = brain.handle.store.vectors.vectors_for(conn, [target]).values()
    assert scoring.cosine(asked, target_vector) == pytest.approx(math.sqrt(0.5), abs=1e-5)
    assert scoring.cosine(centered_query, target_vector) < 0.5  # what the lane ranks by
    assert brain.recall(query, threshold=0.5, lanes=("vector",)).ids == [target]


def test_a_similarity_exactly_at_the_threshold_passes_when_centered(centered_brain) -> None:
    brain, target = centered_brain
    (hit,) = brain.recall("shared walrus", threshold=0.5, lanes=("vector",)).results
    assert brain.recall("shared walrus", threshold=hit.similarity, lanes=("vector",)).ids == [target]
    above = math.nextafter(hit.similarity, 2.0)
    assert brain.recall("shared walrus", threshold=above, lanes=("vector",)).ids == []


FUSION_TEXTS = [
    "walrus tusk",  # the nearest vector, second by keywords
    "walrus tusk ivory arctic ocean fish",
    "tusk tusk tusk tusk walrus walrus report",  # the best keyword match, second by vector
    "walrus colony survey",
]


FUSED_ONLY = ("vector", "keyword")  # the two lanes fused, none of the steps after fusion (ADR 0033–0035)


def test_rrf_and_blend_fuse_the_lanes_each_their_own_way(fake_brain: Brain) -> None:
    """fusion=rrf (upstream's recipe): Σ 1/(60 + rank) over the lanes; fusion=blend (ours): normalised lane scores,
    60 % keyword — so the best keyword match leads. Each setting must run its own recipe."""
    ids = {fake_brain.add(text): text for text in FUSION_TEXTS}
    fake_brain.config_set("recall_threshold", "0")
    fake_brain.config_set("fusion", "rrf")
    rrf = fake_brain.recall("walrus tusk", lanes=FUSED_ONLY).results
    assert len(rrf) == 4
    for r in rrf:  # here the composite order is the vector lane's, so the ranks fused are the ones reported
        assert r.fused == pytest.approx(1 / (60 + r.lanes["vector"]) + 1 / (60 + r.lanes["keyword"]), abs=1e-12)
    fake_brain.config_set("fusion", "blend")
    blend = fake_brain.recall("walrus tusk", lanes=FUSED_ONLY).results
    assert ids[blend[0].node.id].startswith("tusk tusk")
    assert [ids[r.node.id] for r in blend][-1] == "walrus colony survey" and blend[-1].fused == 0.0
    assert all(0.0 <= r.fused <= 1.0 for r in blend)


def test_blend_looks_past_the_limit_and_rrf_does_not(fake_brain: Brain) -> None:
    """Blending reads each lane `lane_depth` deep whatever the limit (a lane's 30th can win); RRF cuts each lane
    at the limit, as upstream does — so one result's fused value shows how deep the lanes were read."""
    for text in FUSION_TEXTS:
        fake_brain.add(text)
    fake_brain.config_set("recall_threshold", "0")
    whole = fake_brain.recall("walrus tusk").results[0]
    (top,) = fake_brain.recall("walrus tusk", limit=1).results
    assert (top.node.id, top.fused) == (whole.node.id, pytest.approx(whole.fused))
    fake_brain.config_set("fusion", "rrf")
    (top,) = fake_brain.recall("walrus tusk", limit=1, lanes=FUSED_ONLY).results
    assert top.fused == pytest.approx(1 / 61, abs=1e-12)  # one lane each, cut at 1: no result is in both


def test_without_vectors_a_cited_keyword_match_keeps_its_in_degree(tmp_path) -> None:
    """Provider none: the keyword hits are the seeds, and their structural term is still the citation in-degree."""
    path = tmp_path / "none.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        cited = brain.add("zebra crossing rules")
        for text in ("oscar", "papa", "quebec"):
            brain.add_edge(brain.add(text), cited, "supports")
        (hit, *_) = brain.recall("zebra").results
        assert hit.node.id == cited
        assert hit.parts.structural == pytest.approx(scoring.indegree_structural(3))
        brain.config_set("indegree_bonus_enabled", "false")
        assert brain.recall("zebra").results[0].parts.structural == 0.0


def test_without_vectors_a_keyword_seed_has_no_similarity_and_its_importance_ranks_the_graph_lane(tmp_path) -> None:
    """Provider none: no cosine is known, so a keyword hit's relevance term is 0 (reported as such), and a graph
    neighbour that matters more outranks it in the graph lane."""
    path = tmp_path / "none.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        seed = brain.add("zebra crossing rules", importance=0.1)
        weighty = brain.add("pedestrian signals", importance=1.0)
        brain.add_edge(seed, weighty, "supports")
        results = {r.node.id: r for r in brain.recall("zebra").results}
        assert results[seed].similarity == 0.0
        assert results[seed].parts.relevance == 0.0
        assert results[weighty].lanes["graph"] < results[seed].lanes["graph"]


def test_the_pipeline_counts_recency_to_the_now_it_is_given(fake_brain: Brain) -> None:
    """A program embedding the pipeline may rank as of another moment than the clock's (RecallOptions.now)."""
    rate = fake_brain.get(fake_brain.add("walrus tusk ivory")).node.decay_rate  # created and used at T0
    vector = fake_brain.handle.embed(["walrus tusk"])[0]
    with fake_brain.handle.snapshot() as conn:
        options = RecallOptions(now=T0 + timedelta(days=30), lanes=("vector",))
        (hit,) = recall.recall(fake_brain.handle.store, conn, "walrus tusk", vector, options, mode="hybrid").results
    assert hit.parts.recency == pytest.approx(scoring.recency(rate, 30.0))  # 30 days on, not the clock's 0


def test_the_callers_mean_is_the_one_the_query_is_centered_on(fake_brain: Brain) -> None:
    words = ["amber", "basil", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "iris", "juniper"]
    for i in range(60):
        fake_brain.add(f"{words[i % 10]} {words[(i * 3 + 1) % 10]} shared common words item{i}")
    elsewhere = fake_brain.handle.embed(["cedar cedar cedar"])[0]  # a mean leaning somewhere the brain's does not
    own = _pipeline(fake_brain, "cedar harbor")
    assert _pipeline(fake_brain, "cedar harbor", mean=lambda conn: elsewhere) != own


class _EverythingChanged:
    """An anchor checker that finds every memory's code changed (cerebro.anchors.AnchorChecker's annotate)."""

    def annotate(self, node):  # a values.Node, annotated
        from dataclasses import replace

        return replace(node, anchor_status="stale")


def test_a_demoted_result_is_marked_and_needs_no_parts_or_fused_value(fake_brain: Brain) -> None:
    from cerebro.values import ScoredNode

    node = fake_brain.get(fake_brain.add("walrus tusk ivory")).node
    (demoted,) = ordering.apply_anchors([ScoredNode(node, 0.5, 0.9)], _EverythingChanged())  # type: ignore[arg-type]
    assert demoted.node.anchor_status == "stale"
    assert demoted.score == pytest.approx(0.5 * scoring.anchor_factor("stale"))
    assert demoted.parts is None and demoted.fused is None


class _SomeChanged:
    """Marks the memories whose content names a status (``stale``, ``missing`` or ``verified``) with it."""

    def annotate(self, node):
        from dataclasses import replace

        for status in ("stale", "missing", "verified"):
            if status in node.content:
                return replace(node, anchor_status=status)
        return node


@pytest.mark.parametrize("statuses", [("verified",), ("stale", "missing", "verified")], ids=["none-demoted", "demoted"])
@pytest.mark.parametrize("length", [True, False], ids=["prior", "no-prior"])
def test_the_one_copy_ordering_equals_anchors_then_the_length_prior(fake_brain: Brain, statuses, length) -> None:
    """Issue 18: after fusion, each result is copied once (anchor factor × length prior); it must give exactly the
    list that the two steps gave one after the other — values, order (ties included) and annotated nodes."""
    from cerebro.prior import favour_informative
    from cerebro.values import ScoredNode

    words = ["walrus", "tusk", "ivory", "arctic", "narwhal", "horn", "floe", "seal", "krill", "pod"]
    valued = []
    for i in range(24):
        text = " ".join(words[: 2 + i % 9]) + f" {statuses[i % len(statuses)] if i % 4 == 0 else ''} item{i}"
        node = fake_brain.get(fake_brain.add(text)).node
        valued.append((ScoredNode(node, 0.3 + (i % 5) / 10, 0.5, fused=None), round(1.0 - (i // 2) / 24, 6)))
    checker = _SomeChanged()
    one_copy = ordering.ordered(valued, checker, length=length)  # type: ignore[arg-type]
    steps = ordering.apply_anchors([s.revalued(v) for s, v in valued], checker)  # type: ignore[arg-type]
    steps = favour_informative(steps) if length else steps
    assert [(s.node, s.score, s.fused, s.parts, s.lanes) for s in one_copy] == [
        (s.node, s.score, s.fused, s.parts, s.lanes) for s in steps
    ]
