from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from cerebro import paths


def test_home_defaults_to_dot_cerebro(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CEREBRO_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert paths.home() == tmp_path / ".cerebro"


def test_project_brain_is_sha256_of_realpath(tmp_path: Path, isolated_home: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    expected = hashlib.sha256(str(real.resolve()).encode()).hexdigest()
    assert paths.project_brain_path(link) == isolated_home / "projects" / f"{expected}.sqlite"
    assert paths.project_brain_path(real) == paths.project_brain_path(link)


def test_unresolvable_path_falls_back_to_absolute(tmp_path: Path) -> None:
    missing = tmp_path / "does-not-exist"
    expected = hashlib.sha256(os.path.abspath(missing).encode()).hexdigest()
    assert paths.project_hash(missing) == expected


def test_project_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    assert paths.resolve_project_dir(None) == tmp_path
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/from/env")
    assert paths.resolve_project_dir(None) == Path("/from/env")
    assert paths.resolve_project_dir("/explicit") == Path("/explicit")


def test_private_dirs_do_not_touch_existing_shared_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    os.chmod(shared, 0o755)
    monkeypatch.setenv("CEREBRO_HOME", str(shared))
    paths.ensure_private_dir(paths.projects_dir())
    assert (shared.stat().st_mode & 0o777) == 0o755
    assert (paths.projects_dir().stat().st_mode & 0o777) == 0o700


def test_global_brain_path(isolated_home: Path) -> None:
    assert paths.global_brain_path() == isolated_home / "global.sqlite"
