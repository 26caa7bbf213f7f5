"""init's other routes: --remove (and --purge), --local, the installed plugin, upstream's hooks under --force."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cerebro import Brain, paths
from cerebro.integration.claude_code import plugin, templates

GOLDEN = Path(__file__).parent / "golden"
UPSTREAM = json.loads((GOLDEN / "upstream-hooks.json").read_text())


def ok(result):
    assert result.exit_code == 0 and result.stderr == "", result
    return result


def settings_of(project: Path, name: str = "settings.json") -> Path:
    return project / ".claude" / name


@pytest.fixture
def user_project(project: Path) -> Path:
    settings_of(project).parent.mkdir(parents=True)
    shutil.copy(GOLDEN / "settings.user.json", settings_of(project))
    (project / "CLAUDE.md").write_text("# Acme\n\nBuild with make.\n\n## Deployment\nRelease train.\n")
    return project


def _tree(project: Path) -> dict[str, bytes]:
    return {str(p.relative_to(project)): p.read_bytes() for p in project.rglob("*") if p.is_file()}


# --------------------------------------------------------------------------- --remove


def test_remove_takes_out_exactly_what_init_added(cli, user_project: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    result = ok(cli("init", "--remove"))
    assert "Removed cerebro's hooks from .claude/settings.json" in result.stdout
    assert "Removed 5 skill files from .claude/skills/" in result.stdout
    assert "Removed the Cerebro Memory System section from CLAUDE.md" in result.stdout
    # The user's settings, key order and hooks as they were; their CLAUDE.md sections around ours too.
    assert settings_of(user_project).read_text() == templates.dump_json(
        json.loads((GOLDEN / "settings.user.json").read_text())
    )
    assert (user_project / "CLAUDE.md").read_text() == "# Acme\n\nBuild with make.\n\n## Deployment\nRelease train.\n"
    assert not (user_project / ".claude" / "skills").exists()
    assert paths.project_brain_path(user_project).exists()  # the brain stays without --purge
    again = ok(cli("init", "--remove"))
    assert "no cerebro hooks" in again.stdout and "no Cerebro section" in again.stdout


def test_remove_keeps_the_section_between_user_sections(cli, project: Path) -> None:
    (project / "CLAUDE.md").write_text("# Top\n\n## Before\nb\n")
    ok(cli("init", "--embed-provider", "none"))
    with (project / "CLAUDE.md").open("a") as handle:
        handle.write("\n## After\na\n")
    ok(cli("init", "--remove"))
    assert (project / "CLAUDE.md").read_text() == "# Top\n\n## Before\nb\n\n## After\na\n"


def test_symlinked_instructions_and_settings_stay_links(cli, user_project: Path, tmp_path: Path) -> None:
    """A user who keeps CLAUDE.md and .claude/settings.json in a dotfiles folder, linked into the project: init and
    --remove write through the links (the links were replaced by files, the dotfiles copies never changed)."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    links = {user_project / "CLAUDE.md": dotfiles / "CLAUDE.md", settings_of(user_project): dotfiles / "settings.json"}
    before = {}
    for link, target in links.items():
        before[target] = link.read_text()
        link.rename(target)
        link.symlink_to(target)
    ok(cli("init", "--embed-provider", "none"))
    for link, target in links.items():
        assert link.is_symlink() and link.resolve() == target
    assert templates.SECTION_HEADING in (dotfiles / "CLAUDE.md").read_text()
    assert "cerebro hook prime" in (dotfiles / "settings.json").read_text()
    ok(cli("init", "--remove"))
    for link, target in links.items():
        assert link.is_symlink() and link.resolve() == target
    assert (dotfiles / "CLAUDE.md").read_text() == before[dotfiles / "CLAUDE.md"]
    assert json.loads((dotfiles / "settings.json").read_text()) == json.loads(before[dotfiles / "settings.json"])


def test_a_symlinked_file_left_empty_keeps_its_link(cli, project: Path, tmp_path: Path) -> None:
    """A removal that leaves nothing deletes a file of ours; a link the user made stays, its target emptied of ours."""
    target = tmp_path / "dotfiles-CLAUDE.md"
    (project / "CLAUDE.md").symlink_to(target)  # dangling: init creates the target through it
    settings_target = tmp_path / "dotfiles-settings.json"
    settings_of(project).parent.mkdir()
    settings_of(project).symlink_to(settings_target)
    ok(cli("init", "--embed-provider", "none"))
    assert target.is_file() and templates.SECTION_HEADING in target.read_text()
    assert "cerebro hook prime" in settings_target.read_text()
    ok(cli("init", "--remove"))
    assert (project / "CLAUDE.md").is_symlink() and target.read_text() == ""
    assert settings_of(project).is_symlink() and json.loads(settings_target.read_text()) == {}


@pytest.mark.parametrize(
    ("agent", "file"),
    [(None, "CLAUDE.md"), ("codex", "AGENTS.md"), ("gemini", "GEMINI.md")],
    ids=["claude", "codex", "gemini"],
)
def test_what_a_user_appends_below_our_section_survives_force_and_remove(cli, project: Path, agent, file) -> None:
    """Our section ran to the next `## ` heading or the end of the file: a line appended below it, or a `# ` section,
    was taken for ours and deleted by --force and --remove."""
    (project / file).write_text("# My project\n\nBuild with make.\n")
    chosen = ["--agent", agent] if agent else []
    ok(cli("init", "--embed-provider", "none", *chosen))
    appended = "\nIMPORTANT: never push to main.\n\n# Team conventions\n\nUse tabs.\n"
    with (project / file).open("a") as handle:
        handle.write(appended)
    ok(cli("init", "--force", *chosen))
    assert (project / file).read_text().endswith(appended)
    ok(cli("init", "--remove", *chosen))
    assert (project / file).read_text() == "# My project\n\nBuild with make.\n" + appended


def test_remove_on_a_project_init_created_leaves_it_empty(cli, project: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    ok(cli("init", "--remove"))
    assert list(project.iterdir()) == []


def test_remove_keeps_an_edited_skill_and_says_so(cli, project: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    mine = project / ".claude" / "skills" / "recall" / "SKILL.md"
    mine.write_text("my own recall\n")
    result = cli("init", "--remove")
    assert result.exit_code == 0 and "kept .claude/skills/recall/SKILL.md" in result.stderr
    assert mine.read_text() == "my own recall\n"
    assert "Removed 4 skill files" in result.stdout


def test_remove_purge_deletes_the_brain_after_a_backup(cli, project: Path, isolated_home: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    brain = paths.project_brain_path(project)
    with Brain.open(brain) as b:
        b.add("keep me in the backup")
    data = ok(cli("init", "--remove", "--purge", "--format", "json")).json()
    assert not brain.exists() and data["brain"] == str(brain)
    backup = Path(data["backup"])
    assert backup.parent == isolated_home / "backups"
    with Brain.open(backup) as b:
        assert [n.content for n in b.list()] == ["keep me in the backup"]


@pytest.mark.parametrize("args", [["--purge"], ["--remove", "--force"], ["--remove", "--global"]])
def test_remove_flags_that_do_not_go_together(cli, project: Path, args: list[str]) -> None:
    ok(cli("init", "--embed-provider", "none"))
    before = _tree(project)
    result = cli("init", *args)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1
    assert _tree(project) == before


def test_init_refuses_a_project_folder_that_does_not_exist(cli, tmp_path: Path, isolated_home: Path) -> None:
    result = cli("init", "-p", str(tmp_path / "no" / "such"))
    assert result.exit_code == 2 and "does not exist" in result.stderr
    assert not (isolated_home / "projects").exists()


# --------------------------------------------------------------------------- --local


def test_local_writes_only_the_users_own_files(cli, user_project: Path) -> None:
    shared = settings_of(user_project).read_text()
    result = ok(cli("init", "--local", "--embed-provider", "none"))
    assert "Created .claude/settings.local.json (session hooks)" in result.stdout
    assert "Created CLAUDE.local.md" in result.stdout
    assert json.loads(settings_of(user_project, "settings.local.json").read_text()) == templates.hooks_config()
    assert settings_of(user_project).read_text() == shared  # the committed file untouched
    assert "Cerebro Memory System" not in (user_project / "CLAUDE.md").read_text()
    assert not (user_project / ".claude" / "skills").exists()
    ok(cli("init", "--local", "--remove"))
    assert not settings_of(user_project, "settings.local.json").exists()
    assert not (user_project / "CLAUDE.local.md").exists()


# --------------------------------------------------------------------------- the plugin


def _enable_plugin(project: Path) -> None:
    settings = json.loads(settings_of(project).read_text()) if settings_of(project).exists() else {}
    settings["enabledPlugins"] = {"cerebro@cerebro": True}
    settings_of(project).parent.mkdir(parents=True, exist_ok=True)
    settings_of(project).write_text(json.dumps(settings))


def test_with_the_plugin_enabled_init_writes_no_hooks_or_skills(cli, project: Path) -> None:
    _enable_plugin(project)
    result = ok(cli("init", "--embed-provider", "none"))
    assert "the cerebro@cerebro plugin carries the hooks and skills" in result.stdout
    assert "hooks" not in json.loads(settings_of(project).read_text())
    assert not (project / ".claude" / "skills").exists()
    assert "## Cerebro Memory System" in (project / "CLAUDE.md").read_text()  # a plugin cannot write it


def test_force_after_installing_the_plugin_removes_inits_copies(cli, project: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    _enable_plugin(project)
    result = cli("init", "--force")
    assert result.exit_code == 0
    assert "Removed 5 skill files" in result.stdout
    assert "hooks" not in json.loads(settings_of(project).read_text())
    assert json.loads(settings_of(project).read_text())["enabledPlugins"] == {"cerebro@cerebro": True}


def test_a_disabled_plugin_does_not_count(cli, project: Path) -> None:
    settings_of(project).parent.mkdir()
    settings_of(project).write_text(json.dumps({"enabledPlugins": {"cerebro@cerebro": False, "other@x": True}}))
    ok(cli("init", "--embed-provider", "none"))
    assert json.loads(settings_of(project).read_text())["hooks"] == templates.hooks_config()["hooks"]


def test_the_printed_marketplace_is_real(cli, project: Path) -> None:
    out = ok(cli("init", "--embed-provider", "none")).stdout
    line = next(line for line in out.splitlines() if "claude plugin marketplace add" in line)
    root = Path(line.split("marketplace add", 1)[1].strip())
    for relative, text in plugin.render().items():
        assert (root / relative).read_text() == text
    assert (
        json.loads((root / ".claude-plugin" / "marketplace.json").read_text())["plugins"][0]["source"]
        == "./claude-plugin/cerebro"
    )


def test_the_marketplace_replaces_a_planted_link_and_is_private(cli, project: Path, tmp_path: Path) -> None:
    """Its files were written through a symlink planted at their path (another file overwritten), and took the
    umask's mode: under umask 000 the hooks Claude Code runs were writable by anyone (a review)."""
    root = paths.home() / "claude-plugin" / ".claude-plugin"
    root.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (root / "marketplace.json").symlink_to(victim)
    old = os.umask(0)
    try:
        ok(cli("init", "--embed-provider", "none"))
    finally:
        os.umask(old)
    assert victim.read_text() == "keep me"
    assert not (root / "marketplace.json").is_symlink()
    for relative in plugin.render():
        written = paths.home() / "claude-plugin" / relative
        assert written.stat().st_mode & 0o777 == 0o600, relative
        assert written.parent.stat().st_mode & 0o077 == 0, relative


# --------------------------------------------------------------------------- upstream's hooks


def _current_handlers() -> set[tuple[str, str, str]]:
    return {
        (e, g["matcher"], h["command"])
        for e, gs in templates.hooks_config()["hooks"].items()
        for g in gs
        for h in g["hooks"]
    }


@pytest.mark.parametrize("version", ["v1", "v3"])
def test_force_over_upstreams_hook_set_leaves_one_set(cli, project: Path, version: str) -> None:
    user = json.loads((GOLDEN / "settings.user.json").read_text())
    upstream = UPSTREAM[version]["hooks"]
    for event, groups in upstream.items():
        user["hooks"].setdefault(event, []).extend(groups)
    settings_of(project).parent.mkdir()
    settings_of(project).write_text(json.dumps(user, indent=2))

    plain = cli("init", "--embed-provider", "none")
    assert plain.exit_code == 0 and "older cerebro hooks" in plain.stderr and "init --force" in plain.stderr

    ok(cli("init", "--force"))
    merged = json.loads(settings_of(project).read_text())["hooks"]
    handlers = [(e, g.get("matcher", ""), h["command"]) for e, gs in merged.items() for g in gs for h in g["hooks"]]
    ours = [h for h in handlers if "cerebro" in h[2] and "remember: cerebro" not in h[2]]
    assert sorted(ours) == sorted(_current_handlers())  # one set: upstream's gone, ours once
    assert "PreCompact" not in merged
    user_own = json.loads((GOLDEN / "settings.user.json").read_text())["hooks"]
    for event, groups in user_own.items():
        assert merged[event][: len(groups)] == groups  # the user's entries kept, first


def test_the_shape_recogniser_leaves_user_hooks_alone() -> None:
    for command in (
        "echo 'remember: cerebro is our memory tool'",
        "cerebro stats",
        "cerebro gc --dry-run",
        'cerebro stop-guard -p "$CLAUDE_PROJECT_DIR" 2>>/tmp/g.log',
        "notify-send cerebro",
        # A user's own hook that calls cerebro among other work: init --remove deleted it whole (and the backup)
        './scripts/backup-transcripts.sh && cerebro hook session-end -p "$CLAUDE_PROJECT_DIR"',
        'INPUT=$(cat); printf "%s" "$INPUT" | cerebro hook prime --event sessionstart -p .; ./notify.sh',
        'if ./ready.sh; then cerebro recall --prime -p "$CLAUDE_PROJECT_DIR"; fi',
    ):
        assert not templates.is_cerebro_hook(command), command
    for _, _, command in templates.HOOKS:  # ours, this version's (with and without init's gate)
        assert templates.is_cerebro_hook(command) and templates.is_cerebro_hook(templates.init_command(command))
    for version in ("v1", "v3"):
        for event, groups in UPSTREAM[version]["hooks"].items():
            for group in groups:
                for handler in group["hooks"]:
                    assert templates.is_cerebro_hook(handler["command"]) or event == "Stop", handler


def test_a_top_level_section_below_our_edited_section_is_kept(cli, project: Path) -> None:
    """Once a user edited our section its end is the next heading: a `# ` heading ends it as a `## ` one does."""
    ok(cli("init", "--embed-provider", "none"))
    path = project / "CLAUDE.md"
    path.write_text(
        path.read_text().replace("\n\n", "\n\nOur team's note.\n\n", 1) + "\n# Team conventions\n\nUse tabs.\n"
    )
    ok(cli("init", "--remove"))
    assert path.read_text() == "# Team conventions\n\nUse tabs.\n"


def test_an_instructions_file_that_is_not_utf8_is_left_as_it_is_with_a_warning(cli, project: Path) -> None:
    """It failed init half-way with an internal error (the brain, settings and skills written, exit 1)."""
    latin = b"# Proj\n\nCaf\xe9 rules\n"
    (project / "CLAUDE.md").write_bytes(latin)
    result = cli("init", "--embed-provider", "none")
    assert result.exit_code == 11 and "could not update CLAUDE.md" in result.stderr  # "not fully wired", as for OSError
    assert "internal error" not in result.stderr and (project / "CLAUDE.md").read_bytes() == latin
    removed = cli("init", "--remove")
    assert removed.exit_code == 11 and "internal error" not in removed.stderr
    assert (project / "CLAUDE.md").read_bytes() == latin


def test_remove_keeps_a_users_own_hook_that_also_calls_cerebro(cli, project: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    settings = json.loads(settings_of(project).read_text())
    theirs = './scripts/backup-transcripts.sh && cerebro hook session-end -p "$CLAUDE_PROJECT_DIR"'
    settings["hooks"]["SessionEnd"].append({"matcher": "", "hooks": [{"type": "command", "command": theirs}]})
    settings_of(project).write_text(json.dumps(settings, indent=2))
    ok(cli("init", "--remove"))
    left = json.loads(settings_of(project).read_text())["hooks"]
    assert left == {"SessionEnd": [{"matcher": "", "hooks": [{"type": "command", "command": theirs}]}]}
