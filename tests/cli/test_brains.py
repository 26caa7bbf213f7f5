"""cerebro brains: every brain, the project it serves (recorded at init), a vanished project flagged (issue 16)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cerebro import Brain, paths


def _git_project(folder: Path) -> str:
    folder.mkdir()
    run = ["git", "-C", str(folder), "-c", "user.email=a@example.com", "-c", "user.name=a"]
    subprocess.run([*run[:3], "init", "-q"], check=True)
    subprocess.run([*run, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    return subprocess.run([*run[:3], "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


def test_brains_lists_each_project_and_flags_a_vanished_one(cli, tmp_path: Path, isolated_home: Path) -> None:
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    root = _git_project(repo)
    plain.mkdir()
    for folder in (repo, plain):
        assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=folder).exit_code == 0
    cli("add", "one memory", project_dir=repo)
    cli("add", "another", project_dir=repo)
    shutil.rmtree(plain)

    listed = cli("brains", "--format", "json", project_dir=None).json()["brains"]
    by_project = {b["project"]: b for b in listed}
    assert set(by_project) == {str(repo.resolve()), str(plain.resolve())}
    kept, gone = by_project[str(repo.resolve())], by_project[str(plain.resolve())]
    assert (kept["memories"], kept["project_exists"], kept["scope"]) == (2, True, "project")
    assert (kept["git_dir"], kept["git_root"]) == (str((repo / ".git").resolve()), root)
    assert kept["path"] == str(paths.project_brain_path(repo))
    assert (gone["project_exists"], gone["git_dir"], gone["memories"]) == (False, None, 0)
    text = cli("brains", project_dir=None).stdout
    assert f"{repo.resolve()}  (2 memories," in text and "the project folder is gone" in text


def test_a_brain_made_before_projects_were_recorded_says_so_and_init_records_it(cli, project: Path) -> None:
    Brain.init(paths.project_brain_path(project), embed_provider="none")  # no project given: nothing recorded
    (info,) = cli("brains", "--format", "json", project_dir=None).json()["brains"]
    assert (info["project"], info["project_exists"]) == (None, None)
    assert "(project not recorded)" in cli("brains", project_dir=None).stdout
    assert cli("init", "--skip-integration", project_dir=project).exit_code == 0  # an existing brain: recorded
    (info,) = cli("brains", "--format", "json", project_dir=None).json()["brains"]
    assert info["project"] == str(project.resolve())


def test_no_brains_yet(cli) -> None:
    assert cli("brains", project_dir=None).stdout == "No brains yet: run 'cerebro init' in a project.\n"
    assert cli("brains", "--format", "json", project_dir=None).json() == {"brains": []}


def test_a_moved_project_gets_its_brain_back_with_every_memory(cli, tmp_path: Path, isolated_home: Path) -> None:
    old, new = tmp_path / "old-name", tmp_path / "new-name"
    old.mkdir()
    assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=old).exit_code == 0
    memory = cli("add", "remember me", project_dir=old).stdout.strip()
    old.rename(new)
    lost = cli("get", memory, project_dir=new)
    assert lost.exit_code == 4  # no brain under the new path's name yet

    moved = cli("brains", "relink", str(old), str(new), "--format", "json", project_dir=None)
    assert moved.exit_code == 0, moved.stderr
    assert moved.json()["project"] == str(new.resolve()) and moved.json()["memories"] == 1
    assert cli("get", memory, "--format", "json", project_dir=new).json()["content"] == "remember me"
    listed = cli("brains", "--format", "json", project_dir=None).json()["brains"]
    assert [(b["project"], b["project_exists"]) for b in listed] == [(str(new.resolve()), True)]
    assert sorted(p.name for p in (isolated_home / "projects").iterdir()) == [paths.project_brain_path(new).name]


def test_relink_refuses_what_would_lose_or_mix_memories(cli, tmp_path: Path) -> None:
    old, taken = tmp_path / "old", tmp_path / "taken"
    for folder in (old, taken):
        folder.mkdir()
        assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=folder).exit_code == 0
    refused = cli("brains", "relink", str(old), str(taken), project_dir=None)
    assert refused.exit_code == 2 and "already has a brain" in refused.stderr
    assert cli("brains", "relink", str(old), str(tmp_path / "missing"), project_dir=None).exit_code == 2
    assert cli("brains", "relink", str(tmp_path / "never"), str(taken), project_dir=None).exit_code == 4
    with Brain.for_project(old) as open_elsewhere:  # a writer holds it: its WAL is not in the file yet
        open_elsewhere.add("written while open")
        busy = cli("brains", "relink", str(old), str(tmp_path), project_dir=None)
        assert busy.exit_code == 7 and "open in another process" in busy.stderr
    assert paths.project_brain_path(old).exists() and not paths.project_brain_path(tmp_path).exists()


def test_relink_refuses_a_brain_from_a_newer_cerebro_before_moving_it(cli, tmp_path: Path) -> None:
    """It moved the file, then refused to open it: the brain sat under the new name recording the old folder, and a
    second relink said the two were the same project (from a review)."""
    import sqlite3

    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    new.mkdir()
    assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=old).exit_code == 0
    brain = paths.project_brain_path(old)
    with sqlite3.connect(brain) as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'zz9999'")
    refused = cli("brains", "relink", str(old), str(new), project_dir=None)
    assert refused.exit_code == 5 and "newer" in refused.stderr
    assert brain.exists() and not paths.project_brain_path(new).exists()


def test_a_command_that_finds_no_brain_points_at_the_moved_repositorys_brain(cli, tmp_path: Path) -> None:
    old, new = tmp_path / "before", tmp_path / "after"
    _git_project(old)
    assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=old).exit_code == 0
    old.rename(new)
    missing = cli("list", project_dir=new)
    assert missing.exit_code == 4
    assert f"cerebro brains relink {old.resolve()} {new}" in missing.stderr
    assert len(missing.stderr.splitlines()) == 1  # still one line


def test_no_hint_for_a_project_outside_git(cli, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    missing = cli("list", project_dir=plain)
    assert missing.exit_code == 4 and "relink" not in missing.stderr
