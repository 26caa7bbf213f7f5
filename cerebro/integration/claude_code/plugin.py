"""The Claude Code plugin and marketplace files in this repository, generated from :mod:`templates`.

``python -m cerebro.integration.claude_code.plugin [ROOT]`` (``make plugin``) rewrites them; a test fails when
the committed files drift from what this renders, so the plugin and ``cerebro init`` never disagree.

Users install it with ``/plugin marketplace add <this repository>`` then ``/plugin install cerebro@cerebro``.
The hooks call the ``cerebro`` command on PATH and gate themselves on ``cerebro hook has-brain``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cerebro import __version__, paths
from cerebro.integration import agents
from cerebro.integration.claude_code import templates

PLUGIN_DIR = "claude-plugin/cerebro"
DESCRIPTION = (
    "Local-first persistent memory for Claude Code: a per-project SQLite brain primed at session start, "
    "re-primed after compaction, garbage-collected at session end. Skills: /cerebro:remember, /cerebro:recall, "
    "/cerebro:consolidate, /cerebro:dream, /cerebro:develop, /cerebro:rules; MCP server cerebro (cerebro mcp). "
    "Needs the cerebro CLI on PATH "
    "(see the README) and a brain per project (cerebro init --skip-integration)."
)


def render() -> dict[str, str]:
    """Relative path → file text, for every file of the marketplace and the plugin."""
    files = {
        ".claude-plugin/marketplace.json": templates.dump_json(
            {
                "name": "cerebro",
                "owner": {"name": "Cerebro maintainers"},
                "description": "Cerebro: local-first persistent memory for coding agents (a per-project SQLite brain).",
                "plugins": [
                    {
                        "name": "cerebro",
                        "source": f"./{PLUGIN_DIR}",
                        "description": "Local-first persistent memory for coding agents (requires the cerebro CLI).",
                        "version": __version__,
                    }
                ],
            }
        ),
        f"{PLUGIN_DIR}/.claude-plugin/plugin.json": templates.dump_json(
            {
                "name": "cerebro",
                "version": __version__,
                "displayName": "Cerebro Memory",
                "description": DESCRIPTION,
                "author": {"name": "Cerebro maintainers"},
                "license": "MIT",
                "keywords": ["memory", "sqlite", "knowledge-graph", "recall"],
                # No "hooks" key: Claude Code loads hooks/hooks.json by convention, and naming it again makes
                # it report "Duplicate hooks file detected" (the plugin is then flagged hook-load-failed).
            }
        ),
        f"{PLUGIN_DIR}/hooks/hooks.json": templates.dump_json(templates.hooks_config(plugin=True)),
        # The cerebro MCP server, found by convention at the plugin root (as `init --agent claude-code` writes
        # .mcp.json into a project); Claude Code starts it with CLAUDE_PROJECT_DIR set to the project.
        f"{PLUGIN_DIR}/.mcp.json": agents.AGENTS["claude-code"].snippet(),
    }
    for name in templates.PLUGIN_SKILLS:
        files[f"{PLUGIN_DIR}/skills/{name}/SKILL.md"] = templates.skill_text(name)
    return files


def write(root: Path, *, mode: int = 0o644) -> list[Path]:
    """The plugin's files under ``root``, each written aside and renamed into place (a symlink planted at one of
    them is replaced, never written through) with ``mode`` whatever the umask: its hooks and MCP server are commands
    Claude Code runs, so only their owner may change them."""
    written = []
    for relative, text in render().items():
        target = root / relative
        paths.ensure_private_dir(target.parent)
        with paths.written_in_one_step(target, overwrite=True, mode=mode) as partial:
            partial.write_text(text, encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1] if len(sys.argv) > 1 else ".")):
        print(path)
