"""The global brain: promote, and recall across project and global (global × 0.7, project wins)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cerebro import Brain, clock, paths
from cerebro.brain.promotion import GLOBAL_WEIGHT, merge
from cerebro.errors import BrainNotFound, InvalidInput
from cerebro.values import Origin, RecallResult
from tests.helpers import scored
from tests.postgres import TeamBrainRef


@pytest.fixture
def global_path(isolated_home):
    path = paths.global_brain_path()
    Brain.init(path, embed_provider="fake")
    return path


def test_promote_needs_a_global_brain(cli, fake_brain_path, brain_snapshot) -> None:
    with Brain.open(fake_brain_path) as brain:
        node_id = brain.add("a fact")
    before = brain_snapshot(fake_brain_path)
    result = cli("promote", node_id)
    assert result.exit_code == 4
    assert "cerebro init --global" in result.stderr
    assert brain_snapshot(fake_brain_path) == before
    with Brain.open(fake_brain_path) as brain, pytest.raises(BrainNotFound):
        brain.promote(node_id)


def test_promote_copies_with_provenance_metadata_and_origin(fake_brain_path, global_path) -> None:
    clock.set_now(datetime(2026, 5, 1, 8, 0, tzinfo=UTC))
    with Brain.open(fake_brain_path) as brain:
        source = brain.add(
            "Use uv for Python envs",
            type="procedure",
            subtype="tooling",
            importance=0.9,
            metadata={"k": "v"},
            origin=Origin("claude-code", "skill", "s-1", "laptop"),
        )
        global_id = brain.promote(source, content="Prefer uv to manage Python environments")
        marked = brain.get(source).node
    assert global_id != source
    assert marked.metadata == {"k": "v", "promoted_to_global": global_id}
    with Brain.open(global_path) as other:
        copy = other.get(global_id).node
        assert other.stats().pending_embeddings == 0  # embedded in the global brain
    assert copy.content == "Prefer uv to manage Python environments"
    assert (copy.type, copy.subtype, copy.importance) == ("procedure", "tooling", 0.5)
    assert copy.metadata == {
        "k": "v",
        "promoted_from_node": source,
        # the brain file's stem, or the team project's key
        "promoted_from_project": (
            fake_brain_path.project if isinstance(fake_brain_path, TeamBrainRef) else fake_brain_path.stem
        ),
        "promoted_at": "2026-05-01T08:00:00Z",
    }
    assert copy.origin == Origin("claude-code", "skill", "s-1", "laptop")


def test_promoting_again_updates_the_copy_rather_than_making_another(fake_brain_path, global_path) -> None:
    """Upstream copies again: two global copies, the source naming only the second, the second's metadata naming the
    first (the source's promoted_to_global copied along), and recall --global showing the same text three times."""
    with Brain.open(fake_brain_path) as brain:
        source = brain.add("Use uv for Python envs", type="procedure")
        first = brain.promote(source)
        assert brain.promote(source) == first
        assert brain.promote(source, content="Prefer uv for every Python environment") == first
        assert brain.promote(source) == first  # without a content: the generalised wording stays
        assert brain.get(source).node.metadata == {"promoted_to_global": first}
    with Brain.open(global_path) as other:
        (copy,) = other.list()
        assert (copy.id, copy.content) == (first, "Prefer uv for every Python environment")
        assert "promoted_to_global" not in (copy.metadata or {})
        other.forget("Prefer uv", apply=True)  # forgotten there: promoted anew
    with Brain.open(fake_brain_path) as brain:
        again = brain.promote(source)
        assert again != first and brain.get(source).node.metadata == {"promoted_to_global": again}
    with Brain.open(global_path) as other:
        assert "promoted_to_global" not in (other.get(again).node.metadata or {})  # the source's mark not copied


def test_a_memory_that_is_no_longer_current_is_not_promoted(fake_brain_path, global_path) -> None:
    with Brain.open(fake_brain_path) as brain:
        old = brain.add("the service listens on port 8080")
        brain.supersede(old, "the service listens on port 9090")
        with pytest.raises(InvalidInput, match="is superseded: only an active memory is promoted"):
            brain.promote(old)
    with Brain.open(global_path) as other:
        assert other.list() == []


def test_cli_promote_positional_content(cli, fake_brain_path, global_path) -> None:
    with Brain.open(fake_brain_path) as brain:
        node_id = brain.add("original words")
    result = cli("promote", node_id, "general words", "--format", "json")
    assert result.exit_code == 0, result.stderr
    with Brain.open(global_path) as other:
        assert other.get(result.json()["id"]).node.content == "general words"
    with Brain.open(fake_brain_path) as brain:
        brain_id = brain.add("other original words")
    second = cli("promote", brain_id, "--content", "other general words", "--format", "json")
    assert second.exit_code == 0, second.stderr
    with Brain.open(global_path) as other:
        assert other.get(second.json()["id"]).node.content == "other general words"
    usage = cli("promote", "--help").stdout
    assert usage.count("--content") == 1  # one parameter, positional or named


def _scored(brain, query):
    return {r.node.id: r for r in brain.recall(query)}


def test_recall_global_weights_global_results(fake_brain_path, global_path, pinned_clock) -> None:
    with Brain.open(fake_brain_path) as brain:
        local = brain.add("zebra stripes in the project")
    with Brain.open(global_path) as other:
        remote = other.add("zebra stripes everywhere")
        alone = _scored(other, "zebra stripes")[remote]
    with Brain.open(fake_brain_path) as brain:
        merged = brain.recall_with_global("zebra stripes")
    by_id = {r.node.id: r for r in merged.results}
    assert by_id[local].store == "project" and by_id[remote].store == "global"
    assert by_id[remote].score == pytest.approx(alone.score * GLOBAL_WEIGHT)
    assert by_id[remote].fused == pytest.approx(alone.fused * GLOBAL_WEIGHT)
    assert by_id[remote].parts.score == by_id[remote].score  # --explain's score is the one shown
    project_alone = [r.node.id for r in brain_results(fake_brain_path, "zebra stripes")]
    assert [r.node.id for r in merged.results if r.store == "project"] == project_alone  # its own order kept


def brain_results(path, query):
    with Brain.open(path) as brain:
        return brain.recall(query).results


def test_project_copy_wins_a_duplicate_id() -> None:
    from cerebro.values import Node, ScoredNode

    def node(node_id: str, content: str) -> Node:
        return Node(
            node_id, "concept", None, content, None, 0.5, 0.02, 0, 0, "active", "", None, None, None, None, None, False
        )

    project = RecallResult("q", [ScoredNode(node("a" * 36, "project copy"), 0.2, 0.1, fused=0.2)], "hybrid", "off")
    other = RecallResult(
        "q",
        [
            ScoredNode(node("a" * 36, "global copy"), 0.9, 0.9, fused=0.9),
            ScoredNode(node("b" * 36, "global only"), 0.5, 0.5, fused=0.5),
        ],
        "hybrid",
        "off",
    )
    merged = merge(project, other, limit=10)
    assert [(r.node.content, r.store) for r in merged.results] == [
        ("global only", "global"),
        ("project copy", "project"),
    ]
    assert merged.results[0].fused == pytest.approx(0.5 * GLOBAL_WEIGHT)


def _result(node_id: str, score: float, fused: float):
    return scored(node_id, node_id, fused, score)


def test_a_weak_global_match_does_not_outrank_strong_project_ones() -> None:
    """A fused value is scaled within its own brain's results: the global brain's best match — however poor — has
    one of ~1.0, ×0.7 above most of the project's. Each brain keeps its order; between them the composite score
    (the global one ×0.7) decides, as upstream merges (ADR 0060)."""
    project = RecallResult(
        "q", [_result("p1", 0.67, 0.92), _result("p2", 0.64, 0.56), _result("p3", 0.30, 0.20)], "hybrid", "off"
    )
    other = RecallResult("q", [_result("g1", 0.62, 1.0), _result("g2", 0.90, 0.10)], "hybrid", "off")
    merged = merge(project, other, limit=10)
    # g1: 0.62 × 0.7 = 0.434, below p1 and p2, above p3; g2 (0.63) stays behind g1, its own brain's better result.
    assert [r.node.id for r in merged.results] == ["p1", "p2", "g1", "g2", "p3"]
    assert [r.node.id for r in merge(project, other, limit=3).results] == ["p1", "p2", "g1"]
    tie = merge(
        RecallResult("q", [_result("p", 0.35, 0.1)], "hybrid", "off"),
        RecallResult("q", [_result("g", 0.5, 1.0)], "hybrid", "off"),
        limit=5,
    )
    assert [r.node.id for r in tie.results] == ["p", "g"]  # 0.35 = 0.5 × 0.7: the project wins a tie


def test_global_brain_on_another_model(fake_brain_path, isolated_home, cli) -> None:
    """The project is on the fake 64-dim model, the global brain on 'none': each embeds for itself."""
    Brain.init(paths.global_brain_path(), embed_provider="none")
    with Brain.open(fake_brain_path) as brain:
        brain.add("kettle descaling schedule")
        promoted = brain.promote(brain.add("kettle uses citric acid"))
    result = cli("recall", "kettle", "--global", "--format", "json")
    assert result.exit_code == 0, result.stderr
    stores = {item["id"]: item["store"] for item in result.json()["results"]}
    assert stores[promoted] == "global"  # found by the global brain's keyword lane
    assert "project" in stores.values()


def test_cli_recall_global_touches_each_brain(cli, fake_brain_path, global_path) -> None:
    with Brain.open(fake_brain_path) as brain:
        local = brain.add("walrus tusks")
    with Brain.open(global_path) as other:
        remote = other.add("walrus habitat")
    assert cli("recall", "walrus", "--global").exit_code == 0
    with Brain.open(fake_brain_path) as brain:
        assert brain.get(local).node.access_count == 1
    with Brain.open(global_path) as other:
        assert other.get(remote).node.access_count == 1
