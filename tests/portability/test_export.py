"""export (json, jsonl, sqlite) and backup."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cerebro import Brain, clock
from cerebro.values import Origin
from tests.postgres import connect_brain


@pytest.fixture
def varied(fake_brain_path: Path) -> dict[str, str]:
    clock.set_now(datetime(2026, 4, 1, 9, 30, tzinfo=UTC))
    with Brain.open(fake_brain_path) as brain:
        ids = {
            "concept": brain.add(
                "JWT rotates weekly",
                type="concept",
                subtype="auth",
                importance=0.8,
                metadata={"k": [1, "é"]},
                provenance_root=True,
                origin=Origin("claude-code", "skill", "s1", "laptop"),
            ),
            "ep1": brain.add("episode one"),
            "ep2": brain.add("episode two"),
            "old": brain.add("old fact", type="concept"),
        }
        ids["new"] = brain.supersede(ids["old"], "new fact")
        brain.consolidate(ids["concept"], [ids["ep1"]])
        brain.add_edge(
            ids["concept"], ids["ep2"], "supports", weight=0.4, valid_at="2026-01-01", invalid_at="2026-12-31T00:00:00Z"
        )
        brain.config_set("prime_limit", "7")
    return ids


def test_json_bundle_is_upstreams_shape_with_every_status(cli, varied) -> None:
    result = cli("export")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"version", "exported_at", "meta", "nodes", "edges"}
    assert data["version"] == "1" and data["meta"]["config.prime_limit"] == "7"
    assert data["exported_at"] == "2026-04-01T09:30:00Z"  # the (pinned) time of the export
    statuses = {n["id"]: n["status"] for n in data["nodes"]}
    assert statuses[varied["old"]] == "superseded" and statuses[varied["ep1"]] == "consolidated"
    concept = next(n for n in data["nodes"] if n["id"] == varied["concept"])
    assert concept["metadata"] == {"k": [1, "é"]}
    assert concept["provenance_root"] is True
    assert (concept["origin_actor"], concept["origin_channel"]) == ("claude-code", "skill")
    assert concept["created_at"] == "2026-04-01T09:30:00Z"
    episode = next(n for n in data["nodes"] if n["id"] == varied["ep2"])
    assert "subtype" not in episode and "metadata" not in episode  # omitempty, as upstream
    windowed = next(e for e in data["edges"] if e["relation"] == "supports")
    assert (windowed["weight"], windowed["valid_at"], windowed["invalid_at"]) == (
        0.4,
        "2026-01-01T00:00:00Z",
        "2026-12-31T00:00:00Z",
    )
    assert {e["relation"] for e in data["edges"]} == {"supports", "supersedes", "derived_from"}
    assert all("metadata" not in e for e in data["edges"])  # none has any: omitempty, as upstream


def test_jsonl_is_sorted_and_byte_stable(cli, varied, tmp_path: Path) -> None:
    first = cli("export", "--format", "jsonl").stdout
    clock.set_now(datetime(2027, 1, 1, tzinfo=UTC))  # a later export time changes nothing
    second = cli("export", "--format", "jsonl").stdout
    assert first == second
    records = [json.loads(line) for line in first.splitlines()]
    kinds = [r["kind"] for r in records]
    assert kinds == sorted(kinds, key=["meta", "node", "edge", "archive"].index)
    node_ids = [r["id"] for r in records if r["kind"] == "node"]
    assert node_ids == sorted(node_ids)
    assert all("id" not in r for r in records if r["kind"] == "edge")
    for line in first.splitlines():  # compact, keys sorted, UTF-8 as it is: lines diff cleanly in git
        assert line == json.dumps(json.loads(line), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert '"metadata":{"k":[1,"é"]}' in first
    out = tmp_path / "brain.jsonl"
    assert cli("export", "--format", "jsonl", "-o", str(out)).exit_code == 0
    assert out.read_text() == first
    assert (out.stat().st_mode & 0o777) == 0o600


def test_export_refuses_bad_format_missing_output_and_overwrites(cli, varied, tmp_path: Path) -> None:
    assert cli("export", "--format", "xml").exit_code == 2
    assert cli("export", "--format", "sqlite").exit_code == 2
    existing = tmp_path / "taken.json"
    existing.write_text("keep me")
    result = cli("export", "-o", str(existing))
    assert result.exit_code == 2 and existing.read_text() == "keep me"


def _forced(cli, tmp_path: Path, format: str) -> Path:
    """An export over an older one: refused, then replaced in one step with --force; the new file's path."""
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / f"brain.{format}"
    out.write_text("an older export")
    refused = cli("export", "--format", format, "-o", str(out))
    assert refused.exit_code == 2 and "--force" in refused.stderr and out.read_text() == "an older export"
    assert cli("export", "--format", format, "-o", str(out), "--force").exit_code == 0
    assert (out.stat().st_mode & 0o777) == 0o600
    assert sorted(p.name for p in folder.iterdir()) == [out.name]  # no partial file left beside it
    return out


@pytest.mark.parametrize("format", ["jsonl", "json", "sql"])
def test_force_replaces_an_existing_export_in_one_step(cli, varied, tmp_path: Path, format: str) -> None:
    out = _forced(cli, tmp_path, format)
    assert "an older export" not in out.read_text() and out.stat().st_size > 100


@pytest.mark.file_only  # a copy of the brain file
def test_force_replaces_an_existing_sqlite_copy_in_one_step(cli, varied, tmp_path: Path) -> None:
    copy = sqlite3.connect(_forced(cli, tmp_path, "sqlite"))
    assert copy.execute("SELECT COUNT(*) FROM nodes").fetchone()[0] == 5
    copy.close()


def test_force_replaces_a_planted_link_and_never_writes_through_it(cli, varied, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("not an export")
    link = tmp_path / "brain.jsonl"
    link.symlink_to(victim)
    refused = cli("export", "--format", "jsonl", "-o", str(link))
    assert refused.exit_code == 2 and victim.read_text() == "not an export"  # a dangling or live link is "taken"
    assert cli("export", "--format", "jsonl", "-o", str(link), "--force").exit_code == 0
    assert not link.is_symlink() and victim.read_text() == "not an export"


def test_an_export_that_fails_half_way_leaves_nothing(cli, varied, tmp_path: Path, monkeypatch) -> None:
    from cerebro import paths

    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / "brain.jsonl"
    original = paths.written_in_one_step

    def failing(target: Path, *, overwrite: bool = False):
        class Boom(Exception):
            pass

        with original(target, overwrite=overwrite) as partial:
            partial.write_text("half")
            raise Boom("disk full")

    monkeypatch.setattr(paths, "written_in_one_step", failing)
    assert cli("export", "--format", "jsonl", "-o", str(out)).exit_code != 0
    assert list(folder.iterdir()) == []


@pytest.mark.file_only  # a backup is a copy of the brain file
def test_backup_defaults_to_the_backups_folder(cli, varied, isolated_home: Path, fake_brain_path: Path) -> None:
    result = cli("backup", "--format", "json")
    assert result.exit_code == 0, result.stderr
    target = Path(result.json()["backup"])
    assert target.parent == isolated_home / "backups"
    assert (target.stat().st_mode & 0o777) == 0o600
    copy = sqlite3.connect(target)
    assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert copy.execute("SELECT COUNT(*) FROM nodes").fetchone()[0] == 5
    copy.close()


def _writer(path: str, home: str, writing, stop, index: int) -> None:
    os.environ["CEREBRO_HOME"] = home
    with Brain.open(path) as brain:
        n = 0
        while not stop.is_set():
            brain.add(f"writer {index} memory {n}")
            n += 1
            writing.release()  # one commit more


@pytest.mark.file_only  # a copy of the brain file
@pytest.mark.slow
def test_sqlite_export_while_four_writers_commit(fake_brain_path: Path, isolated_home: Path, tmp_path: Path) -> None:
    from tests.fakes import register_fakes  # noqa: F401 - the spawned writers register their own

    ctx = mp.get_context("fork")
    writing, stop = ctx.Semaphore(0), ctx.Event()
    writers = [
        ctx.Process(target=_writer, args=(str(fake_brain_path), str(isolated_home), writing, stop, i)) for i in range(4)
    ]
    try:
        for w in writers:
            w.start()
        for _ in range(20):  # the writers are committing: 20 commits landed before the export starts
            assert writing.acquire(timeout=60)
        with Brain.open(fake_brain_path) as brain:
            marker = brain.add("committed just before the export")
            target = brain.export_sqlite(tmp_path / "copy.sqlite")
        for _ in range(4):  # ...and some land after it
            assert writing.acquire(timeout=60)
    finally:
        stop.set()
        for w in writers:
            w.join(timeout=30)
            if w.is_alive():
                w.kill()
    copy = sqlite3.connect(target)
    try:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert copy.execute("SELECT COUNT(*) FROM nodes WHERE id = ?", (marker,)).fetchone()[0] == 1
    finally:
        copy.close()


def test_sql_dump_opens_with_its_header_and_quotes_text_safely(fake_brain_path: Path, tmp_path: Path) -> None:
    hostile = "it's the team's call'); DROP TABLE nodes; --"
    with Brain.open(fake_brain_path) as brain:
        node = brain.add(hostile, metadata={"who": "O'Brien"}, importance=0.25)
        lines = brain.export("sql")
    assert lines[:2] == ["-- cerebro export (sql): run against a brain made by `cerebro init`", "BEGIN;"]
    assert lines[-1] == "COMMIT;"
    target = tmp_path / "target.db"
    Brain.init(target, embed_provider="none")
    conn = sqlite3.connect(target)
    conn.executescript("\n".join(lines))
    conn.close()
    with Brain.open(target) as brain:
        copied = brain.get(node).node
        stats = brain.stats()
    assert (copied.content, copied.metadata, copied.importance) == (hostile, {"who": "O'Brien"}, 0.25)
    # Only configuration travels in the meta table: the target keeps its own model and schema records.
    assert (stats.embedding_provider, stats.embedding_dimensions) == ("none", 0)


def test_odd_stored_times_export_as_null_or_as_they_are(fake_brain_path: Path) -> None:
    # A Go brain may hold '' for "never", and a hand-edited one text that is no time at all.
    with Brain.open(fake_brain_path) as brain:
        node = brain.add("odd times")
    conn = connect_brain(fake_brain_path)
    conn.execute("UPDATE nodes SET last_accessed = '', updated_at = 'someday', subtype = '' WHERE id = ?", (node,))
    conn.commit()
    conn.close()
    with Brain.open(fake_brain_path) as brain:
        (exported,) = brain.export("json")["nodes"]
    assert (exported["last_accessed"], exported["updated_at"]) == (None, "someday")
    assert "subtype" not in exported  # an empty subtype is omitted, as upstream's omitempty


@pytest.mark.file_only  # the convention boundaries a brain file's migrations stamp (a team brain has none)
def test_every_time_in_a_json_or_jsonl_export_is_rfc3339(cli, varied) -> None:
    """One timestamp format in a file (issue 16): the convention boundaries in meta too, not the storage layout."""
    import json
    import re

    stored = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$")
    rfc3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")

    def strings(value: object) -> list[str]:
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return [value] if isinstance(value, str) else []

    bundle = cli("export", "--format", "json").json()
    lines = [json.loads(line) for line in cli("export", "--format", "jsonl").stdout.splitlines()]
    for document in (bundle, lines):
        assert [s for s in strings(document) if stored.match(s)] == []
    assert rfc3339.match(bundle["meta"]["provenance_convention_since"])
    assert rfc3339.match(bundle["meta"]["origin_convention_since"])


def test_a_jsonl_export_carries_configuration_only_so_two_brains_of_a_project_merge(cli, varied) -> None:
    """A brain's own records — its path on this machine (a home folder in a file shared through git), when its
    migrations ran, its embedding settings — differ between two people's brains and an import ignores them."""
    import json

    lines = [json.loads(line) for line in cli("export", "--format", "jsonl").stdout.splitlines()]
    keys = [line["key"] for line in lines if line["kind"] == "meta"]
    assert keys and all(key.startswith("config.") for key in keys), keys
    assert "embedding_provider" in cli("export", "--format", "json").json()["meta"]  # upstream's bundle keeps them


def test_a_partial_file_left_by_a_killed_export_never_blocks_the_next(cli, varied, tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / "brain.jsonl"
    left = folder / f".brain.jsonl.{os.getpid()}.partial"  # what a run killed half way (same pid, later) left
    left.write_text("half")
    assert cli("export", "--format", "jsonl", "-o", str(out)).exit_code == 0
    assert out.stat().st_size > 100 and sorted(p.name for p in folder.iterdir()) == sorted([out.name, left.name])
