"""Recall's adjacency step (ADR 0033): a top result brings the memories written just before and after it, when they
belong to the same episode (same origin session, no long pause) and are about the same thing, with a share of its
fused value.

Fake vectors are hashed bags of words: the neighbours below share a word with the hit and none with the query, so
neither lane can find them (checked as a precondition), and only the adjacency step can bring them.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cerebro import Brain, adjacency, clock, scoring, values
from tests.fakes import hashed_vector

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
QUERY = "walrus tusk"
HIT = "walrus tusk ivory arctic"
BEFORE = "ivory zulu"  # cosine 0.35 with the hit: related
AFTER = "arctic oscar"
OTHER = "romeo sierra tango"  # cosine 0 with the hit: unrelated


@pytest.fixture(autouse=True)
def clock_at_t0():
    clock.set_now(T0)
    yield
    clock.set_now(None)


def cos(a: str, b: str) -> float:
    return scoring.cosine(hashed_vector(a), hashed_vector(b))


def test_the_neighbours_share_nothing_with_the_query():
    for text in (BEFORE, AFTER, OTHER):
        assert cos(QUERY, text) == 0.0
        assert not set(QUERY.split()) & set(text.split())
    assert cos(HIT, BEFORE) >= adjacency.RELATED and cos(HIT, AFTER) >= adjacency.RELATED
    assert cos(HIT, OTHER) < adjacency.RELATED


def by_id(brain: Brain, query: str = QUERY, **kw: object) -> dict[str, values.ScoredNode]:
    return {s.node.id: s for s in brain.recall(query, **kw).results}


def test_a_hit_brings_the_memories_written_just_before_and_after_it(fake_brain: Brain):
    far = fake_brain.add(OTHER)  # written before the episode's first memory: not beside the hit
    before, hit, after = (fake_brain.add(text) for text in (BEFORE, HIT, AFTER))
    found = by_id(fake_brain)
    assert set(found) == {hit, before, after} and far not in found
    top = next(iter(found.values()))
    assert top.node.id == hit and top.fused is not None
    for neighbour in (before, after):
        assert found[neighbour].lanes == {"adjacent": 1}  # written beside result #1, found by no lane
        assert found[neighbour].fused == pytest.approx(0.4 * top.fused)  # the default share of its value
        assert found[neighbour].similarity == 0.0


def test_the_share_is_a_setting_and_0_turns_the_step_off(fake_brain: Brain):
    before, hit = fake_brain.add(BEFORE), fake_brain.add(HIT)
    fake_brain.config_set("adjacency", "0.25")
    found = by_id(fake_brain)
    assert found[before].fused == pytest.approx(0.25 * found[hit].fused)
    fake_brain.config_set("adjacency", "0")
    assert list(by_id(fake_brain)) == [hit]


def test_recall_of_chosen_lanes_runs_no_adjacency(fake_brain: Brain):
    """The evaluation compares each lane alone against the pipeline: a lane alone must stay itself."""
    fake_brain.add(BEFORE)
    hit = fake_brain.add(HIT)
    assert list(by_id(fake_brain, lanes=("keyword",))) == [hit]
    assert list(by_id(fake_brain, lanes=("vector", "keyword"))) == [hit]


def test_a_neighbour_about_something_else_is_not_brought(fake_brain: Brain):
    """Unrelated notes written back to back (a batch of facts) must not crowd out the answer."""
    before = fake_brain.add(BEFORE)
    hit = fake_brain.add(HIT)
    fake_brain.add(OTHER)
    assert set(by_id(fake_brain)) == {hit, before}


def test_memories_of_another_session_are_not_brought(fake_brain: Brain):
    session = values.Origin(session="s-1")
    before = fake_brain.add(BEFORE, origin=values.Origin(session="s-2"))
    hit = fake_brain.add(HIT, origin=session)
    fake_brain.add(AFTER, origin=None)  # no session recorded is another session too
    fake_brain.add("ivory oscar", origin=session)  # same session and related, but not the nearest written after
    assert list(by_id(fake_brain)) == [hit]
    assert cos(HIT, "ivory oscar") >= adjacency.RELATED and before


def test_memories_of_the_same_session_are_brought(fake_brain: Brain):
    session = values.Origin(session="s-1")
    before = fake_brain.add(BEFORE, origin=session)
    hit = fake_brain.add(HIT, origin=session)
    assert set(by_id(fake_brain)) == {hit, before}


def test_a_pause_longer_than_an_hour_ends_the_episode(fake_brain: Brain):
    before = fake_brain.add(BEFORE)
    clock.set_now(T0 + timedelta(hours=1, minutes=1))
    hit = fake_brain.add(HIT)
    clock.set_now(T0 + timedelta(hours=2))  # 59 minutes after the hit: the same episode
    after = fake_brain.add(AFTER)
    found = by_id(fake_brain)
    assert set(found) == {hit, after} and before not in found


def test_a_neighbour_that_is_not_active_is_not_brought(fake_brain: Brain):
    before = fake_brain.add(BEFORE)
    hit = fake_brain.add(HIT)
    fake_brain.supersede(before, OTHER)  # still written just before the hit, but superseded; OTHER is unrelated
    assert list(by_id(fake_brain)) == [hit]


def test_the_top_five_results_bring_their_neighbours_and_the_sixth_does_not(fake_brain: Brain):
    hits, neighbours = [], []
    for i in range(6):  # each hit a little weaker than the one before; each pair an episode of its own
        extra = [f"k{i}x{j}" for j in range(i + 1)]
        hit, neighbour = f"walrus tusk {' '.join(extra)}", f"{' '.join(extra)} tail{i}"
        assert cos(QUERY, neighbour) == 0.0 and cos(hit, neighbour) >= adjacency.RELATED
        session = values.Origin(session=f"s-{i}")
        hits.append(fake_brain.add(hit, origin=session))
        neighbours.append(fake_brain.add(neighbour, origin=session))
    fake_brain.config_set("adjacency", "0")
    order = [s.node.id for s in fake_brain.recall(QUERY).results]
    assert sorted(order) == sorted(hits)  # precondition: the lanes find the hits only
    fake_brain.config_set("adjacency", "0.4")
    found = by_id(fake_brain)
    for rank, hit in enumerate(order, start=1):
        neighbour = neighbours[hits.index(hit)]
        if rank <= adjacency.PARENTS:
            assert found[neighbour].lanes == {"adjacent": rank}
        else:
            assert neighbour not in found


def test_a_newcomer_must_pass_the_recalls_subtype_filter(fake_brain: Brain):
    fake_brain.add(BEFORE)  # no subtype
    hit = fake_brain.add(HIT, subtype="pinniped")
    after = fake_brain.add(AFTER, subtype="pinniped")
    assert set(by_id(fake_brain, subtype="pinniped")) == {hit, after}


def test_a_candidate_already_found_keeps_the_larger_of_its_value_and_the_share(fake_brain: Brain):
    """A weak keyword match written beside the hit is lifted to the hit's share; a strong one keeps its own."""
    weak = "walrus ivory arctic " + " ".join(f"extra{i}" for i in range(5))  # related to the hit (cosine 0.47)
    fake_brain.add("walrus " + " ".join(f"padding{i}" for i in range(80)))  # weaker still: blend's zero point
    fake_brain.add(OTHER)  # so that the weakest match is not beside the hit
    hit = fake_brain.add(HIT)
    near = fake_brain.add(weak)
    assert cos(HIT, weak) >= adjacency.RELATED
    fake_brain.config_set("adjacency", "0")
    alone = by_id(fake_brain)
    fake_brain.config_set("adjacency", "0.4")
    lifted = by_id(fake_brain)
    assert alone[near].fused < 0.4 * alone[hit].fused  # precondition: the share is worth more
    assert lifted[near].fused == pytest.approx(0.4 * lifted[hit].fused)
    assert lifted[near].lanes == {**alone[near].lanes, "adjacent": 1}  # the lanes that found it stay
    assert alone[near].fused > 0
    share = alone[near].fused / alone[hit].fused / 2
    fake_brain.config_set("adjacency", repr(share))
    kept = by_id(fake_brain)[near]
    assert "adjacent" not in kept.lanes  # worth less than its own value: not lifted, only supported by the hit
    assert kept.fused == pytest.approx(alone[near].fused + adjacency.SUPPORT * share * alone[hit].fused)
    assert kept.lanes == {**alone[near].lanes, "episode": 1}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Did they sign it for a special reason?", (8, 0)),
        ("That's so cool. Did they sign it for a special reason?", (8, 3)),  # a statement, then the question
        ("Why? Because the cache was cold.", (0, 6)),  # ends with a statement: not a question
        ("What broke the build? [image: a red CI run]", (4, 0)),  # a trailing bracketed note is not a sentence
        ("构建为什么失败？", (1, 0)),  # full-width question mark
        ("", (0, 0)),
        ("Notes\n- cache is cold\n- retries are off\n- should we add a backoff?", (6, 9)),  # a line ends a sentence
        ('She asked: "What kind of articles?"', (6, 0)),  # a closing quote after the question mark
        ("Is it fixed?!", (3, 0)),
        ("What broke? [a] [b]", (2, 0)),  # every trailing note
        ("Fixed. [image: a green CI run]", (0, 1)),  # the note's words are not counted
        ("One. Two? Three.", (0, 3)),
    ],
)
def test_question_words_counts_the_words_of_a_text_that_ends_with_a_question(text, expected):
    assert adjacency.question_words(text) == expected


ASKS = "ivory walrus tusk arctic?"  # the hit, ending with a question; cosine 1.0 with HIT's words
ANSWER = "ivory zulu"  # related to it, written after it


def test_the_memory_written_after_a_question_answers_it_and_ranks_ahead_of_it(fake_brain: Brain):
    question = fake_brain.add(ASKS)
    answer = fake_brain.add(ANSWER)
    results = fake_brain.recall(QUERY).results
    assert [s.node.id for s in results] == [answer, question]  # the whole value, and ahead: it only asks
    assert results[0].fused == pytest.approx(results[1].fused)
    assert results[0].lanes == {"adjacent": 1}


def test_a_question_after_a_statement_lends_its_whole_value_but_keeps_its_place(fake_brain: Brain):
    question = fake_brain.add("walrus tusk ivory arctic seen on the floe today. Why ivory?")  # more told than asked
    answer = fake_brain.add(ANSWER)
    results = fake_brain.recall(QUERY).results
    assert [s.node.id for s in results] == [question, answer]
    assert results[1].fused == pytest.approx(results[0].fused)


def test_the_memory_written_before_a_question_gets_the_usual_share(fake_brain: Brain):
    before = fake_brain.add(ANSWER)
    question = fake_brain.add(ASKS)
    found = by_id(fake_brain)
    assert list(found) == [question, before]
    assert found[before].fused == pytest.approx(0.4 * found[question].fused)


def test_a_result_that_asks_exactly_as_much_as_it_tells_counts_as_mostly_asking(fake_brain: Brain):
    question = fake_brain.add("walrus tusk ivory arctic. Why ivory arctic walrus?")  # four words told, four asked
    assert adjacency.question_words("walrus tusk ivory arctic. Why ivory arctic walrus?") == (4, 4)
    answer = fake_brain.add(ANSWER)
    assert [s.node.id for s in fake_brain.recall(QUERY).results] == [answer, question]


def test_a_neighbour_offered_by_two_results_keeps_the_larger_offer(fake_brain: Brain):
    session = values.Origin(session="s-1")
    first = fake_brain.add("walrus tusk ivory arctic", origin=session)
    shared = fake_brain.add("ivory arctic zulu", origin=session)  # written after the first, before the second
    second = fake_brain.add("walrus ivory arctic yankee xray", origin=session)
    found = by_id(fake_brain)
    assert found[first].fused > found[second].fused  # precondition: the first result lends more
    assert found[shared].fused == pytest.approx(0.4 * found[first].fused)
    assert found[shared].lanes["adjacent"] == 1


# ------------------------------------------------------------------ support among results (ADR 0034)

TOP, NEAR = "walrus tusk ivory arctic", "walrus ivory arctic kilo"  # cosine 0.6: related
FILLER = "romeo sierra tango"


def scored(brain: Brain, node_id: str, value: float) -> values.ScoredNode:
    return values.ScoredNode(brain.get(node_id).node, value, 0.5, lanes={"vector": 1}, fused=value)


def on_real_order(brain: Brain, step, ordered: list[values.ScoredNode], own_score: float) -> list[values.ScoredNode]:
    """``adjacency.arrange`` or ``bring_neighbours`` on a hand-made result list, over the brain's real writing order
    and stored vectors; a memory that was not a result joins with ``own_score``."""
    store = brain.handle.store
    with brain.handle.snapshot() as conn:
        return step(
            store,
            conn,
            ordered,
            0.4,
            vectors=lambda ids: store.vectors.vectors_for(conn, list(ids)),
            score=lambda node: values.ScoredNode(node, own_score, 0.0),
            accept=lambda node: True,
        )


def support(brain: Brain, ordered: list[values.ScoredNode], **kw: object) -> list[values.ScoredNode]:
    """The step on a hand-made result list, over the brain's real writing order and stored vectors."""
    store = brain.handle.store
    with brain.handle.snapshot() as conn:
        return adjacency.support(
            store, conn, ordered, 0.4, vectors=lambda ids: store.vectors.vectors_for(conn, list(ids)), **kw
        )


def test_a_result_written_near_a_better_one_rises_above_an_isolated_one(fake_brain: Brain):
    assert cos(TOP, NEAR) >= adjacency.RELATED
    top, _, near = fake_brain.add(TOP), fake_brain.add(FILLER), fake_brain.add(NEAR)  # two places apart
    alone = fake_brain.add("walrus lima mike", origin=values.Origin(session="elsewhere"))
    out = support(
        fake_brain, [scored(fake_brain, top, 1.0), scored(fake_brain, alone, 0.5), scored(fake_brain, near, 0.4)]
    )
    assert [s.node.id for s in out] == [top, near, alone]
    assert out[1].fused == pytest.approx(0.4 + adjacency.SUPPORT * 0.4 * 1.0)  # half the share of the top's value
    assert out[1].lanes == {"vector": 1, adjacency.SUPPORT_LANE: 1}  # explain: rank 1 lent the most
    assert out[2].fused == 0.5 and adjacency.SUPPORT_LANE not in out[2].lanes


@pytest.mark.parametrize("apart", ["three places", "another session", "unrelated", "brought by it"])
def test_no_support_across_more_than_two_places_another_session_unrelated_or_from_the_result_that_brought_it(
    fake_brain: Brain, apart: str
):
    top = fake_brain.add(TOP)
    fake_brain.add(FILLER)
    if apart == "three places":
        fake_brain.add(FILLER + " again")
    session = values.Origin(session="other") if apart == "another session" else None
    near = fake_brain.add("romeo zulu yankee" if apart == "unrelated" else NEAR, origin=session)
    alone = fake_brain.add("walrus lima mike", origin=values.Origin(session="elsewhere"))
    ordered = [scored(fake_brain, top, 1.0), scored(fake_brain, alone, 0.5), scored(fake_brain, near, 0.4)]
    brought_by = {near: top} if apart == "brought by it" else None
    assert support(fake_brain, ordered, brought_by=brought_by) == ordered


def test_the_first_result_keeps_its_place_and_its_value_and_support_adds_up(fake_brain: Brain):
    first, second, third = fake_brain.add("walrus tusk arctic"), fake_brain.add(TOP), fake_brain.add(NEAR)
    assert cos("walrus tusk arctic", TOP) >= adjacency.RELATED and cos("walrus tusk arctic", NEAR) >= adjacency.RELATED
    ordered = [scored(fake_brain, first, 2.0), scored(fake_brain, second, 0.95), scored(fake_brain, third, 0.9)]
    out = support(fake_brain, ordered)
    assert out[0] is ordered[0]  # the best match is not supported: it leads on its own
    assert [s.node.id for s in out] == [first, second, third]
    assert out[1].fused == pytest.approx(0.95 + 0.2 * (2.0 + 0.9))  # every lender adds its value as fused
    assert out[2].fused == pytest.approx(0.9 + 0.2 * (2.0 + 0.95))
    assert out[1].lanes[adjacency.SUPPORT_LANE] == 1 and out[2].lanes[adjacency.SUPPORT_LANE] == 1


def test_support_never_lifts_a_result_past_the_first(fake_brain: Brain):
    """A merged recall (project and global brains) sorts by value: a supported result above the first would jump it."""
    first, second, third = fake_brain.add("walrus tusk arctic"), fake_brain.add(TOP), fake_brain.add(NEAR)
    ordered = [scored(fake_brain, first, 1.0), scored(fake_brain, second, 0.95), scored(fake_brain, third, 0.9)]
    out = support(fake_brain, ordered)
    assert [s.node.id for s in out] == [first, second, third]  # both reach the first's value: their order stays
    assert out[1].fused == out[2].fused == 1.0


def test_an_answer_brought_ahead_of_its_question_stays_ahead_after_support(fake_brain: Brain):
    """Below the first result, the answer a question brought (ranked ahead of it at the same value) must not fall
    behind it because it lent the question a share of the question's own value back."""
    top = fake_brain.add("walrus lima mike", origin=values.Origin(session="elsewhere"))
    question, answer = fake_brain.add(ASKS), fake_brain.add(ANSWER)
    assert cos(ASKS, ANSWER) >= adjacency.RELATED
    ordered = [scored(fake_brain, top, 1.0), scored(fake_brain, question, 0.5)]
    out = on_real_order(fake_brain, adjacency.arrange, ordered, own_score=0.1)
    assert [s.node.id for s in out] == [top, answer, question]
    assert out[1].fused == out[2].fused == 0.5  # the answer took the question's whole value; neither lends it back


def test_a_memory_brought_by_one_result_takes_a_later_larger_offer_whatever_its_own_score(fake_brain: Brain):
    """A memory that was not a result joins with its own composite score for display, but only what it is lent ranks
    it: a second, larger offer (a question's whole value) replaces the first even when its own score is larger."""
    session = values.Origin(session="s-1")
    asking = fake_brain.add("walrus ivory arctic, why?", origin=session)  # lends all of its value to what follows
    answer = fake_brain.add("walrus ivory arctic zulu", origin=session)
    best = fake_brain.add("walrus ivory arctic tusk", origin=session)  # lends the usual share to what precedes
    assert min(
        cos("walrus ivory arctic zulu", t) for t in ("walrus ivory arctic, why?", "walrus ivory arctic tusk")
    ) >= (adjacency.RELATED)
    ordered = [scored(fake_brain, best, 0.2), scored(fake_brain, asking, 0.15)]
    out = on_real_order(fake_brain, adjacency.bring_neighbours, ordered, own_score=0.9)  # above both offers
    brought = {s.node.id: s for s in out}[answer]
    assert brought.fused == pytest.approx(0.15)  # the question's whole value, not 0.4 × 0.2 = 0.08
    assert brought.lanes["adjacent"] == 2
