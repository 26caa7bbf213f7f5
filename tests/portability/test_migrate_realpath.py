"""migrate --realpath-hashes with real symlinked directories."""

from __future__ import annotations

import hashlib
import os
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
    (isolated_home / "migrate.lock").write_text("12345")
    result = cli("migrate", "--realpath-hashes", "--scan-root", str(link_root), project_dir=None)
    assert result.exit_code == 14  # its own code: a script can wait and retry
    assert "another migration is in progress" in result.stderr
    assert (isolated_home / "migrate.lock").exists()  # someone else's lock is left alone


def test_needs_a_kind_flag(cli) -> None:
    result = cli("migrate", project_dir=None)
    assert result.exit_code == 2
    assert "at least one migration kind flag is required" in result.stderr
