"""Time in the query (ADR 0034): a question that asks *when* lifts the results that state a time.

Each memory below is written in a session of its own, so the writing-order steps (ADR 0033) stay out of the way and
what moves is this step's doing alone."""

from __future__ import annotations

import pytest

from cerebro import Brain, temporal, values
from tests.helpers import scored as result

ASKS_WHEN = [
    "When did we move the queue to RabbitMQ?",
    "  when was the cache flushed",
    "Since when is the build red?",
    "How long ago did Ada join?",
    "What year did the walrus project start?",
    "In which month was the API frozen?",
    '"When" did it break?',
]
ASKS_SOMETHING_ELSE = [
    "What did we decide about the queue?",
    "Where is the cache configured?",
    "Whenever the build is red, who is paged?",  # "whenever" is not "when"
    "why did the deploy fail when the cache was cold",  # "when" inside, not asked
    "",
]


@pytest.mark.parametrize("query", ASKS_WHEN)
def test_questions_that_ask_when(query: str) -> None:
    assert temporal.asks_when(query)


@pytest.mark.parametrize("query", ASKS_SOMETHING_ELSE)
def test_questions_that_ask_something_else(query: str) -> None:
    assert not temporal.asks_when(query)


STATES_TIME = [
    "Moved the queue to RabbitMQ yesterday.",
    "The cache was flushed last Friday",
    "Released on 2026-11-02 after the freeze",
    "We switched two weeks ago",
    "it broke a few days after the upgrade",
    "Ada joins in May",
    "planned for next month",
    "the kickoff was on the 3rd",
    "It was a long summer of refactoring",
    "Tried again this morning",
]
STATES_NO_TIME = [
    "We may switch to RabbitMQ",  # "may" the verb, not the month
    "PostgreSQL listens on port 5432",  # four digits are not a year unless they look like one
    "The timeout is 30 seconds",
    "Retries back off exponentially",
    "",
]


@pytest.mark.parametrize("text", STATES_TIME)
def test_texts_that_state_a_time(text: str) -> None:
    assert temporal.states_time(text)


@pytest.mark.parametrize("text", STATES_NO_TIME)
def test_texts_that_state_no_time(text: str) -> None:
    assert not temporal.states_time(text)


QUERY = "When did the walrus tusk crack?"
STRONG = "walrus tusk crack report"  # the better match, undated
DATED = "walrus tusk cracked yesterday"  # a weaker match that says when
FLOOR = "walrus notes " + " ".join(f"n{i}" for i in range(60))  # weaker still: blend's zero point


def add_apart(brain: Brain, *texts: str) -> list[str]:
    """These memories, then the floor, each in a session of its own."""
    ids = [brain.add(text, origin=values.Origin(session=f"s-{i}")) for i, text in enumerate((*texts, FLOOR))]
    return ids[:-1]


def ranked(brain: Brain, query: str = QUERY, **kw: object) -> list[values.ScoredNode]:
    return list(brain.recall(query, **kw).results)


WITHOUT_STEP = ("vector", "keyword", "adjacent", "length")  # everything but this step


def test_a_question_that_asks_when_lifts_the_result_that_says_when(fake_brain: Brain) -> None:
    strong, dated = add_apart(fake_brain, STRONG, DATED)
    before = ranked(fake_brain, lanes=WITHOUT_STEP)
    assert [s.node.id for s in before][:2] == [strong, dated]  # precondition: the undated memory matches better
    assert before[1].rank_value * (1 + temporal.BOOST) > before[0].rank_value  # and the lift is worth it
    after = ranked(fake_brain)
    assert [s.node.id for s in after][:2] == [dated, strong]
    assert after[0].fused == pytest.approx(before[1].rank_value * (1 + temporal.BOOST))
    assert after[0].lanes == {**before[1].lanes, temporal.LANE: 2}  # explain: lifted from rank 2
    assert after[1].fused == pytest.approx(before[0].rank_value) and temporal.LANE not in after[1].lanes


def test_a_question_that_asks_something_else_keeps_the_fused_order(fake_brain: Brain) -> None:
    strong, dated = add_apart(fake_brain, STRONG, DATED)
    assert [s.node.id for s in ranked(fake_brain, "Why did the walrus tusk crack?")][:2] == [strong, dated]


def test_a_recall_that_names_its_lanes_runs_no_time_step(fake_brain: Brain) -> None:
    """The evaluation compares the keyword lane alone against the pipeline: it must stay itself."""
    strong, dated = add_apart(fake_brain, STRONG, DATED)
    assert [s.node.id for s in ranked(fake_brain, lanes=("keyword",))][:2] == [strong, dated]
    assert [s.node.id for s in ranked(fake_brain, lanes=(*WITHOUT_STEP, "dated"))][:2] == [dated, strong]


def test_the_lift_multiplies_the_value_results_rank_by_and_equals_keep_their_order() -> None:
    a, b, c = result("a", "undated", 0.75), result("b", "done yesterday", 0.5), result("c", "later", 0.75)
    out = temporal.favour_dated("when was it done?", [a, c, b])
    assert [s.node.id for s in out] == ["a", "c", "b"]  # 0.5 × 1.5 ties a and c: lifted, and placed after them
    assert out[2].fused == 0.75 and out[2].lanes == {temporal.LANE: 3}
    assert temporal.favour_dated("what was done?", [a, c, b]) == [a, c, b]
