"""migrate --realpath-hashes with real symlinked directories."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from cerebro import Brain, paths


def _old_brain(project_via_link: Path) -> Path:
    """A brain keyed the old way: sha256 of the absolute path, symlink unresolved."""
    return paths.projects_dir() / f"{hashlib.sha256(os.path.abspath(project_via_link).encode()).hexdigest()}.sqlite"


@pytest.fixture
def tree(tmp_path: Path):
    real_root = tmp_path / "real"
    (real_root / "alpha").mkdir(parents=True)
    (real_root / "beta").mkdir()
    (real_root / "gamma" / "nested").mkdir(parents=True)
    link_root = tmp_path / "link"
    link_root.symlink_to(real_root)
    # A symlinked sub-directory inside the scanned tree: skipped.
    (real_root / "shortcut").symlink_to(real_root / "alpha")
    return real_root, link_root


def _make_old(path: Path, content: str) -> None:
    Brain.init(path, embed_provider="fake")
    with Brain.open(path) as brain:
        brain.add(content)


def test_case_a_renames_and_a_second_run_is_a_no_op(cli, tree) -> None:
    real_root, link_root = tree
    old = _old_brain(link_root / "alpha")
    _make_old(old, "alpha memory")
    new = paths.project_brain_path(real_root / "alpha")
    assert old != new and not new.exists()

    result = cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), project_dir=None)
    assert result.exit_code == 0, result.stderr
    assert "Renamed 1. Merged 0." in result.stdout
    assert "[rename]" in result.stderr
    assert new.exists() and not old.exists()
    with Brain.open(new) as brain:
        assert [n.content for n in brain.list()] == ["alpha memory"]
    again = cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), project_dir=None)
    assert again.exit_code == 0
    assert again.stdout.startswith("Nothing to migrate.")


def test_case_c_merges_with_backups(cli, tree, isolated_home: Path) -> None:
    real_root, link_root = tree
    old = _old_brain(link_root / "beta")
    _make_old(old, "from the old brain")
    new = paths.project_brain_path(real_root / "beta")
    _make_old(new, "from the new brain")
    result = cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), "--format", "json", project_dir=None)
    assert result.exit_code == 0, result.stderr
    assert len(result.json()["merged"]) == 1
    assert not old.exists()
    with Brain.open(new) as brain:
        assert sorted(n.content for n in brain.list()) == ["from the new brain", "from the old brain"]
    (backup_dir,) = [p for p in (isolated_home / "backups").iterdir() if p.name.startswith("migrate-")]
    assert {old.name, new.name} <= {p.name for p in backup_dir.iterdir()}


def test_case_c_carries_the_archive_and_the_inbox_too(cli, tree, pinned_clock) -> None:
    """The merge went through the json export, which has no archive and no inbox: both were deleted with the old
    brain (only its backup kept them). The archive travels in the jsonl export; candidates are copied as they are."""
    from datetime import timedelta

    from cerebro import clock

    real_root, link_root = tree
    old = _old_brain(link_root / "beta")
    Brain.init(old, embed_provider="fake")
    with Brain.open(old) as brain:
        brain.add("kept active", importance=0.9)
        faded = brain.add("faded episode", importance=0.01)
        candidate = brain.inbox_add("an unsure note", subtype="maybe")
        clock.set_now(clock.now() + timedelta(days=365))
        assert [e["id"] for e in brain.gc(threshold=0.4).evicted] == [faded]
        archived = brain.handle.store.reads.rows(brain.handle.raw, "nodes_archive", ["id", "content"], "id")
    new = paths.project_brain_path(real_root / "beta")
    _make_old(new, "from the new brain")
    result = cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), "--format", "json", project_dir=None)
    assert result.exit_code == 0, result.stderr
    assert not old.exists()
    with Brain.open(new) as brain:
        assert sorted(n.content for n in brain.list()) == ["from the new brain", "kept active"]
        h = brain.handle
        assert h.store.reads.rows(h.raw, "nodes_archive", ["id", "content"], "id") == archived
        got = brain.inbox_get(candidate)
        assert (got.content, got.subtype) == ("an unsure note", "maybe")


def test_case_c_is_refused_while_the_old_brain_is_open(cli, tree) -> None:
    """Deleting a brain another process has open: that process's later writes went nowhere (an agent's edit, lost)."""
    real_root, link_root = tree
    old = _old_brain(link_root / "beta")
    _make_old(old, "from the old brain")
    new = paths.project_brain_path(real_root / "beta")
    _make_old(new, "from the new brain")
    with Brain.open(old) as holder:
        holder.add("written while the migration runs")
        result = cli(
            "migrate", "--realpath-hashes", "--scan-root", str(link_root), "--format", "json", project_dir=None
        )
        assert result.json()["merged"] == [] and "open in another process" in result.json()["errors"][0]
        holder.add("written after")
    assert old.exists()
    with Brain.open(new) as brain:
        assert [n.content for n in brain.list()] == ["from the new brain"]  # nothing merged, nothing lost


def test_case_c_keeps_the_old_brain_when_it_was_opened_during_the_merge(tree, monkeypatch) -> None:
    """An agent that opens the old brain after its export: what it writes must not be deleted with the file. The old
    brain stays; a second run merges again (skipping what came already)."""
    from cerebro import api, realpath_migration

    real_root, link_root = tree
    old = _old_brain(link_root / "beta")
    _make_old(old, "from the old brain")
    new = paths.project_brain_path(real_root / "beta")
    _make_old(new, "from the new brain")
    holders: list[Brain] = []
    imported = api.Brain.import_file

    def import_while_an_agent_opens_the_old_brain(self, *args, **kwargs):
        holders.append(Brain.open(old))
        holders[0].add("written by the agent meanwhile")
        return imported(self, *args, **kwargs)

    monkeypatch.setattr(api.Brain, "import_file", import_while_an_agent_opens_the_old_brain)
    report = realpath_migration.migrate([link_root])
    assert report.merged == [] and "open in another process" in report.errors[0]
    holders[0].close()
    monkeypatch.setattr(api.Brain, "import_file", imported)
    assert old.exists()
    assert len(realpath_migration.migrate([link_root]).merged) == 1
    with Brain.open(new) as brain:
        assert sorted(n.content for n in brain.list()) == [
            "from the new brain",
            "from the old brain",
            "written by the agent meanwhile",
        ]


def test_dry_run_changes_nothing(cli, tree) -> None:
    real_root, link_root = tree
    old = _old_brain(link_root / "alpha")
    _make_old(old, "x")
    result = cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), "--dry-run", project_dir=None)
    assert result.exit_code == 0
    assert "(dry run)" in result.stdout
    assert old.exists() and not paths.project_brain_path(real_root / "alpha").exists()


def test_symlinked_subdirectory_is_skipped(tree) -> None:
    from cerebro.realpath_migration import walk

    _real_root, link_root = tree
    seen = [p.name for p in walk([link_root], 4)]
    assert "shortcut" not in seen
    assert {"alpha", "beta", "gamma", "nested"} <= set(seen)


def test_lock_held_refuses(cli, tree, isolated_home: Path) -> None:
    _, link_root = tree
    paths.ensure_private_dir(isolated_home)
    (isolated_home / "migrate.lock").write_text(str(os.getppid()))  # a process that is running
    result = cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), project_dir=None)
    assert result.exit_code == 14  # its own code: a script can wait and retry
    assert "another migration is in progress" in result.stderr
    assert (isolated_home / "migrate.lock").read_text() == str(os.getppid())  # someone else's lock is left alone


def test_a_lock_whose_owner_died_is_taken_over(cli, tree, isolated_home: Path) -> None:
    """A migration killed with -9 leaves its lock; the next run must not refuse forever (issue 17)."""
    _, link_root = tree
    _make_old(_old_brain(link_root / "alpha"), "alpha memory")
    dead = subprocess.Popen(["true"])  # a process that has exited: its pid names nobody
    dead.wait()
    paths.ensure_private_dir(isolated_home)
    (isolated_home / "migrate.lock").write_text(str(dead.pid))
    result = cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), project_dir=None)
    assert result.exit_code == 0, result.stderr
    assert "Renamed 1." in result.stdout
    assert not (isolated_home / "migrate.lock").exists()  # released at the end like its own


def test_a_rename_killed_half_way_loses_nothing(tree, monkeypatch: pytest.MonkeyPatch) -> None:
    """The brain's recent writes live in its -wal until a checkpoint: moving the file and then the -wal, a kill in
    between left them behind (5 of 305 memories lost in the adversarial run). The log is folded in first, so the
    one rename that happens carries every memory."""
    from cerebro import realpath_migration

    real_root, link_root = tree
    old = _old_brain(link_root / "alpha")
    _make_old(old, "first")
    keeper = Brain.open(old)  # an open connection keeps the -wal: the state a killed agent leaves
    keeper._handle.raw.execute("PRAGMA wal_autocheckpoint = 0")
    for n in range(20):
        keeper.add(f"memory {n}")
    wal = Path(f"{old}-wal")
    assert wal.exists() and wal.stat().st_size > 0
    crashed = {suffix: Path(f"{old}{suffix}").read_bytes() for suffix in ("", "-wal")}
    keeper.close()
    for suffix, data in crashed.items():  # as the files were when the agent died: writes still in the -wal
        Path(f"{old}{suffix}").write_bytes(data)
    renames: list[tuple[str, str]] = []

    def replace_then_die(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
        renames.append((str(source), str(target)))
        os.rename(source, target)
        raise KeyboardInterrupt("killed after the first rename")

    monkeypatch.setattr(realpath_migration.os, "replace", replace_then_die)
    with pytest.raises(KeyboardInterrupt):
        realpath_migration.migrate([link_root])
    new = paths.project_brain_path(real_root / "alpha")
    assert renames == [(str(old), str(new))]
    with Brain.open(new) as brain:
        assert len(brain.list(limit=100)) == 21


def test_needs_a_kind_flag(cli) -> None:
    result = cli("migrate", project_dir=None)
    assert result.exit_code == 2
    assert "at least one migration kind flag is required" in result.stderr
