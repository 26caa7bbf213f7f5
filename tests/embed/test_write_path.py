"""The write path with the deterministic ``fake`` provider: when the embedder is (not) called, which
vector a node ends up with, and how failures leave a node pending instead of stale."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerebro import Brain
from cerebro.db.engine import connect_raw
from cerebro.embed.base import EmbeddingError
from cerebro.store import vec
from tests.fakes import FakeEmbedder, hashed_vector


@pytest.fixture
def warned(fake_brain):
    messages: list[str] = []
    fake_brain.on_warning = messages.append
    return messages


def stored(path: Path, node_id: str) -> list[float] | None:
    conn = connect_raw(path)
    try:
        return vec.vectors_for(conn, [node_id]).get(node_id)
    finally:
        conn.close()


def row(path: Path, node_id: str) -> tuple[str, str]:
    conn = connect_raw(path)
    try:
        return conn.execute("SELECT embedding_model, status FROM nodes WHERE id = ?", (node_id,)).fetchone()
    finally:
        conn.close()


def flag(path: Path) -> str | None:
    conn = connect_raw(path)
    try:
        found = conn.execute("SELECT value FROM schema_meta WHERE key = 'has_pending_embeddings'").fetchone()
        return found[0] if found else None
    finally:
        conn.close()


def vector_count(path: Path) -> int:
    conn = connect_raw(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM vec_nodes").fetchone()[0]
    finally:
        conn.close()


def test_add_embeds_once(fake_brain, fake_brain_path, warned):
    before = FakeEmbedder.calls
    node_id = fake_brain.add("use uv for the virtualenv")
    assert FakeEmbedder.calls == before + 1
    assert stored(fake_brain_path, node_id) == pytest.approx(hashed_vector("use uv for the virtualenv"), abs=1e-6)
    assert row(fake_brain_path, node_id) == ("fake-hash-64", "active")
    assert warned == []


def test_update_with_identical_content_does_not_embed(fake_brain, fake_brain_path, warned):
    node_id = fake_brain.add("same words")
    vector = stored(fake_brain_path, node_id)
    before = FakeEmbedder.calls
    fake_brain.update(node_id, content="same words")
    fake_brain.update(node_id, content="same words", importance=0.9, subtype="decision", metadata={"k": 1})
    fake_brain.update(node_id, importance=0.1)
    assert FakeEmbedder.calls == before
    assert stored(fake_brain_path, node_id) == vector
    assert row(fake_brain_path, node_id)[0] == "fake-hash-64"
    assert warned == []


def test_update_with_identical_content_while_provider_down_keeps_the_vector(fake_brain, fake_brain_path, warned):
    node_id = fake_brain.add("same words")
    vector = stored(fake_brain_path, node_id)
    FakeEmbedder.broken = True
    fake_brain.update(node_id, content="same words")
    assert stored(fake_brain_path, node_id) == vector
    assert warned == []
    assert flag(fake_brain_path) is None


def test_update_with_new_content_replaces_the_vector(fake_brain, fake_brain_path, warned):
    node_id = fake_brain.add("postgres holds the sessions")
    before = FakeEmbedder.calls
    fake_brain.update(node_id, content="redis holds the sessions now")
    assert FakeEmbedder.calls == before + 1
    assert stored(fake_brain_path, node_id) == pytest.approx(hashed_vector("redis holds the sessions now"), abs=1e-6)
    assert vector_count(fake_brain_path) == 1  # replaced, not added
    assert row(fake_brain_path, node_id)[0] == "fake-hash-64"
    assert fake_brain.search("redis holds the sessions now", threshold=0.0).ids[0] == node_id
    assert warned == []


def test_failed_re_embed_removes_the_stale_vector_and_marks_pending(fake_brain, fake_brain_path, warned):
    node_id = fake_brain.add("the old content")
    other = fake_brain.add("another memory")
    FakeEmbedder.broken = True
    node = fake_brain.update(node_id, content="the new content")
    assert node.content == "the new content"
    assert stored(fake_brain_path, node_id) is None  # the old content's vector must not outlive it
    assert row(fake_brain_path, node_id)[0] == ""
    assert stored(fake_brain_path, other) is not None
    assert flag(fake_brain_path) == "true"
    assert fake_brain.stats().pending_embeddings == 1
    assert len(warned) == 1
    assert warned[0] == (
        f"embedding failed for {node_id[:8]}: fake provider is down (node stored; run `cerebro embed --pending`)"
    )

    FakeEmbedder.broken = False
    report = fake_brain.embed_pending()
    assert (report.embedded, report.failed, report.remaining) == (1, 0, 0)
    assert stored(fake_brain_path, node_id) == pytest.approx(hashed_vector("the new content"), abs=1e-6)
    assert row(fake_brain_path, node_id)[0] == "fake-hash-64"
    assert flag(fake_brain_path) is None


def test_supersede_embeds_the_new_node(fake_brain, fake_brain_path, warned):
    old = fake_brain.add("deploy with fabric")
    before = FakeEmbedder.calls
    new = fake_brain.supersede(old, "deploy with ansible")
    assert FakeEmbedder.calls == before + 1
    assert stored(fake_brain_path, new) == pytest.approx(hashed_vector("deploy with ansible"), abs=1e-6)
    assert row(fake_brain_path, new) == ("fake-hash-64", "active")
    assert row(fake_brain_path, old)[1] == "superseded"
    assert fake_brain.stats().pending_embeddings == 0
    assert warned == []


def test_supersede_with_provider_down_keeps_the_new_node_pending(fake_brain, fake_brain_path, warned):
    old = fake_brain.add("deploy with fabric")
    FakeEmbedder.broken = True
    new = fake_brain.supersede(old, "deploy with ansible")
    assert row(fake_brain_path, new) == ("", "active")
    assert stored(fake_brain_path, new) is None
    assert row(fake_brain_path, old)[1] == "superseded"
    assert len(warned) == 1 and new[:8] in warned[0]
    assert flag(fake_brain_path) == "true"
    assert fake_brain.stats().pending_embeddings == 1  # the superseded one is not pending


def test_add_with_provider_down_stores_and_backfills_in_batches(fake_brain, fake_brain_path, warned):
    FakeEmbedder.broken = True
    ids = [fake_brain.add(f"memory number {i}") for i in range(5)]
    assert len(warned) == 5
    assert all(row(fake_brain_path, i)[0] == "" for i in ids)
    assert fake_brain.stats().pending_embeddings == 5
    assert flag(fake_brain_path) == "true"

    FakeEmbedder.broken = False
    before = FakeEmbedder.calls
    progress: list[tuple[int, int]] = []
    report = fake_brain.embed_pending(batch_size=2, progress=lambda done, total: progress.append((done, total)))
    assert (report.embedded, report.failed, report.remaining) == (5, 0, 0)
    assert FakeEmbedder.calls == before + 3  # batches of 2, 2, 1
    assert progress == [(2, 5), (4, 5), (5, 5)]
    for i, node_id in enumerate(ids):
        assert stored(fake_brain_path, node_id) == pytest.approx(hashed_vector(f"memory number {i}"), abs=1e-6)
        assert row(fake_brain_path, node_id)[0] == "fake-hash-64"
    assert flag(fake_brain_path) is None
    assert fake_brain.stats().pending_embeddings == 0


class Picky(FakeEmbedder):
    """Fails any batch holding the word 'poison'."""

    def embed(self, texts: list[str]) -> list[list[float]]:
        if any("poison" in t for t in texts):
            raise EmbeddingError("cannot embed poison")
        return super().embed(texts)


def test_backfill_keeps_the_flag_while_some_remain(fake_brain, fake_brain_path, warned):
    FakeEmbedder.broken = True
    good = fake_brain.add("a good memory")
    bad = fake_brain.add("a poison memory")
    FakeEmbedder.broken = False
    fake_brain.handle.embedder = Picky()
    report = fake_brain.embed_pending(batch_size=1)
    assert (report.embedded, report.failed, report.remaining) == (1, 1, 1)
    assert report.errors == ["cannot embed poison"]
    assert stored(fake_brain_path, good) is not None
    assert stored(fake_brain_path, bad) is None
    assert flag(fake_brain_path) == "true"


def test_pending_survives_reopen_and_cli_backfill(fake_brain_path, cli):
    with Brain.open(fake_brain_path) as brain:
        brain.on_warning = lambda message: None
        FakeEmbedder.broken = True
        node_id = brain.add("queued for later")
    FakeEmbedder.broken = False
    with Brain.open(fake_brain_path) as brain:
        assert brain.stats().pending_embeddings == 1
    result = cli("embed", "--pending", "--batch-size", "1", "--format", "json")
    assert result.exit_code == 0, result
    assert result.json() == {"embedded": 1, "failed": 0, "remaining": 0, "errors": []}
    assert row(fake_brain_path, node_id)[0] == "fake-hash-64"
    assert flag(fake_brain_path) is None


def test_wrong_width_from_the_embedder_is_never_stored(fake_brain, fake_brain_path, warned):
    fake_brain.handle.embedder = FakeEmbedder("fake-hash-64", 32)
    node_id = fake_brain.add("thirty-two wide")
    assert stored(fake_brain_path, node_id) is None
    assert "32-dimensional" in warned[0] and "64" in warned[0]
    assert flag(fake_brain_path) == "true"


def test_non_finite_vector_is_never_stored(fake_brain, fake_brain_path, warned):
    class NaNs(FakeEmbedder):
        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[float("nan")] * 64 for _ in texts]

    fake_brain.handle.embedder = NaNs()
    node_id = fake_brain.add("not a number")
    assert stored(fake_brain_path, node_id) is None
    assert "non-finite" in warned[0]


def test_backfill_rebuilds_a_missing_vector_table_for_every_active_memory(fake_brain, fake_brain_path, warned):
    """A brain that embeds but lost its vector table (an adopted Go brain written without sqlite-vec, a table
    dropped by hand): ``embed --pending`` recreates it and embeds every active memory, and only those."""
    ids = [fake_brain.add(f"memory number {i}") for i in range(3)]
    gone = fake_brain.add("a superseded memory")
    fake_brain.supersede(gone, "its replacement")
    fake_brain.handle.write(fake_brain.handle.store.vectors.drop_table)
    assert fake_brain.handle.read(fake_brain.handle.store.vectors.exists) is False

    progress: list[tuple[int, int]] = []
    report = fake_brain.embed_pending(batch_size=2, progress=lambda done, total: progress.append((done, total)))
    assert (report.embedded, report.failed, report.remaining) == (4, 0, 0)  # 3 + the replacement
    assert progress == [(2, 4), (4, 4)]
    for i, node_id in enumerate(ids):
        assert stored(fake_brain_path, node_id) == pytest.approx(hashed_vector(f"memory number {i}"), abs=1e-6)
    assert stored(fake_brain_path, gone) is None  # superseded: not active, not embedded
