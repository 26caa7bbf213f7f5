"""import: validated whole, one transaction, skip vs replace, upstream bundles, round trips."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from cerebro import Brain
from tests.conftest import FIXTURES, snapshot
from tests.postgres import TeamBrainRef, connect_brain

UPSTREAM = FIXTURES / "exports" / "upstream_bundle.json"


def _rows(path: Path, table: str, columns: str) -> list[tuple]:
    conn = connect_brain(path, read_only=True)
    try:
        return sorted(conn.execute(f"SELECT {columns} FROM {table}").fetchall(), key=repr)
    finally:
        conn.close()


def _keyword_rows(path: Path) -> list[tuple[str, str]]:
    """(id, text) the keyword lane searches: FTS5's rows in a file; a team brain's active memories themselves."""
    if isinstance(path, TeamBrainRef):
        return _rows(path, "nodes WHERE status = 'active'", "id, content")
    return _rows(path, "nodes_fts_content", "c0, c1")


def _keyword_ids(path: Path) -> list[str]:
    return [r[0] for r in _keyword_rows(path)]


NODE_COLUMNS = (
    "id, type, subtype, content, metadata, importance, access_count, times_reinforced, status, "
    "created_at, last_accessed, last_reinforced, updated_at, provenance_root, origin_actor, "
    "origin_channel, origin_session, origin_host"
)
EDGE_COLUMNS = "source_id, target_id, relation, weight, valid_at, invalid_at"


def test_upstream_bundle_imports_with_timestamps_normalised(cli, fake_brain_path: Path) -> None:
    result = cli("import", str(UPSTREAM), "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = result.json()
    assert (report["nodes_imported"], report["edges_imported"]) == (3, 2)
    assert report["config_imported"] == ["config.prime_limit"]
    assert report["config_refused"] == ["config.rerank_command", "config.rerank_enabled"]
    assert "rerank" in result.stderr  # said out loud
    with Brain.open(fake_brain_path) as brain:
        assert brain.config_get("prime_limit").value == "12"
        assert brain.config_get("rerank_enabled").value == "false"
        stats = brain.stats()
        assert stats.embedding_model == "fake-hash-64"  # the target keeps its own embedding settings
        assert stats.pending_embeddings == 0  # the active node was embedded with the brain's model
        concept = brain.get("a1b2c3d4-0000-4000-8000-000000000001").node
    assert concept.metadata == {"outcomes": {"success": 2}}
    assert concept.origin.actor == "claude-code"
    rows = {
        r[0]: r for r in _rows(fake_brain_path, "nodes", "id, created_at, last_accessed, origin_actor, origin_channel")
    }
    assert rows["a1b2c3d4-0000-4000-8000-000000000001"][1:3] == ("2026-07-01 10:00:00", "2026-08-20 06:30:00")
    assert rows["a1b2c3d4-0000-4000-8000-000000000002"][1] == "2026-06-30 16:45:12"
    # Origin-less nodes are stamped by the import.
    assert rows["a1b2c3d4-0000-4000-8000-000000000002"][3:] == ("import", "import")
    edges = _rows(fake_brain_path, "edges", EDGE_COLUMNS)
    assert (
        "a1b2c3d4-0000-4000-8000-000000000001",
        "a1b2c3d4-0000-4000-8000-000000000003",
        "contradicts",
        0.5,
        "2026-07-02 00:00:00",
        "2026-09-01 00:00:00",
    ) in edges
    # Only active nodes are in the keyword lane.
    assert _keyword_ids(fake_brain_path) == ["a1b2c3d4-0000-4000-8000-000000000001"]


def test_skip_then_replace_counts_and_edges_survive(cli, fake_brain_path: Path, tmp_path: Path) -> None:
    assert cli("import", str(UPSTREAM)).exit_code == 0
    with Brain.open(fake_brain_path) as brain:
        local = brain.add("a local memory")
        brain.add_edge(local, "a1b2c3d4-0000-4000-8000-000000000001", "supports")
    again = cli("import", str(UPSTREAM), "--format", "json").json()
    assert (again["nodes_imported"], again["nodes_skipped"], again["edges_imported"], again["edges_skipped"]) == (
        0,
        3,
        0,
        2,
    )
    changed = json.loads(UPSTREAM.read_text())
    changed["nodes"][0]["content"] = "Refresh tokens rotate every 14 days"
    changed["edges"][1]["weight"] = 0.9
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(changed))
    replaced = cli("import", str(path), "--on-conflict", "replace", "--format", "json").json()
    assert (replaced["nodes_imported"], replaced["edges_imported"]) == (3, 2)
    with Brain.open(fake_brain_path) as brain:
        detail = brain.get("a1b2c3d4-0000-4000-8000-000000000001")
        assert detail.node.content == "Refresh tokens rotate every 14 days"
        relations = {(e.source_id, e.relation, e.weight) for e in detail.edges}
    # The replaced node kept every edge, including the local one the file knows nothing about.
    assert (local, "supports", 1.0) in relations
    assert ("a1b2c3d4-0000-4000-8000-000000000001", "contradicts", 0.9) in relations
    assert [r[1] for r in _keyword_rows(fake_brain_path) if r[0].endswith("0001")] == [
        "Refresh tokens rotate every 14 days"
    ]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_round_trip_recreates_the_same_rows(cli, fmt: str, tmp_path: Path, isolated_home: Path) -> None:
    source_project = tmp_path / "source"
    source_project.mkdir()
    assert cli("init", "--embed-provider", "fake", project_dir=source_project).exit_code == 0
    assert cli("import", str(UPSTREAM), project_dir=source_project).exit_code == 0
    assert cli("config", "set", "gc_threshold", "0.2", project_dir=source_project).exit_code == 0
    assert (
        cli(
            "add", "an original source", "--provenance-root", "--origin-actor", "ada", project_dir=source_project
        ).exit_code
        == 0
    )
    out = tmp_path / f"export.{fmt}"
    assert cli("export", "--format", fmt, "-o", str(out), project_dir=source_project).exit_code == 0
    target_project = tmp_path / "target"
    target_project.mkdir()
    assert cli("init", "--embed-provider", "fake", project_dir=target_project).exit_code == 0
    result = cli("import", str(out), project_dir=target_project)
    assert result.exit_code == 0, result.stderr
    from cerebro import paths

    a, b = paths.project_brain_path(source_project), paths.project_brain_path(target_project)
    assert _rows(a, "nodes", NODE_COLUMNS) == _rows(b, "nodes", NODE_COLUMNS)
    assert _rows(a, "edges", EDGE_COLUMNS) == _rows(b, "edges", EDGE_COLUMNS)
    with Brain.open(b) as brain:
        assert brain.config_get("gc_threshold").value == "0.2"


MALFORMED = {
    "not json": "{nope",
    "truncated": UPSTREAM.read_text()[:400],
    "array": "[1, 2, 3]",
    "version 2": '{"version": "2", "nodes": []}',
    "nodes not a list": '{"version": "1", "nodes": {}}',
    "node not object": '{"version": "1", "nodes": [1]}',
    "missing id": '{"nodes": [{"type": "episode", "content": "x"}]}',
    "bad id": '{"nodes": [{"id": "zz", "type": "episode", "content": "x"}]}',
    "sql in id": '{"nodes": [{"id": "1\'; DROP TABLE nodes; --", "type": "episode", "content": "x"}]}',
    "unknown type": '{"nodes": [{"id": "abcd1234", "type": "memo", "content": "x"}]}',
    "unknown status": '{"nodes": [{"id": "abcd1234", "type": "episode", "status": "gone", "content": "x"}]}',
    "empty content": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "  "}]}',
    "content not text": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": 5}]}',
    "importance high": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x", "importance": 1.5}]}',
    "importance text": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x", "importance": "high"}]}',
    "access negative": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x", "access_count": -1}]}',
    "bad timestamp": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x", "created_at": "yesterday"}]}',
    "metadata list": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x", "metadata": [1]}]}',
    "duplicate node": (
        '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x"}, '
        '{"id": "abcd1234", "type": "episode", "content": "y"}]}'
    ),
    "edge to nowhere": (
        '{"nodes": [], "edges": [{"source_id": "abcd1234", "target_id": "abcd5678", "relation": "supports"}]}'
    ),
    "edge no relation": (
        '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x"}], '
        '"edges": [{"source_id": "abcd1234", "target_id": "abcd1234"}]}'
    ),
    "inverted window": (
        '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x"}], '
        '"edges": [{"source_id": "abcd1234", "target_id": "abcd1234", "relation": "r", '
        '"valid_at": "2026-02-01", "invalid_at": "2026-01-01"}]}'
    ),
    "bad config value": '{"meta": {"config.prime_limit": "-3"}, "nodes": []}',
    "meta not text": '{"meta": {"config.prime_limit": 3}, "nodes": []}',
    "jsonl garbage line": '{"kind": "meta", "key": "config.prime_limit", "value": "5"}\n{broken',
    "jsonl unknown kind": '{"kind": "meta", "key": "config.prime_limit", "value": "5"}\n{"kind": "virus"}',
    "nul in content": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "a\\u0000b"}]}',
    # issue 17: these imported "0 nodes" with exit 0
    "empty file": "",
    "blank lines": "  \n\n",
    "empty object": "{}",
    "no nodes list": '{"edges": []}',
    "metadata NaN": '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x", "metadata": {"n": NaN}}]}',
    "metadata Infinity": (
        '{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x", "metadata": {"n": -Infinity}}]}'
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_input_is_one_line_and_changes_nothing(cli, fake_brain_path: Path, tmp_path: Path, name: str) -> None:
    with Brain.open(fake_brain_path) as brain:
        brain.add("already here")
    before = snapshot(fake_brain_path)
    path = tmp_path / "bad.json"
    path.write_text(MALFORMED[name])
    result = cli("import", str(path))
    assert result.exit_code == 2, (name, result.stderr)
    assert result.stderr.startswith("cerebro: error:") and result.stderr.count("\n") == 1
    assert result.stdout == ""
    assert snapshot(fake_brain_path) == before


def test_bad_conflict_policy_and_missing_file(cli, fake_brain_path: Path, tmp_path: Path) -> None:
    assert cli("import", str(UPSTREAM), "--on-conflict", "merge").exit_code == 2
    assert cli("import", str(tmp_path / "missing.json")).exit_code == 2
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert cli("import", str(binary)).exit_code == 2


def _source_with_archive(cli, tmp_path: Path) -> Path:
    from cerebro import paths

    project = tmp_path / "source"
    project.mkdir()
    assert cli("init", "--embed-provider", "fake", project_dir=project).exit_code == 0
    assert cli("import", str(UPSTREAM), project_dir=project).exit_code == 0
    assert cli("add", "a note to archive later", project_dir=project).exit_code == 0
    assert cli("forget", "--subject", "archive later", "--apply", project_dir=project).exit_code == 0
    return paths.project_brain_path(project)


ARCHIVE_COLUMNS = "id, type, content, status, archive_reason, original_created_at, archived_at"


def test_jsonl_round_trip_carries_the_archive(cli, tmp_path: Path) -> None:
    from cerebro import paths

    source = _source_with_archive(cli, tmp_path)
    assert len(_rows(source, "nodes_archive", ARCHIVE_COLUMNS)) == 1
    out = tmp_path / "brain.jsonl"
    assert cli("export", "--format", "jsonl", "-o", str(out), project_dir=tmp_path / "source").exit_code == 0
    target = tmp_path / "target"
    target.mkdir()
    assert cli("init", "--embed-provider", "fake", project_dir=target).exit_code == 0
    assert cli("import", str(out), project_dir=target).exit_code == 0
    assert _rows(source, "nodes_archive", ARCHIVE_COLUMNS) == _rows(
        paths.project_brain_path(target), "nodes_archive", ARCHIVE_COLUMNS
    )


def test_sql_dump_runs_in_sqlite3_and_the_next_open_rebuilds_keywords(cli, tmp_path: Path) -> None:

    from cerebro import paths

    source = _source_with_archive(cli, tmp_path)
    dump = tmp_path / "brain.sql"
    assert cli("export", "--format", "sql", "-o", str(dump), project_dir=tmp_path / "source").exit_code == 0
    target_project = tmp_path / "target"
    target_project.mkdir()
    assert cli("init", "--embed-provider", "fake", project_dir=target_project).exit_code == 0
    target = paths.project_brain_path(target_project)
    conn = sqlite3.connect(target)  # the standard library's driver, as a user would
    conn.executescript(dump.read_text())
    conn.close()
    for table, columns in (("nodes", NODE_COLUMNS), ("edges", EDGE_COLUMNS), ("nodes_archive", ARCHIVE_COLUMNS)):
        assert _rows(source, table, columns) == _rows(target, table, columns), table
    # No vector travels in a dump, so no node may claim the source's model (it would pass as embedded).
    assert {m for (m,) in _rows(source, "nodes", "embedding_model")} != {""}
    assert {m for (m,) in _rows(target, "nodes", "embedding_model")} == {""}
    with Brain.open(target) as brain:
        stats = brain.stats()
        assert stats.pending_embeddings == stats.active_nodes == 1  # no vectors travel in a dump
        assert brain.config_get("prime_limit").value == "12"
        assert [r.node.id for r in brain.recall("refresh tokens rotate")][:1] == [
            "a1b2c3d4-0000-4000-8000-000000000001"
        ]
    fts = _rows(target, "nodes_fts_content", "c0")
    assert [r[0] for r in fts] == ["a1b2c3d4-0000-4000-8000-000000000001"]
    assert "needs_fts_rebuild" not in dict(_rows(target, "schema_meta", "key, value"))


def test_sqlite_export_round_trip(cli, tmp_path: Path) -> None:
    source = _source_with_archive(cli, tmp_path)
    copy = tmp_path / "copy.sqlite"
    assert cli("export", "--format", "sqlite", "-o", str(copy), project_dir=tmp_path / "source").exit_code == 0
    for table, columns in (("nodes", NODE_COLUMNS), ("edges", EDGE_COLUMNS), ("nodes_archive", ARCHIVE_COLUMNS)):
        assert _rows(source, table, columns) == _rows(copy, table, columns), table
    with Brain.open(copy) as brain:
        assert brain.stats().pending_embeddings == 0  # the vectors came along


def test_a_file_refused_after_parsing_writes_no_config_either(cli, fake_brain_path: Path, tmp_path: Path) -> None:
    """Every part of an import is one transaction: a bundle whose config is valid but whose edge points at
    nothing is refused whole — its config keys included."""
    node = {
        "id": "c0000001-0000-4000-8000-000000000001",
        "type": "concept",
        "content": "a fact",
        "created_at": "2026-08-01T10:00:00Z",
    }
    edge = {"source_id": node["id"], "target_id": "d0000009-0000-4000-8000-000000000009", "relation": "supports"}
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"version": 1, "meta": {"config.prime_limit": "3"}, "nodes": [node], "edges": [edge]}))
    before = snapshot(fake_brain_path)
    result = cli("import", str(bundle))
    assert result.exit_code == 2 and "in neither the file nor the brain" in result.stderr
    assert snapshot(fake_brain_path) == before
    with Brain.open(fake_brain_path) as brain:
        assert brain.config_get("prime_limit").source == "default"


def test_a_byte_order_mark_is_not_content(cli, fake_brain_path: Path, tmp_path: Path) -> None:
    """Some editors save UTF-8 with a BOM; it used to make the file unreadable as a bundle or jsonl."""
    bundle = tmp_path / "bom.json"
    bundle.write_bytes(b"\xef\xbb\xbf" + b'{"nodes": [{"id": "abcd1234", "type": "episode", "content": "x"}]}')
    lines = tmp_path / "bom.jsonl"
    lines.write_bytes(b"\xef\xbb\xbf" + b'{"kind": "node", "id": "abcd5678", "type": "episode", "content": "y"}\n')
    for path in (bundle, lines):
        result = cli("import", str(path), "--format", "json")
        assert result.exit_code == 0, result
        assert result.json()["nodes_imported"] == 1


def test_settings_this_cerebro_does_not_know_are_reported_not_stored(cli, fake_brain_path: Path, tmp_path) -> None:
    """Issue 17: an import stored any `config.*` key, which `config set` refuses; now such keys are listed as
    refused (with the reranker's), and the known ones are imported."""
    bundle = tmp_path / "b.json"
    bundle.write_text(json.dumps({"meta": {"config.prime_limit": "7", "config.made_up": "x"}, "nodes": []}))
    result = cli("import", str(bundle), "--format", "json")
    assert result.exit_code == 0, result
    report = result.json()
    assert (report["config_imported"], report["config_refused"]) == (["config.prime_limit"], ["config.made_up"])
    with Brain.open(fake_brain_path) as brain:
        assert brain.config_value("prime_limit") == 7
        assert "made_up" not in {e.key for e in brain.config_list()}
    assert "config.made_up" in result.stderr  # said, not silently dropped
    with connect_brain(fake_brain_path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM schema_meta WHERE key = 'config.made_up'").fetchone() == (0,)


def test_only_a_regular_file_is_read(cli, fake_brain_path: Path, tmp_path: Path) -> None:
    """Issue 17: `import /dev/zero` grew without bound (the size cap read the file's size: 0) and a FIFO blocked
    forever; neither is an export."""
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    before = snapshot(fake_brain_path)
    for path in ("/dev/zero", str(fifo), str(tmp_path)):
        result = cli("import", path)
        assert result.exit_code == 2 and "not a regular file" in result.stderr, path
    assert snapshot(fake_brain_path) == before


@pytest.mark.file_only
def test_importing_new_memories_drops_no_keyword_rows(fake_brain_path: Path, tmp_path: Path) -> None:
    """Dropping a memory's keyword row is a scan of the keyword index (its memory id is not indexed): done for every
    imported memory, a large import was quadratic and held the write lock for seconds (6,000 records: 10.5 s). A
    memory new to the brain has no row to drop; one already there has (the replace test above)."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    source = tmp_path / "source.sqlite"
    Brain.init(source, embed_provider="fake")
    with Brain.open(source) as brain:
        brain.add_many([{"content": f"memory number {i} about topic {i % 7}"} for i in range(40)])
        lines = brain.export("jsonl")
    exported = tmp_path / "export.jsonl"
    exported.write_text("\n".join(lines) + "\n")
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append(statement)

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        with Brain.open(fake_brain_path) as brain:
            report = brain.import_file(exported)
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    assert report["nodes_imported"] == 40
    assert any(s.startswith("INSERT INTO nodes_fts") for s in statements)  # the listener saw the import's writes
    assert not [s for s in statements if "DELETE FROM nodes_fts" in s]
    assert len(_keyword_ids(fake_brain_path)) == 40


@pytest.mark.file_only
def test_archiving_a_memory_that_is_not_active_looks_for_no_keyword_row(fake_brain_path: Path) -> None:
    """Only active memories are indexed: archiving a superseded one (forget, gc) looked for its keyword row with a scan
    of the whole keyword index (ADR 0066), once a memory. Its own rowid is looked at, nothing else."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    with Brain.open(fake_brain_path) as brain:
        old = brain.add("the kettle lives in the cupboard")
        brain.supersede(old, "the kettle lives on the shelf")
        statements: list[str] = []

        def seen(conn, cursor, statement, parameters, context, executemany) -> None:
            statements.append(statement)

        event.listen(Engine, "before_cursor_execute", seen)
        try:
            report = brain.forget("cupboard", apply=True)
        finally:
            event.remove(Engine, "before_cursor_execute", seen)
    assert [m["id"] for m in report.matched] == [old] and report.applied
    assert any("DELETE FROM nodes_fts" in s for s in statements)
    assert not [s for s in statements if "nodes_fts_content" in s]
