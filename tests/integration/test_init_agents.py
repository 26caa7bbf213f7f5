"""`cerebro init --agent claude-code|codex|gemini|cursor`: each agent's MCP server configuration and its
instructions section, merged into the user's files, idempotent, and taken out again by `--remove`."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from cerebro import paths
from cerebro.integration import agents
from cerebro.integration.claude_code import templates

OURS = {"command": "cerebro", "args": ["mcp"]}
CODEX_OURS = {**OURS, "env_vars": ["CEREBRO_HOME"]}
CONFIG = {
    "claude-code": ".mcp.json",
    "codex": ".codex/config.toml",
    "gemini": ".gemini/settings.json",
    "cursor": ".cursor/mcp.json",
}
INSTRUCTIONS = {"claude-code": "CLAUDE.md", "codex": "AGENTS.md", "gemini": "GEMINI.md", "cursor": "AGENTS.md"}
USER_TOML = """# my Codex settings
model = "o4"

[mcp_servers.docs]
command = "docs-server"   # keeps its comment
args = ["--port", "4000"]

[mcp_servers.docs.env]
TOKEN_FILE = "~/.docs"

[profiles.fast]
model = "o4-mini"
"""
USER_JSON = {
    "theme": "dark",
    "mcpServers": {"docs": {"command": "docs-server", "args": ["--port", "4000"], "env": {"A": "é"}}},
    "zzz": [1, 2],
}
USER_AGENTS_MD = "# Working here\n\nRun `make test` before pushing.\n\n## Style\nShort functions.\n"


def ok(result):
    assert result.exit_code == 0, result
    return result


def _tree(project: Path) -> dict[str, bytes]:
    return {str(p.relative_to(project)): p.read_bytes() for p in project.rglob("*") if p.is_file()}


def _servers(project: Path, agent: str) -> dict:
    path = project / CONFIG[agent]
    if agent == "codex":
        return tomllib.loads(path.read_text())["mcp_servers"]
    return json.loads(path.read_text())["mcpServers"]


def _init(cli, *args: str):
    return cli("init", "--embed-provider", "none", *args)


@pytest.fixture
def user_files(project: Path) -> Path:
    """A project whose agents are already configured by the user (their own servers and settings)."""
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text(USER_TOML)
    for agent in ("claude-code", "gemini", "cursor"):
        path = project / CONFIG[agent]
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(USER_JSON, indent=4, ensure_ascii=False))
    (project / "AGENTS.md").write_text(USER_AGENTS_MD)
    (project / "GEMINI.md").write_text("# Gemini notes\n")
    return project


# --------------------------------------------------------------------------- the files, fresh


@pytest.mark.parametrize("agent", agents.NAMES)
def test_each_agent_gets_the_cerebro_server_and_its_instructions(cli, project: Path, agent: str) -> None:
    result = ok(_init(cli, "--agent", agent))
    servers = _servers(project, agent)
    assert servers == {"cerebro": CODEX_OURS if agent == "codex" else OURS}
    instructions = (project / INSTRUCTIONS[agent]).read_text()
    assert instructions == agents.section(agent)
    assert instructions.startswith(templates.SECTION_HEADING + "\n")
    assert f"Created {CONFIG[agent]} (cerebro MCP server)" in result.stdout
    assert paths.project_brain_path(project).exists()
    claude_files = {".claude/settings.json", "CLAUDE.md"}
    written = set(_tree(project))
    if agent == "claude-code":  # the usual hooks, skills and CLAUDE.md, plus .mcp.json
        assert claude_files <= written and (project / ".claude" / "skills" / "recall" / "SKILL.md").exists()
        assert instructions == templates.claudemd_section()
    else:  # only that agent's files
        assert written == {CONFIG[agent], INSTRUCTIONS[agent]}


def test_the_exact_snippets(cli, project: Path) -> None:
    """What the README shows is what init writes."""
    ok(_init(cli, *[arg for name in agents.NAMES for arg in ("--agent", name)]))
    assert (project / ".codex" / "config.toml").read_text() == (
        '[mcp_servers.cerebro]\ncommand = "cerebro"\nargs = ["mcp"]\nenv_vars = ["CEREBRO_HOME"]\n'
    )
    for agent in ("claude-code", "gemini", "cursor"):
        assert json.loads((project / CONFIG[agent]).read_text()) == {"mcpServers": {"cerebro": OURS}}
        assert (project / CONFIG[agent]).read_text() == agents.AGENTS[agent].snippet()


def test_several_agents_share_one_agents_md_section(cli, project: Path) -> None:
    result = ok(_init(cli, "--agent", "codex", "--agent", "cursor", "--format", "json")).json()
    text = (project / "AGENTS.md").read_text()
    assert text.count(templates.SECTION_HEADING) == 1
    assert [a["agent"] for a in result["agents"]] == ["codex", "cursor"]
    assert [a["instructions"] for a in result["agents"]] == ["created", "skipped"]


def test_the_agent_section_is_the_claude_section_with_the_mcp_tools(cli) -> None:
    claude = templates.claudemd_section()
    for agent in ("codex", "gemini", "cursor"):
        text = agents.section(agent)
        assert "through the cerebro MCP tools (or the CLI)" in text
        # The shared rules come from the one template, unchanged in substance.
        for heading in (
            "### Capability map",
            "### When to remember",
            "### When to recall",
            "### Close the loop",
            "### Configuration",
        ):
            assert heading in text and heading in claude
        for line in claude.splitlines():
            if line.startswith("- ") and "→" in line:  # the capability map
                assert line in text
        # Claude Code's specifics are gone: the plugin note, the hooks, the slash skills, its project variable.
        assert "/plugin" not in text and "/remember" not in text and "/recall" not in text
        assert "$CLAUDE_PROJECT_DIR" not in text and "session-start hook" not in text
        assert "`recall`" in text and f"CEREBRO_ORIGIN_ACTOR={agent}" in text


# --------------------------------------------------------------------------- the user's files


def test_user_entries_and_settings_are_kept(cli, user_files: Path) -> None:
    ok(_init(cli, *[arg for name in agents.NAMES for arg in ("--agent", name)]))
    codex = (user_files / ".codex" / "config.toml").read_text()
    assert codex.startswith(USER_TOML)  # comments, layout and quoting untouched; ours appended
    parsed = tomllib.loads(codex)
    assert parsed["model"] == "o4" and parsed["profiles"] == {"fast": {"model": "o4-mini"}}
    assert parsed["mcp_servers"] == {
        "docs": {"command": "docs-server", "args": ["--port", "4000"], "env": {"TOKEN_FILE": "~/.docs"}},
        "cerebro": CODEX_OURS,
    }
    for agent in ("claude-code", "gemini", "cursor"):
        data = json.loads((user_files / CONFIG[agent]).read_text())
        assert list(data) == ["theme", "mcpServers", "zzz"]  # key order kept
        assert data["mcpServers"] == {**USER_JSON["mcpServers"], "cerebro": OURS}
        assert "é" in (user_files / CONFIG[agent]).read_text()  # literal non-ASCII
        assert (user_files / CONFIG[agent]).read_text().startswith('{\n    "theme"')  # the user's 4-space indent
    agents_md = (user_files / "AGENTS.md").read_text()
    assert agents_md.startswith(USER_AGENTS_MD) and agents_md.endswith(agents.section("codex"))
    assert (user_files / "GEMINI.md").read_text() == "# Gemini notes\n\n" + agents.section("gemini")


def test_a_second_run_changes_nothing(cli, user_files: Path) -> None:
    args = [arg for name in agents.NAMES for arg in ("--agent", name)]
    ok(_init(cli, *args))
    before = _tree(user_files)
    data = ok(_init(cli, *args, "--format", "json")).json()
    assert _tree(user_files) == before
    assert {a["config"] for a in data["agents"]} == {"skipped"}
    assert {a["instructions"] for a in data["agents"]} <= {"skipped", None}
    forced = ok(_init(cli, *args, "--force"))
    assert _tree(user_files) == before
    assert "Skipped AGENTS.md (Cerebro section already up to date)" in forced.stdout


def test_a_users_own_cerebro_server_is_kept_unless_force(cli, project: Path) -> None:
    mine = {"mcpServers": {"cerebro": {"command": "/opt/cerebro/bin/cerebro", "args": ["mcp", "--global"]}}}
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text(json.dumps(mine))
    result = ok(_init(cli, "--agent", "cursor"))
    assert "its own 'cerebro' server differs" in result.stdout and "--force" in result.stderr
    assert json.loads((project / ".cursor" / "mcp.json").read_text()) == mine
    removed = ok(cli("init", "--remove", "--agent", "cursor"))
    assert "kept the 'cerebro' server in .cursor/mcp.json" in removed.stderr
    assert json.loads((project / ".cursor" / "mcp.json").read_text()) == mine
    ok(_init(cli, "--agent", "cursor", "--force"))
    assert _servers(project, "cursor") == {"cerebro": OURS}


def test_force_replaces_a_different_codex_table_in_place(cli, project: Path) -> None:
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text(
        '[mcp_servers.cerebro]\ncommand = "cerebro"\nargs = ["mcp", "--global"]\n\n[mcp_servers.docs]\ncommand = "d"\n'
    )
    ok(_init(cli, "--agent", "codex", "--force"))
    text = (project / ".codex" / "config.toml").read_text()
    assert tomllib.loads(text)["mcp_servers"] == {"docs": {"command": "d"}, "cerebro": CODEX_OURS}
    assert "--global" not in text


# --------------------------------------------------------------------------- --remove


def test_remove_takes_out_exactly_what_init_wrote(cli, user_files: Path) -> None:
    before = _tree(user_files)
    args = [arg for name in ("codex", "gemini", "cursor") for arg in ("--agent", name)]
    ok(_init(cli, *args))
    result = ok(cli("init", "--remove", *args))
    assert "Codex: Removed the cerebro MCP server from .codex/config.toml" in result.stdout
    after = _tree(user_files)
    assert after[".codex/config.toml"] == before[".codex/config.toml"]  # byte for byte: comments and all
    assert after["AGENTS.md"] == before["AGENTS.md"] and after["GEMINI.md"] == before["GEMINI.md"]
    for agent in ("gemini", "cursor"):  # re-serialised (init writes JSON in one style), same content
        assert json.loads(after[CONFIG[agent]]) == USER_JSON
    assert after[".mcp.json"] == before[".mcp.json"]  # claude-code was not named: untouched
    assert set(after) == set(before)


def test_remove_on_a_project_init_created_leaves_it_empty(cli, project: Path) -> None:
    args = [arg for name in agents.NAMES for arg in ("--agent", name)]
    ok(_init(cli, *args))
    ok(cli("init", "--remove", *args))
    assert list(project.iterdir()) == []
    assert paths.project_brain_path(project).exists()  # the brain stays without --purge


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_a_symlinked_agent_config_left_empty_keeps_its_link(cli, project: Path, tmp_path: Path, agent: str) -> None:
    """A config our removal leaves with nothing: a link the user made stays, its target holding an empty table
    (``{}`` in JSON, nothing in TOML) rather than our server."""
    target = tmp_path / f"dotfiles-{agent}"
    link = project / CONFIG[agent]
    link.parent.mkdir()
    link.symlink_to(target)
    ok(_init(cli, "--agent", agent))
    assert link.is_symlink() and "cerebro" in target.read_text()
    ok(cli("init", "--remove", "--agent", agent))
    assert link.is_symlink()
    assert target.read_text() == ("" if agent == "codex" else "{}\n")


def test_remove_keeps_agents_md_while_another_wired_agent_reads_it(cli, project: Path) -> None:
    ok(_init(cli, "--agent", "codex", "--agent", "cursor"))
    result = ok(cli("init", "--remove", "--agent", "codex"))
    assert "Kept the Cerebro section in AGENTS.md (another wired agent reads it)" in result.stdout
    assert templates.SECTION_HEADING in (project / "AGENTS.md").read_text()
    assert not (project / ".codex").exists() and (project / ".cursor" / "mcp.json").exists()
    ok(cli("init", "--remove", "--agent", "cursor"))
    assert not (project / "AGENTS.md").exists()


def test_remove_of_one_agent_leaves_the_others_and_claude_code(cli, project: Path) -> None:
    ok(_init(cli))  # plain init: Claude Code's hooks, skills, CLAUDE.md
    ok(_init(cli, "--agent", "gemini"))
    claude_before = {k: v for k, v in _tree(project).items() if not k.startswith((".gemini", "GEMINI"))}
    ok(cli("init", "--remove", "--agent", "gemini"))
    assert _tree(project) == claude_before


def test_plain_remove_also_takes_out_the_mcp_json_entry(cli, project: Path) -> None:
    ok(_init(cli, "--agent", "claude-code"))
    result = ok(cli("init", "--remove"))
    assert "Claude Code: Removed the cerebro MCP server from .mcp.json" in result.stdout
    assert list(project.iterdir()) == []


def test_plain_init_writes_no_agent_files(cli, project: Path) -> None:
    data = ok(_init(cli, "--format", "json")).json()
    assert "agents" not in data
    assert not any((project / CONFIG[name]).exists() for name in agents.NAMES)
    assert not (project / "AGENTS.md").exists() and not (project / "GEMINI.md").exists()


def test_with_the_plugin_enabled_claude_code_gets_no_mcp_json(cli, project: Path) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"cerebro@cerebro": True}}))
    result = ok(_init(cli, "--agent", "claude-code"))
    assert "Skipped .mcp.json: the cerebro@cerebro plugin carries the MCP server" in result.stdout
    assert not (project / ".mcp.json").exists()


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("agent", "text"),
    [
        ("codex", "[mcp_servers.docs\ncommand = 1\n"),
        ("codex", 'mcp_servers = "none"\n'),
        ("gemini", '{\n  // a comment\n  "theme": "dark"\n}\n'),
        ("cursor", "[1, 2]"),
        ("claude-code", '{"mcpServers": ["cerebro"]}'),
    ],
)
def test_an_unparseable_config_is_refused_and_nothing_is_written(
    cli, project: Path, isolated_home: Path, agent: str, text: str
) -> None:
    path = project / CONFIG[agent]
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    before = _tree(project)
    result = _init(cli, "--agent", "cursor" if agent != "cursor" else "codex", "--agent", agent)
    assert result.exit_code == 2, result
    assert len(result.stderr.strip().splitlines()) == 1 and CONFIG[agent] in result.stderr
    assert _tree(project) == before  # not even the other agent's files
    assert not (isolated_home / "projects").exists()  # nor the brain
    removed = cli("init", "--remove", "--agent", agent)
    assert removed.exit_code == 2 and _tree(project) == before


def test_remove_refuses_an_unparseable_config_before_removing_anything(cli, project: Path) -> None:
    ok(_init(cli, "--agent", "codex"))
    (project / ".codex" / "config.toml").write_text("[broken\n")
    before = _tree(project)
    result = cli("init", "--remove", "--agent", "codex")
    assert result.exit_code == 2 and ".codex/config.toml" in result.stderr
    assert _tree(project) == before  # AGENTS.md's section too


def test_plain_remove_leaves_an_unparseable_mcp_json_alone(cli, project: Path) -> None:
    ok(_init(cli))
    (project / ".mcp.json").write_text("{ nope")
    result = ok(cli("init", "--remove"))
    assert ".mcp.json" not in result.stdout and (project / ".mcp.json").read_text() == "{ nope"


def test_an_inline_codex_server_table_is_refused_with_the_snippet(cli, project: Path) -> None:
    (project / ".codex").mkdir()
    original = 'mcp_servers = { docs = { command = "d" } }\n'
    (project / ".codex" / "config.toml").write_text(original)
    result = _init(cli, "--agent", "codex")
    assert result.exit_code == 11 and "add this by hand" in result.stderr and "[mcp_servers.cerebro]" in result.stderr
    assert (project / ".codex" / "config.toml").read_text() == original


@pytest.mark.parametrize(
    "args",
    [
        ["--agent", "codex", "--local"],
        ["--agent", "codex", "--global"],
        ["--agent", "codex", "--skip-integration"],
        ["--agent", "aider"],
    ],
)
def test_agent_flags_that_do_not_go_together(cli, project: Path, isolated_home: Path, args: list[str]) -> None:
    result = cli("init", *args)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1, result
    assert list(project.iterdir()) == [] and not (isolated_home / "projects").exists()
