"""The linked worktrees of a git repository share one brain, the main worktree's (ADR 0025, issue 16): a memory
added in one is recalled in the other, with nothing to configure; ``init --own-brain`` gives one its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cerebro import Brain, paths


def _git(*args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=a@example.com", "-c", "user.name=a", *args], check=True, capture_output=True
    )


@pytest.fixture
def repository(tmp_path: Path) -> tuple[Path, Path]:
    """A repository (the main worktree) and a linked worktree of it, in folders side by side."""
    main, linked = tmp_path / "main", tmp_path / "feature"
    main.mkdir()
    _git("-C", str(main), "init", "-q")
    _git("-C", str(main), "commit", "-q", "--allow-empty", "-m", "first")
    _git("-C", str(main), "worktree", "add", "-q", "-b", "feature", str(linked))
    return main, linked


def _ids(cli, folder: Path) -> list[str]:
    return [m["id"] for m in cli("list", "--format", "json", project_dir=folder).json()["memories"]]


def test_two_worktrees_of_one_repository_share_a_brain(cli, repository: tuple[Path, Path]) -> None:
    main, linked = repository
    assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=main).exit_code == 0
    from_main = cli("add", "the deploy needs the VPN", "--format", "json", project_dir=main).json()["id"]
    from_linked = cli("add", "feature flags live in flags.toml", "--format", "json", project_dir=linked).json()["id"]
    assert sorted(_ids(cli, main)) == sorted(_ids(cli, linked)) == sorted([from_main, from_linked])
    assert paths.project_brain_path(linked) == paths.project_brain_path(main)
    assert not paths.own_brain_path(linked).exists()  # no second brain was made
    (info,) = cli("brains", "--format", "json", project_dir=None).json()["brains"]
    assert info["project"] == str(main.resolve())


def test_init_in_a_worktree_creates_the_shared_brain_for_the_main_worktree(cli, repository) -> None:
    main, linked = repository
    assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=linked).exit_code == 0
    node = cli("add", "made in the worktree", "--format", "json", project_dir=linked).json()["id"]
    assert _ids(cli, main) == [node]
    (info,) = cli("brains", "--format", "json", project_dir=None).json()["brains"]
    assert info["project"] == str(main.resolve())  # the brain serves the repository, named by its main worktree
    assert info["path"] == str(paths.own_brain_path(main))


def test_own_brain_gives_a_worktree_a_brain_of_its_own(cli, repository) -> None:
    main, linked = repository
    assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=main).exit_code == 0
    shared = cli("add", "shared fact", "--format", "json", project_dir=main).json()["id"]
    made = cli("init", "--skip-integration", "--embed-provider", "none", "--own-brain", project_dir=linked)
    assert made.exit_code == 0, made
    assert paths.own_brain_path(linked).is_file()
    alone = cli("add", "only in the feature worktree", "--format", "json", project_dir=linked).json()["id"]
    assert _ids(cli, linked) == [alone]
    assert _ids(cli, main) == [shared]
    projects = {b["project"] for b in cli("brains", "--format", "json", project_dir=None).json()["brains"]}
    assert projects == {str(main.resolve()), str(linked.resolve())}


def test_own_brain_is_refused_with_global_or_remove(cli, repository) -> None:
    _, linked = repository
    for extra in (["--global"], ["--remove"]):
        result = cli("init", "--own-brain", *extra, project_dir=linked)
        assert result.exit_code == 2 and "--own-brain" in result.stderr
    assert list(paths.projects_dir().glob("*.sqlite")) == []


def test_the_python_api_finds_the_shared_brain_from_a_worktree(repository) -> None:
    main, linked = repository
    with Brain.create_for_project(linked, embed_provider="none") as brain:
        node = brain.add("added through the API")
    with Brain.for_project(main) as brain:
        assert [n.id for n in brain.list()] == [node]
        assert brain.brains()[0].project == str(main.resolve())


def test_folders_that_are_not_linked_worktrees_keep_their_own_brain(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert paths.main_worktree(plain) is None
    submodule = tmp_path / "sub"  # a submodule's .git file names a git folder with no commondir
    (tmp_path / "modules" / "sub").mkdir(parents=True)
    submodule.mkdir()
    (submodule / ".git").write_text("gitdir: ../modules/sub\n")
    assert paths.main_worktree(submodule) is None
    assert paths.project_brain_path(submodule) == paths.own_brain_path(submodule)
    garbage = tmp_path / "garbage"
    garbage.mkdir()
    (garbage / ".git").write_bytes(b"\xff\xfe not a pointer")
    assert paths.main_worktree(garbage) is None


def test_a_worktree_of_a_bare_repository_keeps_its_own_brain(tmp_path: Path) -> None:
    bare, linked, seed = tmp_path / "bare.git", tmp_path / "wt", tmp_path / "seed"
    seed.mkdir()
    _git("-C", str(seed), "init", "-q")
    _git("-C", str(seed), "commit", "-q", "--allow-empty", "-m", "first")
    _git("clone", "-q", "--bare", str(seed), str(bare))
    _git("-C", str(bare), "worktree", "add", "-q", str(linked))
    assert paths.main_worktree(linked) is None


def test_the_main_worktree_is_found_from_the_git_files_alone(repository) -> None:
    main, linked = repository
    assert paths.main_worktree(linked) == main.resolve()
    assert paths.main_worktree(main) is None  # the main checkout is its own owner
    assert paths.brain_owner(linked) == main.resolve()
