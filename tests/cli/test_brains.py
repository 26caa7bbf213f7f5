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
