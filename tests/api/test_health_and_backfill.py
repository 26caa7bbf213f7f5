"""The brain's health counts (the dashboard's panel) and the backfill of a brain that never had a vector table."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from cerebro import Brain, clock
from cerebro.db.engine import connect_raw


def test_health_counts_active_memories_by_type_their_edges_and_the_cold_ones(fake_brain: Brain, pinned_clock) -> None:
    concept = fake_brain.add("the deploy needs a region", type="concept")
    episode = fake_brain.add("deployed on Monday", type="episode")
    fake_brain.add("deployed on Tuesday", type="episode")
    old = fake_brain.add("run the migration by hand", type="procedure")
    new = fake_brain.supersede(old, "the migration runs on deploy")  # the old one stays, superseded: not active
    fake_brain.add_edge(episode, concept, "supports")
    fake_brain.touch_surfaced([concept, new])  # primed just now: warm; the episodes never were: cold

    health = fake_brain.health()
    assert (health.active_nodes, health.total_edges, health.cold_nodes) == (4, 2, 2)  # supersedes is an edge too
    assert health.nodes_by_type == {"concept": 1, "episode": 2, "procedure": 1}
    assert fake_brain.health(now=clock.now() + timedelta(days=8)).cold_nodes == 4  # a week on, all cold


def test_backfill_embeds_every_active_memory_of_a_brain_without_a_vector_table(fake_brain: Brain) -> None:
    """A brain whose vector table is gone (a Go brain made without one, a hand repair): embed --pending finds its
    active memories from the memories themselves and makes the table."""
    ids = [fake_brain.add(f"memory {i}") for i in range(3)]
    conn = connect_raw(fake_brain.path)
    try:
        conn.execute("DROP TABLE vec_nodes")
    finally:
        conn.close()
    report = fake_brain.embed_pending()
    assert (report.embedded, report.failed, report.remaining) == (3, 0, 0)
    conn = connect_raw(fake_brain.path)
    try:
        assert sorted(r[0] for r in conn.execute("SELECT node_id FROM vec_nodes")) == sorted(ids)
    finally:
        conn.close()


def test_a_backfill_writes_no_vector_of_a_text_changed_or_forgotten_while_it_embedded(
    fake_brain: Brain, monkeypatch
) -> None:
    """`embed --pending` read a batch, embedded it, then wrote: a memory another process updated meanwhile kept the
    vector of its old text for good, and one it forgot got an orphan vector (a review)."""
    changed, forgotten, kept = (fake_brain.add(f"memory {word}") for word in ("postgres", "mysql", "redis"))
    conn = connect_raw(fake_brain.path)
    try:
        conn.execute("DELETE FROM vec_nodes")  # all three pending
    finally:
        conn.close()
    real = fake_brain.handle.embed

    def embed_while_another_writes(texts, **kwargs):
        vectors = real(texts, **kwargs)
        with Brain.open(fake_brain.path) as other:
            other.update(changed, content="memory kubernetes")
            other.forget("memory mysql", apply=True, hard=True)
        return vectors

    monkeypatch.setattr(fake_brain.handle, "embed", embed_while_another_writes)
    report = fake_brain.embed_pending()
    monkeypatch.undo()
    assert report.embedded == 1
    conn = connect_raw(fake_brain.path)
    try:
        assert sorted(r[0] for r in conn.execute("SELECT node_id FROM vec_nodes")) == sorted([kept, changed])
    finally:
        conn.close()
    found = fake_brain.recall("memory kubernetes", lanes=("vector",)).results
    assert found[0].node.id == changed and found[0].similarity > 0.99  # its vector is of its new text
    assert forgotten not in {r.node.id for r in found}


def test_an_update_whose_text_another_process_changed_meanwhile_is_left_pending_and_said(
    fake_brain: Brain, monkeypatch
) -> None:
    """The update found its text already stored and embedded nothing; another process changed the text before the
    write, which put the update's text back and dropped the vector without a word (a review)."""
    node_id = fake_brain.add("memory postgres")
    warnings: list[str] = []
    fake_brain.on_warning = warnings.append
    real = fake_brain.handle.write

    def write_after_another_process(work):  # the update's own write, a moment later
        with Brain.open(fake_brain.path) as other:
            other.update(node_id, content="memory kubernetes")
        return real(work)

    monkeypatch.setattr(fake_brain.handle, "write", write_after_another_process)
    fake_brain.update(node_id, content="memory postgres", importance=0.9)
    monkeypatch.undo()
    assert fake_brain.get(node_id).node.content == "memory postgres"
    assert any("changed by another process meanwhile" in w for w in warnings)
    assert fake_brain.embed_pending().embedded == 1  # pending, and embedded from the text it holds
    found = fake_brain.recall("memory postgres", lanes=("vector",)).results
    assert found[0].node.id == node_id and found[0].similarity > 0.99


def _import_one(brain: Brain, tmp_path, _old: str) -> str:
    path = tmp_path / "one.jsonl"
    node = {"kind": "node", "id": "a1b2c3d4-0000-4000-8000-00000000000a", "type": "concept", "content": "imported"}
    path.write_text(json.dumps(node) + "\n")
    brain.import_file(path)
    return node["id"]


WRITES_THAT_EMBED = {
    "add": lambda brain, tmp_path, old: brain.add("written during the switch"),
    "add_many": lambda brain, tmp_path, old: brain.add_many([{"content": "written during the switch"}])[0],
    "update": lambda brain, tmp_path, old: brain.update(old, content="rewritten during the switch").id,
    "supersede": lambda brain, tmp_path, old: brain.supersede(old, "replaced during the switch"),
    "inbox approve": lambda brain, tmp_path, old: brain.inbox_approve(brain.inbox_add("a candidate")),
    "import": _import_one,
}


@pytest.mark.parametrize("path", sorted(WRITES_THAT_EMBED))
def test_a_switch_of_models_committed_while_a_write_embeds_leaves_its_memory_pending(
    fake_brain_path, monkeypatch, tmp_path, path: str
) -> None:
    """Every write that embeds reads the model *before* embedding: read after (the handle sees another process's
    commit), a `reembed` committed meanwhile named the new model, and the old model's vector went into the new
    table under the new label — two vector spaces mixed, and nothing left for anyone to re-embed (a review; only
    `add` compared the models, and it read the model after embedding too)."""
    with Brain.open(fake_brain_path) as brain:
        old = brain.add("written before the switch")
        warnings: list[str] = []
        brain.on_warning = warnings.append
        handle, switched = brain.handle, []

        def then_switch(real):
            def embedded(*args, **kwargs):
                result = real(*args, **kwargs)
                if not switched and args and args[0] != ["a candidate"]:
                    switched.append(True)
                    with Brain.open(fake_brain_path) as other:  # same width: only the label tells them apart
                        other.reembed(provider="fake", model="fake-other", dims=64)
                return result

            return embedded

        monkeypatch.setattr(handle, "try_embed", then_switch(handle.try_embed))
        monkeypatch.setattr(handle, "embed", then_switch(handle.embed))
        node_id = WRITES_THAT_EMBED[path](brain, tmp_path, old)
        monkeypatch.undo()
        assert switched
        assert brain.stats().pending_embeddings >= 1, (path, warnings)
        with brain.handle.snapshot() as conn:  # upstream's mark of a brain with memories to embed (Go cerebro keeps it)
            assert brain.handle.store.reads.meta(conn, "has_pending_embeddings") == "true"
        assert brain.get(node_id).node.embedding_model != "fake-other"
        brain.embed_pending()
        assert brain.get(node_id).node.embedding_model == "fake-other"
        assert brain.stats().pending_embeddings == 0


def test_embed_pending_stops_when_the_brain_switches_models_under_it(fake_brain_path, monkeypatch) -> None:
    """`embed --pending` stored each batch under the model it read at its start: a `reembed` committed meanwhile got
    the old model's vectors in its new table, labelled as its own."""
    from cerebro.errors import InvalidInput

    with Brain.open(fake_brain_path) as brain:
        node_id = brain.add("pending memory")
        brain.handle.write_raw(lambda conn: conn.execute("DELETE FROM vec_nodes"))
        real = brain.handle.embed

        def embedded(texts):
            vectors = real(texts)
            with Brain.open(fake_brain_path) as other:
                other.reembed(provider="fake", model="fake-other", dims=64)
            return vectors

        monkeypatch.setattr(brain.handle, "embed", embedded)
        with pytest.raises(InvalidInput, match="switched models during this run"):
            brain.embed_pending()
        monkeypatch.undo()
        assert brain.get(node_id).node.embedding_model == "fake-other"  # reembed's own vector, not replaced
        assert brain.stats().pending_embeddings == 0


@pytest.mark.parametrize("dims", [64, 32])
def test_a_memory_embedded_before_another_process_switched_models_is_left_pending(
    fake_brain_path, monkeypatch, dims: int
) -> None:
    """An `add` embedded with the old model and written after another process's `reembed` committed: at the same
    width the old model's vector went into the new table under the wrong label (two vector spaces mixed, and reembed
    saw nothing to do); at another width it failed with "Dimension mismatch" as an internal error (a review)."""
    with Brain.open(fake_brain_path) as brain:
        brain.add("written before the switch")
        warnings: list[str] = []
        brain.on_warning = warnings.append
        real = brain.handle.write_raw

        def write_after_a_switch(work):  # the add's own write, once another process has switched the model
            with Brain.open(fake_brain_path) as other:
                other.reembed(provider="fake", model=f"fake-other-{dims}", dims=dims)
            return real(work)

        monkeypatch.setattr(brain.handle, "write_raw", write_after_a_switch)
        node_id = brain.add("written during the switch")
        monkeypatch.undo()
        assert any("switched models while it was embedded" in w for w in warnings)
        assert brain.stats().pending_embeddings == 1
        assert brain.embed_pending().embedded == 1
        assert brain.get(node_id).node.embedding_model == f"fake-other-{dims}"
        assert brain.stats().pending_embeddings == 0
