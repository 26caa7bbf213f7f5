"""Planted symlinks (issue 17): cerebro never creates a brain through a link, and never chmods a file or
folder that a link points at — a repository or another user could aim one at anything the user owns."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from cerebro import Brain, paths
from cerebro.errors import InvalidInput


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_dangling_link_at_the_brain_path_is_refused_and_creates_nothing(cli, project: Path, tmp_path) -> None:
    target = tmp_path / "elsewhere" / "created-through-the-link.sqlite"
    target.parent.mkdir()
    brain = paths.project_brain_path(project)
    brain.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, brain)
    result = cli("init", "--skip-integration", "--embed-provider", "none")
    assert result.exit_code == 2 and "symbolic link" in result.stderr
    assert not target.exists()


def test_a_link_to_an_empty_file_is_never_made_a_brain(tmp_path) -> None:
    victim = tmp_path / "victim.txt"
    victim.touch()
    os.chmod(victim, 0o644)
    link = tmp_path / "brain.sqlite"
    os.symlink(victim, link)
    with pytest.raises(InvalidInput, match="symbolic link"):
        Brain.init(link, embed_provider="none")
    assert victim.read_bytes() == b"" and _mode(victim) == 0o644


def test_opening_a_linked_brain_does_not_chmod_what_the_link_points_at(tmp_path) -> None:
    real = tmp_path / "real.sqlite"
    Brain.init(real, embed_provider="none")
    os.chmod(real, 0o640)  # the user's own choice for their file
    link = tmp_path / "link.sqlite"
    os.symlink(real, link)
    with Brain.open(link) as brain:
        assert brain.list() == []
    assert _mode(real) == 0o640


def test_a_linked_folder_under_the_home_is_not_chmodded(tmp_path, isolated_home: Path) -> None:
    victim = tmp_path / "shared-folder"
    victim.mkdir()
    os.chmod(victim, 0o755)
    isolated_home.mkdir(parents=True, exist_ok=True)
    os.symlink(victim, isolated_home / "backups")
    paths.ensure_private_dir(paths.backups_dir())
    assert _mode(victim) == 0o755


def test_a_new_brain_is_private_whatever_the_umask(tmp_path) -> None:
    old = os.umask(0)
    try:
        path = tmp_path / "b.sqlite"
        Brain.init(path, embed_provider="none")
    finally:
        os.umask(old)
    assert _mode(path) == 0o600


def test_the_private_file_helper_never_creates_through_a_link(tmp_path) -> None:
    target = tmp_path / "target"
    link = tmp_path / "link"
    os.symlink(target, link)
    with pytest.raises(OSError):
        paths.create_private_file(link)
    assert not target.exists()
