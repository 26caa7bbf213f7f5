"""Import embeds what it writes, in batches of 64 outside the write transaction: what it reports (progress,
pending embeddings) and what it leaves (vectors, the pending flag) when the provider works, fails, or is none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cerebro import Brain
from cerebro.errors import InvalidInput
from tests.fakes import FakeEmbedder


def _bundle(tmp_path: Path, count: int, *, first: int = 0) -> Path:
    nodes = [
        {"id": f"abcd{i:04d}", "type": "episode", "content": f"imported memory number {i}"}
        for i in range(first, first + count)
    ]
    path = tmp_path / f"bundle-{first}-{count}.json"
    path.write_text(json.dumps({"nodes": nodes}))
    return path


def _brain(tmp_path: Path, provider: str) -> Path:
    path = tmp_path / f"{provider}.db"
    Brain.init(path, embed_provider=provider)
    return path


def test_import_embeds_in_batches_of_64_and_reports_each(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    with Brain.open(_brain(tmp_path, "fake")) as brain:
        counts = brain.import_file(_bundle(tmp_path, 130), progress=lambda done, total: calls.append((done, total)))
        stats = brain.stats()
    assert calls == [(64, 130), (128, 130), (130, 130)]
    assert counts["nodes_imported"] == 130 and counts["pending_embeddings"] == 0
    assert stats.embedded_nodes == 130 and stats.pending_embeddings == 0


def test_skip_embeds_only_the_nodes_it_writes(tmp_path: Path) -> None:
    brain_file = _brain(tmp_path, "fake")
    with Brain.open(brain_file) as brain:
        brain.import_file(_bundle(tmp_path, 2))
        calls: list[tuple[int, int]] = []
        counts = brain.import_file(_bundle(tmp_path, 5), progress=lambda done, total: calls.append((done, total)))
    assert (counts["nodes_imported"], counts["nodes_skipped"]) == (3, 2)
    assert calls == [(3, 3)]  # the two already there are neither written nor embedded


def test_a_failing_provider_leaves_every_memory_pending_and_says_how_many(tmp_path: Path) -> None:
    FakeEmbedder.broken = True
    try:
        with Brain.open(_brain(tmp_path, "fake")) as brain:
            counts = brain.import_file(_bundle(tmp_path, 70))
            stats = brain.stats()
    finally:
        FakeEmbedder.broken = False
    assert counts["nodes_imported"] == 70 and counts["pending_embeddings"] == 70
    assert stats.pending_embeddings == 70 and stats.embedded_nodes == 0
    with Brain.open(tmp_path / "fake.db") as brain:
        assert brain.get("abcd0000").node.embedding_model == ""  # names no model until it has a vector
        with brain.handle.snapshot() as conn:
            from cerebro.store import reads

            assert reads.meta(conn, "has_pending_embeddings") == "true"  # what `embed --pending` looks for


def test_without_a_provider_nothing_is_embedded_or_pending(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    with Brain.open(_brain(tmp_path, "none")) as brain:
        counts = brain.import_file(_bundle(tmp_path, 3), progress=lambda done, total: calls.append((done, total)))
    assert counts["pending_embeddings"] == 0 and calls == []


def test_an_unknown_conflict_policy_is_refused_naming_each(tmp_path: Path) -> None:
    with Brain.open(_brain(tmp_path, "none")) as brain, pytest.raises(InvalidInput) as refused:
        brain.import_file(_bundle(tmp_path, 1), on_conflict="merge")
    assert str(refused.value) == "--on-conflict must be skip, replace or newer"


def test_replace_re_embeds_the_nodes_it_rewrites(tmp_path: Path) -> None:
    with Brain.open(_brain(tmp_path, "fake")) as brain:
        brain.import_file(_bundle(tmp_path, 3))
        counts = brain.import_file(_bundle(tmp_path, 3), on_conflict="replace")
        stats = brain.stats()
    assert counts["nodes_imported"] == 3
    assert (stats.embedded_nodes, stats.pending_embeddings) == (3, 0)  # rewritten, and embedded again


def test_replacing_with_the_provider_down_drops_the_old_vectors(tmp_path: Path) -> None:
    with Brain.open(_brain(tmp_path, "fake")) as brain:
        brain.import_file(_bundle(tmp_path, 3))
        FakeEmbedder.broken = True
        try:
            brain.import_file(_bundle(tmp_path, 3), on_conflict="replace")
        finally:
            FakeEmbedder.broken = False
        stats = brain.stats()
    assert (stats.embedded_nodes, stats.pending_embeddings) == (0, 3)  # a vector of the old content must go


def test_an_imported_subtype_is_in_the_keyword_lane(tmp_path: Path) -> None:
    path = tmp_path / "sub.json"
    path.write_text(
        json.dumps(
            {"nodes": [{"id": "abcd1234", "type": "concept", "subtype": "zeppelin", "content": "airships need helium"}]}
        )
    )
    with Brain.open(_brain(tmp_path, "none")) as brain:
        brain.import_file(path)
        assert [r.node.id for r in brain.recall("zeppelin").results] == ["abcd1234"]


def test_the_command_says_how_many_wait_for_their_embedding_and_what_to_run(cli, project, tmp_path: Path) -> None:
    from cerebro import paths

    Brain.init(paths.project_brain_path(project), embed_provider="fake")
    FakeEmbedder.broken = True
    try:
        result = cli("import", str(_bundle(tmp_path, 3)))
    finally:
        FakeEmbedder.broken = False
    assert result.exit_code == 0
    assert result.stdout.strip().endswith("; 3 awaiting embedding (run `cerebro embed --pending`)")
    assert "awaiting" not in cli("import", str(_bundle(tmp_path, 2, first=10))).stdout  # embedded: nothing to say
