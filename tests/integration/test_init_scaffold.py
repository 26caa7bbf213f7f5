"""cerebro init's Claude Code files, against golden files: settings.json merge, skills, CLAUDE.md section.

Golden files live in ``golden/``. After a deliberate template change, rewrite them with
``CEREBRO_UPDATE_GOLDEN=1 pytest tests/integration/test_init_scaffold.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from cerebro import paths
from cerebro.cli.app import COMMANDS
from cerebro.integration.claude_code import templates, usage

GOLDEN = Path(__file__).parent / "golden"


def golden(name: str, actual: str) -> None:
    path = GOLDEN / name
    if os.environ.get("CEREBRO_UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    assert actual == path.read_text(encoding="utf-8"), f"{name} differs from the golden file"


def ok(result):
    assert result.exit_code == 0 and result.stderr == "", result
    return result


def settings_of(project: Path) -> Path:
    return project / ".claude" / "settings.json"


@pytest.fixture
def user_project(project: Path) -> Path:
    settings_of(project).parent.mkdir(parents=True)
    shutil.copy(GOLDEN / "settings.user.json", settings_of(project))
    shutil.copy(GOLDEN / "CLAUDE.user.md", project / "CLAUDE.md")
    return project


def test_fresh_project_gets_template_settings_skills_and_section(cli, project: Path) -> None:
    result = ok(cli("init", "--embed-provider", "none"))
    assert "Created .claude/settings.json (session hooks)" in result.stdout
    assert "Created 5 skill files in .claude/skills/" in result.stdout
    assert "Created CLAUDE.md (Cerebro Memory System section)" in result.stdout
    assert json.loads(settings_of(project).read_text()) == templates.hooks_config()
    assert (project / "CLAUDE.md").read_text() == templates.claudemd_section()
    for name in templates.SKILLS:
        text = (project / ".claude" / "skills" / name / "SKILL.md").read_text()
        assert text.startswith(f"---\nname: {name}\n")


def test_merge_keeps_user_hooks_and_keys_in_order(cli, user_project: Path) -> None:
    before = json.loads((GOLDEN / "settings.user.json").read_text())
    result = ok(cli("init", "--embed-provider", "none"))
    assert "Updated .claude/settings.json (added cerebro's session hooks)" in result.stdout
    text = settings_of(user_project).read_text()
    golden("settings.merged.json", text)

    merged = json.loads(text)
    assert list(merged) == list(before)  # unrelated keys kept, in their order
    assert merged["permissions"] == before["permissions"] and merged["env"] == before["env"]
    for event, groups in before["hooks"].items():
        assert merged["hooks"][event][: len(groups)] == groups  # the user's entries first, untouched
    # The user's SessionStart hook mentions cerebro; it is theirs and stays beside ours.
    commands = [h["command"] for g in merged["hooks"]["SessionStart"] for h in g["hooks"]]
    assert commands[0].startswith("echo 'remember: cerebro is our memory tool'")
    assert len(commands) == 1 + 4


def test_second_init_is_a_no_op(cli, user_project: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    files = {p: p.read_bytes() for p in user_project.rglob("*") if p.is_file()}
    again = ok(cli("init"))
    assert "Skipped .claude/settings.json (cerebro hooks already present)" in again.stdout
    assert "Skipped skills (already present, use --force to update)" in again.stdout
    assert "Skipped CLAUDE.md (Cerebro section already present, use --force to update)" in again.stdout
    assert {p: p.read_bytes() for p in user_project.rglob("*") if p.is_file()} == files


def test_force_replaces_only_cerebro_entries_and_drops_the_old_stop_guard(cli, user_project: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    stale = json.loads(settings_of(user_project).read_text())
    # An older scaffold wired the stop-guard; the user also moved our startup entry ahead of theirs.
    stale["hooks"]["Stop"].append(
        {"matcher": "", "hooks": [{"type": "command", "command": 'cerebro stop-guard -p "$CLAUDE_PROJECT_DIR"'}]}
    )
    starts = stale["hooks"]["SessionStart"]
    starts.insert(0, starts.pop(1))
    settings_of(user_project).write_text(json.dumps(stale, indent=2))

    result = ok(cli("init", "--force"))
    assert "Updated .claude/settings.json (replaced cerebro hooks with latest)" in result.stdout
    # Exactly the merge of the user's file: the stop-guard gone, the user's own Stop hook kept.
    assert settings_of(user_project).read_text() == (GOLDEN / "settings.merged.json").read_text()


def test_force_without_a_stop_guard_legacy_keeps_a_user_hook_that_runs_it_differently(cli, project: Path) -> None:
    """Recognition is exact: a user's own stop-guard wiring with other flags is theirs."""
    own = {
        "hooks": {
            "Stop": [
                {
                    "matcher": "",
                    "hooks": [
                        {"type": "command", "command": 'cerebro stop-guard -p "$CLAUDE_PROJECT_DIR" 2>>/tmp/guard.log'}
                    ],
                }
            ]
        }
    }
    settings_of(project).parent.mkdir()
    settings_of(project).write_text(json.dumps(own))
    ok(cli("init", "--embed-provider", "none", "--force"))
    merged = json.loads(settings_of(project).read_text())
    assert merged["hooks"]["Stop"] == own["hooks"]["Stop"]


def test_claudemd_section_replaced_with_force_and_other_sections_kept(cli, user_project: Path) -> None:
    original = (user_project / "CLAUDE.md").read_text()
    ok(cli("init", "--embed-provider", "none"))
    assert (user_project / "CLAUDE.md").read_text() == original  # upstream's heading: already present

    result = ok(cli("init", "--force"))
    assert "Updated CLAUDE.md (replaced Cerebro Memory System section)" in result.stdout
    text = (user_project / "CLAUDE.md").read_text()
    golden("CLAUDE.forced.md", text)
    assert text.startswith("# Acme service\n\nBuild with `make`, test with `make test`.\n\n## Conventions\n")
    assert text.endswith("\n\n## Deployment\nDeploys go through the release train.\n")
    assert "old advice" not in text and text.count("## Cerebro Memory System") == 1
    again = ok(cli("init", "--force"))
    assert "Skipped CLAUDE.md" in again.stdout and (user_project / "CLAUDE.md").read_text() == text


def test_claudemd_section_appended_after_existing_text(cli, project: Path) -> None:
    (project / "CLAUDE.md").write_text("# Notes\nno trailing newline")
    ok(cli("init", "--embed-provider", "none"))
    assert (project / "CLAUDE.md").read_text() == "# Notes\nno trailing newline\n\n" + templates.claudemd_section()


def test_skills_kept_unless_force(cli, project: Path) -> None:
    ok(cli("init", "--embed-provider", "none"))
    mine = project / ".claude" / "skills" / "recall" / "SKILL.md"
    mine.write_text("---\nname: recall\n---\nmy own recall\n")
    ok(cli("init"))
    assert mine.read_text().endswith("my own recall\n")
    result = ok(cli("init", "--force"))
    assert "Updated 1 skill files in .claude/skills/" in result.stdout
    assert mine.read_text() == templates.skill_text("recall")


def test_skip_integration_and_global_write_no_project_files(cli, project: Path) -> None:
    ok(cli("init", "--embed-provider", "none", "--skip-integration"))
    ok(cli("init", "--global", "--embed-provider", "none"))
    assert sorted(p.name for p in project.iterdir()) == []


@pytest.mark.parametrize(("indent", "newline"), [("    ", "\n"), ("\t", "\n"), ("  ", "\r\n")])
def test_a_users_settings_keep_their_indent_and_line_endings(cli, project: Path, indent: str, newline: str) -> None:
    """init rewrote a settings file in its own 2-space style: a 4-space or tab-indented file (or one with CRLF
    line endings) came back reformatted in every line, a diff of the whole file for the user to review."""
    path = settings_of(project)
    path.parent.mkdir(parents=True)
    user = {"permissions": {"allow": ["Bash(make test)"]}, "env": {"EDITOR": "vim"}}
    path.write_bytes(json.dumps(user, indent=indent).replace("\n", newline).encode() + newline.encode())
    ok(cli("init", "--embed-provider", "none"))
    text = path.read_bytes().decode()
    assert text.startswith("{" + newline + indent + '"permissions"') and text.endswith("}" + newline)
    assert text.count("\n") == text.count(newline)  # no line ending of the other kind
    merged = json.loads(text)
    assert merged["permissions"] == user["permissions"] and merged["hooks"] == templates.hooks_config()["hooks"]
    ok(cli("init", "--remove"))
    assert path.read_bytes().decode() == json.dumps(user, indent=indent).replace("\n", newline) + newline


def test_unreadable_settings_refuses_before_anything_is_written(cli, project: Path, isolated_home: Path) -> None:
    settings_of(project).parent.mkdir()
    settings_of(project).write_text('{ // a JSONC comment\n "model": "opus" }')
    result = cli("init", "--embed-provider", "none")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith("cerebro: error: ") and "settings.json is not valid JSON" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert settings_of(project).read_text() == '{ // a JSONC comment\n "model": "opus" }'
    assert sorted(p.name for p in project.iterdir()) == [".claude"]  # no CLAUDE.md, no skills
    assert not paths.project_brain_path(project).exists()  # and no brain


def test_json_output_reports_each_step(cli, user_project: Path) -> None:
    data = ok(cli("init", "--embed-provider", "none", "--format", "json")).json()
    assert data["integration"] == {
        "settings": "updated",
        "settings_file": ".claude/settings.json",
        "skills_written": 5,
        "skills_removed": 0,
        "claudemd": "skipped",
        "claudemd_file": "CLAUDE.md",
        "plugin": None,
        "warnings": [],
        "project": str(user_project),
        "marketplace": str(paths.home() / "claude-plugin"),
    }


# --------------------------------------------------------------------------- template content


def _code_spans(text: str) -> list[str]:
    spans = re.findall(r"```(?:bash)?\n(.*?)```", text, flags=re.S)
    spans += re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    joined = [s.replace("\\\n", " ") for s in spans]
    return [line for span in joined for line in span.splitlines()]


def _help_flags(command: str, cli) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]*", ok(cli(*command.split(), "--help")).stdout)) | {"--format", "--project"}


@pytest.mark.parametrize("name", [*templates.SKILLS, "CLAUDE.md"])
def test_texts_mention_only_commands_and_flags_that_exist(name: str, cli) -> None:
    text = templates.claudemd_section() if name == "CLAUDE.md" else templates.skill_text(name)
    checked = 0
    for line in _code_spans(text):
        for match in re.finditer(
            r"(?<![<\w-])cerebro ((?:relation |config |eval |inbox )?[a-z][a-z-]*)((?:[^|;&]*))", line
        ):
            command, rest = match.group(1), match.group(2)
            top = command.split()[0]
            assert top in COMMANDS, f"{name}: cerebro {command} is not a command"
            flags = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", rest))
            if flags and top not in ("hook", "stop-guard"):
                unknown = flags - _help_flags(command, cli)
                assert not unknown, f"{name}: cerebro {command} has no {unknown}"
            checked += 1
    assert checked, f"{name} mentions no cerebro command"


def test_claudemd_section_carries_the_capability_map() -> None:
    section = templates.claudemd_section()
    assert section.startswith("## Cerebro Memory System\n")
    assert usage.claudemd_block() in section
    for heading in (
        "### Capability map",
        "### Automatic behavior",
        "### Post-compaction recovery",
        "### When to remember",
        "### When to recall",
        "### Close the loop",
        "### Origin identity",
        "### Configuration",
    ):
        assert heading in section


def test_a_heading_quoted_in_a_code_fence_is_not_our_section(cli, project: Path) -> None:
    quoted = "# Docs\n\nExample:\n```md\n## Cerebro Memory System\n```\n\n## Later\ntext\n"
    (project / "CLAUDE.md").write_text(quoted)
    ok(cli("init", "--embed-provider", "none"))
    assert (project / "CLAUDE.md").read_text() == quoted + "\n" + templates.claudemd_section()
    ok(cli("init", "--force"))  # replaces our real section only; the example and its fence stay whole
    text = (project / "CLAUDE.md").read_text()
    assert text.startswith(quoted) and text.count("```") == 2


def test_force_keeps_a_stop_guard_the_user_turned_on(cli, project: Path) -> None:
    wired = {
        "hooks": {
            "Stop": [
                {
                    "matcher": "",
                    "hooks": [{"type": "command", "command": 'cerebro stop-guard -p "$CLAUDE_PROJECT_DIR"'}],
                }
            ]
        }
    }
    settings_of(project).parent.mkdir()
    settings_of(project).write_text(json.dumps(wired))
    ok(cli("init", "--embed-provider", "none"))
    ok(cli("config", "set", "stop_guard_enabled", "true"))
    ok(cli("init", "--force"))
    assert json.loads(settings_of(project).read_text())["hooks"]["Stop"] == wired["hooks"]["Stop"]
    ok(cli("config", "set", "stop_guard_enabled", "false"))  # off: an inert leftover of an old scaffold
    ok(cli("init", "--force"))
    assert "Stop" not in json.loads(settings_of(project).read_text())["hooks"]


@pytest.mark.parametrize("content", ["[1, 2]", '{"hooks": null}', "", '{"hooks": {"Stop": {}}}'])
def test_a_settings_file_we_cannot_merge_fails_init(cli, project: Path, content: str) -> None:
    settings_of(project).parent.mkdir()
    settings_of(project).write_text(content)
    result = cli("init", "--embed-provider", "none", "-q")
    assert result.exit_code == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert settings_of(project).read_text() == content
    assert not paths.project_brain_path(project).exists()


def test_a_step_that_cannot_write_makes_init_exit_non_zero(cli, project: Path) -> None:
    (project / "CLAUDE.md").mkdir()  # a folder where the file should be: the write fails
    result = cli("init", "--embed-provider", "none", "--format", "json")
    assert result.exit_code == 11
    data = json.loads(result.stdout)
    assert data["integration"]["claudemd"] == "failed" and data["integration"]["settings"] == "created"
    error = json.loads(result.stderr.strip().splitlines()[-1])["error"]
    assert (error["name"], error["message"][:22]) == ("integration_failed", "the brain is ready but")


def test_init_makes_no_world_writable_folder_even_under_umask_000(cli, project: Path) -> None:
    """Issue 17: `.claude/skills/` was created 0777 under umask 000 (mkdir's parents ignore the mode given)."""
    import os
    import stat

    old = os.umask(0)
    try:
        assert cli("init", "--embed-provider", "none").exit_code == 0
    finally:
        os.umask(old)
    folders = [project / ".claude", *(p for p in (project / ".claude").rglob("*") if p.is_dir())]
    assert len(folders) > 2  # .claude, skills, one folder per skill
    for folder in folders:
        assert not stat.S_IMODE(folder.stat().st_mode) & 0o022, folder
