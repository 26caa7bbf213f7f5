"""A brain whose metadata cells hold text, nothing, a non-object, a BLOB or half a JSON document (as Go
cerebro and hand edits leave them): every command works on it, and its exports round-trip (issue 12)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cerebro import Brain, metadata, paths
from tests.lifecycle.conftest import load_fixture

TEXT = "c0000002-0000-4000-8000-000000000002"  # 'free text, not JSON'
EMPTY = "e0000001-0000-4000-8000-000000000001"  # ''
LIST = "d0000003-0000-4000-8000-000000000003"  # '[1, 2, 3]'
BLOB = "f0000004-0000-4000-8000-000000000004"  # a BLOB of UTF-8 JSON
BAD_BLOB = "e0000005-0000-4000-8000-000000000005"  # a BLOB that is not UTF-8
HALF = "c0000006-0000-4000-8000-000000000006"  # '{"half": '


@pytest.fixture
def odd(project: Path) -> Path:
    load_fixture("go_v7_odd_metadata", paths.project_brain_path(project))
    return project


def ok(result):
    assert result.exit_code == 0, result
    return result


def test_reading_tolerates_every_odd_value_and_flags_it(odd: Path, cli) -> None:
    with Brain.for_project(odd) as brain:
        assert brain.get(TEXT).node.metadata == {metadata.RAW_KEY: "free text, not JSON"}
        assert brain.get(EMPTY).node.metadata is None
        assert brain.get(LIST).node.metadata == {metadata.RAW_KEY: "[1, 2, 3]"}
        assert brain.get(BLOB).node.metadata == {"promoted_from_node": "x1", "promoted_at": "2026-08-27T10:00:00Z"}
        assert metadata.is_flagged(brain.get(BAD_BLOB).node.metadata)
        assert brain.get(HALF).node.metadata == {metadata.RAW_KEY: '{"half": '}
    data = ok(cli("get", TEXT[:8], "--format", "json")).json()
    assert data["metadata"] == {metadata.RAW_KEY: "free text, not JSON"}
    listed = ok(cli("list", "--format", "json")).json()["memories"]
    assert {n["id"] for n in listed} >= {TEXT, LIST, BLOB, HALF}


@pytest.mark.parametrize(
    "command",
    [
        ["list"],
        ["get", TEXT[:8]],
        ["get", BLOB[:8], "--with-provenance"],
        ["recall", "layout rule"],
        ["recall", "--prime"],
        ["stats"],
        ["gc", "--dry-run"],
        ["gc"],
        ["forget", "--subject", "the"],
        ["consolidate", "--suggest"],
        ["search", "x"],
        ["edge", TEXT[:8], LIST[:8], "supports"],
        ["reinforce", TEXT[:8]],
        ["outcome", TEXT[:8], "--success"],
        ["update", LIST[:8], "--importance", "0.9"],
        ["supersede", LIST[:8], "a better fact"],
        ["export", "--format", "json"],
        ["export", "--format", "jsonl"],
        ["export", "--format", "sql"],
        ["backup"],
    ],
)
def test_every_command_runs(odd: Path, cli, command: list[str]) -> None:
    result = cli(*command)
    assert result.exit_code in (0, 10), result  # 10: `search` needs an embedding provider (this brain has none)
    assert "internal error" not in result.stderr and "JSONDecodeError" not in result.stderr


def test_writes_store_valid_json(odd: Path, cli) -> None:
    ok(cli("update", TEXT[:8], "--metadata", '{"ticket": "HS-049"}'))
    ok(cli("outcome", LIST[:8], "--failure"))
    from cerebro.db.engine import connect_raw

    conn = connect_raw(paths.project_brain_path(odd))
    try:
        rows = dict(conn.execute("SELECT id, metadata FROM nodes WHERE id IN (?, ?)", (TEXT, LIST)).fetchall())
    finally:
        conn.close()
    assert json.loads(rows[TEXT]) == {metadata.RAW_KEY: "free text, not JSON", "ticket": "HS-049"}
    assert (
        json.loads(rows[LIST]) == {metadata.RAW_KEY: "[1, 2, 3]", "outcomes": {"success": 0, "failure": 1}}
        or json.loads(rows[LIST])["outcomes"]["failure"] == 1
    )


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_exports_round_trip(odd: Path, cli, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"brain.{fmt}"
    ok(cli("export", "--format", fmt, "-o", str(out)))
    text = out.read_text()
    assert "b'" not in text
    other = tmp_path / "other"
    other.mkdir()
    ok(cli("init", "-p", str(other), "--embed-provider", "none", "--skip-integration"))
    ok(cli("import", str(out), "-p", str(other)))
    with Brain.for_project(odd) as source, Brain.for_project(other) as copy:
        for node_id in (TEXT, EMPTY, LIST, BLOB, HALF):
            assert copy.get(node_id).node.metadata == source.get(node_id).node.metadata


def test_sql_export_writes_json_text(odd: Path, cli, tmp_path: Path) -> None:
    out = tmp_path / "brain.sql"
    ok(cli("export", "--format", "sql", "-o", str(out)))
    text = out.read_text()
    assert not re.search(r"[(,] ?[bX]'", text)  # no Python bytes repr, no BLOB literal
    assert '{"promoted_from_node": "x1", "promoted_at": "2026-08-27T10:00:00Z"}' in text
    assert json.dumps({metadata.RAW_KEY: "free text, not JSON"}) in text


def test_migrate_realpath_merge_carries_odd_metadata(tmp_path: Path, cli, isolated_home: Path) -> None:
    """A brain keyed through a symlink is merged into the real path's brain — odd metadata included."""
    import hashlib

    real = tmp_path / "real-root" / "alpha"
    real.mkdir(parents=True)
    link_root = tmp_path / "link-root"
    link_root.symlink_to(tmp_path / "real-root")
    old = isolated_home / "projects" / f"{hashlib.sha256(str(link_root / 'alpha').encode()).hexdigest()}.sqlite"
    load_fixture("go_v7_odd_metadata", old)
    Brain.init(paths.project_brain_path(real), embed_provider="none")
    result = ok(cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), project_dir=None))
    assert "Nothing to migrate" not in result.stdout
    with Brain.for_project(real) as brain:
        assert brain.get(TEXT).node.metadata == {metadata.RAW_KEY: "free text, not JSON"}
        assert brain.get(BLOB).node.metadata["promoted_from_node"] == "x1"


def test_consolidate_promote_and_import_into_the_odd_brain(odd: Path, cli, tmp_path: Path) -> None:
    """The writes that read a node's metadata first: consolidation, promotion (which merges metadata into the
    global copy) and an import into this very brain."""
    ok(cli("consolidate", "--into", TEXT[:8], EMPTY[:8]))
    ok(cli("init", "--global", "--embed-provider", "none"))
    ok(cli("promote", BLOB[:8]))
    ok(cli("promote", TEXT[:8]))
    with Brain.for_project(odd) as brain:
        assert brain.get(BLOB).node.metadata["promoted_from_node"] == "x1"  # the BLOB's own keys kept
        assert brain.get(BLOB).node.metadata["promoted_to_global"]
        assert brain.get(TEXT).node.metadata[metadata.RAW_KEY] == "free text, not JSON"
    out = tmp_path / "again.jsonl"
    ok(cli("export", "--format", "jsonl", "-o", str(out)))
    ok(cli("import", str(out), "--on-conflict", "replace"))
    with Brain.for_project(odd) as brain:
        assert brain.get(LIST).node.metadata == {metadata.RAW_KEY: "[1, 2, 3]"}
