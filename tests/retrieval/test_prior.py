"""The length prior (ADR 0035): each result's fused value is tilted by its length against the median length of the
recall's results, within a bounded span, and the list re-sorted."""

from __future__ import annotations

import pytest

from cerebro import Brain, prior
from tests.helpers import scored as result


@pytest.mark.parametrize(
    ("length", "pivot", "expected"),
    [
        (25, 25, 1.0),  # the median length: untouched
        (50, 25, 2**0.25),  # twice the median: 1.19×
        (10, 20, 0.5**0.25),  # half: 0.84×
        (100, 25, 3**0.25),  # four times: counted as three (the span), 1.32×
        (1, 25, (1 / 3) ** 0.25),  # a word: counted as a third, 0.76×
    ],
)
def test_the_factor_is_the_length_ratio_to_a_quarter_power_within_the_span(length, pivot, expected) -> None:
    assert prior.factor(length, pivot) == pytest.approx(expected)


def text(words: int) -> str:
    return " ".join(f"w{i}" for i in range(words))


def test_a_longer_result_overtakes_a_slightly_better_short_one() -> None:
    short, middle, long = result("s", text(5), 1.0), result("m", text(20), 0.9), result("l", text(60), 0.8)
    out = prior.favour_informative([short, middle, long])
    assert [s.node.id for s in out] == ["l", "m", "s"]  # the median is 20 words
    assert [s.fused for s in out] == pytest.approx([0.8 * 3**0.25, 0.9, 1.0 * (1 / 3) ** 0.25])


def test_the_pivot_is_the_median_length_not_the_mean() -> None:
    """One very long memory must not make every other result look short."""
    ordered = [result("a", text(10), 0.9), result("b", text(10), 0.8), result("c", text(500), 0.1)]
    out = prior.favour_informative(ordered)
    assert [s.fused for s in out[:2]] == pytest.approx([0.9, 0.8])  # at the median: untouched


def test_the_median_of_an_even_count_is_the_mean_of_the_middle_two() -> None:
    assert prior.median([100, 10, 30, 20]) == 25 and prior.median([7, 3, 5]) == 5


def test_equal_lengths_change_nothing_and_a_single_result_is_left_alone() -> None:
    ordered = [result("a", text(7), 0.9), result("b", text(7), 0.9), result("c", text(7), 0.3)]
    assert prior.favour_informative(ordered) == ordered  # ties keep their order
    alone = [result("a", text(3), 0.9)]
    assert prior.favour_informative(alone) == alone


def test_recall_tilts_by_length_when_its_lanes_include_the_step(fake_brain: Brain) -> None:
    short = fake_brain.add("walrus tusk")
    long = fake_brain.add("walrus tusk " + text(40))
    fake_brain.add("walrus " + text(12))
    fused_only = {s.node.id: s for s in fake_brain.recall("walrus tusk", lanes=("vector", "keyword")).results}
    tilted = fake_brain.recall("walrus tusk", lanes=("vector", "keyword", "length")).results  # no writing-order steps
    default = {s.node.id: s for s in tilted}
    lengths = {node_id: prior.words(s.node.content) for node_id, s in fused_only.items()}
    pivot = sorted(lengths.values())[1]
    for node_id in (short, long):
        expected = fused_only[node_id].fused * prior.factor(lengths[node_id], pivot)
        assert default[node_id].fused == pytest.approx(expected)
    assert default[short].fused < fused_only[short].fused and default[long].fused > fused_only[long].fused


def test_word_counts_are_remembered_within_a_bound(monkeypatch) -> None:
    monkeypatch.setattr(prior, "_WORDS", {})
    monkeypatch.setattr(prior, "_WORDS_KEPT", 3)
    texts = ["one", "two words", " three  spaced\nwords ", "", "four words in it", "two words"]
    for _ in range(2):  # the second time from what was remembered, the first time cut
        assert [prior.words(t) for t in texts] == [1, 2, 3, 1, 4, 2]
        assert len(prior._WORDS) <= 3  # forgotten all at once when full: memory stays bounded
