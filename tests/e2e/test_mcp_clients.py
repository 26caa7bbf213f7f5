"""The cerebro MCP server inside real agent clients, wired by `cerebro init --agent …`, against fake model APIs.

The fake model (scripted) calls cerebro's `recall` tool; the client starts `cerebro mcp` from the project's
configuration file that init wrote, calls the tool, and sends its result back to the model — where the test
finds the stored memory's text.

How each client is driven headless (pinned versions in tests/e2e/node/package-lock.json):

- Claude Code: `claude -p` (no approval needed for a project's `.mcp.json` in `-p` mode; an interactive
  session asks once, or `enableAllProjectMcpServers` / `enabledMcpjsonServers` in settings pre-approve it),
  `--allowedTools mcp__cerebro__recall` (the tool's permission), `MCP_CONNECTION_NONBLOCKING=false` (the first
  model request waits for the server to connect instead of going out without its tools) and
  `ENABLE_TOOL_SEARCH=false` (MCP tools are offered directly instead of behind the ToolSearch tool). Claude
  Code starts the server in the project with `CLAUDE_PROJECT_DIR` set.
- Codex: `codex exec --json --skip-git-repo-check` with a custom `model_provider` (`wire_api = "responses"`)
  at the fake and the project marked trusted in `CODEX_HOME/config.toml` (see `codex_client`), plus
  `-c mcp_servers.cerebro.required=true` (the session waits for the server before the first request) and
  `-c mcp_servers.cerebro.startup_timeout_sec=60` (room for a loaded machine). Nothing about approvals: exec's
  approval policy is `never`, under which Codex runs an MCP tool annotated read-only (`recall` is) and refuses
  any other ("MCP tool call requires approval, but approval policy is never"; a user would add
  `default_tools_approval_mode = "approve"` to the server's table for that). Codex offers each server's tools
  as a `namespace` tool `mcp__cerebro` holding `recall`, runs the server in the folder it was started in, and
  passes it only the environment variables it forwards (`env_vars = ["CEREBRO_HOME"]` in init's entry).
"""

from __future__ import annotations

import json
import tomllib

import pytest

from .client import REPO, World
from .codex_client import CodexWorld

pytestmark = pytest.mark.e2e

MEMORY = "The deploy password rotation runs every Tuesday at 04:00 UTC"
QUERY = {"query": "deploy password rotation"}
CLAUDE_MCP_ENV = {"MCP_CONNECTION_NONBLOCKING": "false", "ENABLE_TOOL_SEARCH": "false", "MCP_TIMEOUT": "60000"}
CODEX_MCP_OVERRIDES = (
    "-c",
    "mcp_servers.cerebro.required=true",
    "-c",
    "mcp_servers.cerebro.startup_timeout_sec=60",
)


def test_claude_code_recalls_through_the_mcp_server_init_registered(world: World) -> None:
    world.init("--agent", "claude-code")
    world.add(MEMORY)
    assert json.loads((world.project / ".mcp.json").read_text()) == {
        "mcpServers": {"cerebro": {"command": "cerebro", "args": ["mcp"]}}
    }
    world.api.mode, world.api.tool_name, world.api.tool_input = "tool", "mcp__cerebro__recall", QUERY

    run = world.claude(
        "When does the deploy password rotate?",
        "--allowedTools",
        "mcp__cerebro__recall",
        env=world.env(**CLAUDE_MCP_ENV),
    )

    assert run.returncode == 0, run.describe()
    offered = world.api.conversation_requests()[0].tool_names if world.api.conversation_requests() else []
    assert "mcp__cerebro__recall" in offered, f"the client did not offer cerebro's tool: {offered}\n{run.describe()}"
    assert world.api.tool_results, f"the client never sent the tool's result back\n{run.describe()}"
    assert MEMORY in json.dumps(world.api.tool_results, ensure_ascii=False), world.api.tool_results
    assert run.debug_lines('MCP server "cerebro"', "Successfully connected"), run.describe()
    assert run.result and run.result.get("result") == world.api.final_text, run.result


def _install_plugin(world: World) -> None:
    for args in (("plugin", "marketplace", "add", str(REPO)), ("plugin", "install", "cerebro@cerebro")):
        out = world.claude_cli(*args)
        assert out.returncode == 0, f"claude {' '.join(args)}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"


def test_the_plugin_ships_the_mcp_server(world: World) -> None:
    """The plugin's .mcp.json alone: Claude Code names its tools mcp__plugin_cerebro_cerebro__*."""
    _install_plugin(world)
    world.init("--skip-integration")
    world.add(MEMORY)
    tool = "mcp__plugin_cerebro_cerebro__recall"
    world.api.mode, world.api.tool_name, world.api.tool_input = "tool", tool, QUERY

    run = world.claude("When does the deploy password rotate?", "--allowedTools", tool, env=world.env(**CLAUDE_MCP_ENV))

    assert run.returncode == 0, run.describe()
    assert world.api.tool_results, f"the client never sent the tool's result back\n{run.describe()}"
    assert MEMORY in json.dumps(world.api.tool_results, ensure_ascii=False), world.api.tool_results


def test_plugin_and_mcp_json_together_offer_the_tools_once(world: World) -> None:
    """A project .mcp.json from an earlier `init --agent claude-code`, then the plugin: the client keeps the
    project's server and suppresses the plugin's identical one, so each tool is offered once."""
    world.init("--agent", "claude-code")
    _install_plugin(world)
    world.add(MEMORY)

    run = world.claude("hello", env=world.env(**CLAUDE_MCP_ENV))

    assert run.returncode == 0, run.describe()
    ours = [name for name in world.api.conversation_requests()[0].tool_names if "cerebro" in name]
    assert "mcp__cerebro__recall" in ours, ours
    assert not [name for name in ours if name.startswith("mcp__plugin_cerebro")], ours
    assert run.debug_lines("Suppressing plugin MCP server", "duplicates"), run.describe()


def test_codex_recalls_through_the_mcp_server_init_registered(codex_world: CodexWorld) -> None:
    codex_world.init("--agent", "codex")
    codex_world.add(MEMORY)
    config = tomllib.loads((codex_world.project / ".codex" / "config.toml").read_text())
    assert config == {"mcp_servers": {"cerebro": {"command": "cerebro", "args": ["mcp"], "env_vars": ["CEREBRO_HOME"]}}}
    api = codex_world.api
    api.mode, api.tool_name, api.tool_input = "tool", "mcp__cerebro__recall", QUERY

    run = codex_world.codex("When does the deploy password rotate?", *CODEX_MCP_OVERRIDES)

    assert run.returncode == 0, run.describe()
    conversation = api.conversation_requests()
    assert conversation, f"the fake API got no conversation request: {[r.path for r in api.requests]}\n{run.describe()}"
    assert "mcp__cerebro__recall" in conversation[0].tool_names, (
        f"the client did not offer cerebro's tool: {conversation[0].tool_names}\n{run.describe()}"
    )
    calls = run.items("mcp_tool_call")
    assert [(c.get("server"), c.get("tool"), c.get("status")) for c in calls] == [("cerebro", "recall", "completed")], (
        run.describe()
    )
    assert api.tool_results, f"the client never sent the tool's output back\n{run.describe()}"
    assert MEMORY in json.dumps(api.tool_results, ensure_ascii=False), api.tool_results
    assert [m.get("text") for m in run.items("agent_message")][-1:] == [api.final_text], run.describe()
