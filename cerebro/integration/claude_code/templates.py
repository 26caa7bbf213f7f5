"""What Cerebro writes into Claude Code: hook commands, skills and the CLAUDE.md section.

One source for both delivery routes — ``cerebro init`` (into a project's ``.claude/``) and the plugin in this
repository (``claude-plugin/cerebro/``, generated from here; a test keeps the two in lockstep). The plugin's
commands are init's behind a self-gate, so a plugin installed for every project stays silent where there is
no brain (and where the CLI is not installed).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

PROJECT = '"$CLAUDE_PROJECT_DIR"'
# Every `cerebro hook` reads the hook's stdin JSON (the session id lives there). The JSON is captured once and
# fed to each call: the first call in a chain would otherwise consume stdin and the next would see EOF.
CAPTURE = "INPUT=$(cat); "


def _feed(subcommand: str) -> str:
    return f"printf '%s' \"$INPUT\" | cerebro hook {subcommand} -p {PROJECT}"


_PRIME_SESSION = _feed("prime --event sessionstart")
_REARM = _feed("post-compact")
_COMPACT_LOG = 'echo "$(date -Iseconds) compaction {what}" >> "$CLAUDE_PROJECT_DIR/.cerebro-compact.log" 2>/dev/null; true'

# (event, matcher, command), in the order they are written. A resumed, cleared or compacted session lost
# what was primed, so those sources re-arm prime first.
HOOKS: tuple[tuple[str, str, str], ...] = (
    ("SessionStart", "startup", CAPTURE + _PRIME_SESSION),
    ("SessionStart", "resume", CAPTURE + f"{_REARM}; {_PRIME_SESSION}"),
    ("SessionStart", "compact", CAPTURE + f"{_REARM}; {_PRIME_SESSION}"),
    ("SessionStart", "clear", CAPTURE + f"{_REARM}; {_PRIME_SESSION}"),
    ("UserPromptSubmit", "", CAPTURE + _feed("prime --event userpromptsubmit")),
    ("PreCompact", "", _COMPACT_LOG.format(what="starting")),
    ("PostCompact", "", CAPTURE + f"{_REARM}; " + _COMPACT_LOG.format(what="completed")),
    ("SessionEnd", "", CAPTURE + f"{_feed('session-end')}; true"),
)

# The plugin runs for every project of a user who installed it: leave the ones with no brain alone.
PLUGIN_GATE = f"cerebro hook has-brain -p {PROJECT} >/dev/null 2>&1 || exit 0; "

# Commands an older scaffold wrote that are ours to remove on `init --force` (recognised exactly, never by
# the substring "cerebro": a user's own hook may mention it). The stop-guard is opt-in and no longer wired.
LEGACY_COMMANDS: tuple[tuple[str, str], ...] = (
    ("Stop", f"cerebro stop-guard -p {PROJECT}"),
)

SKILLS = ("remember", "recall", "consolidate", "dream", "develop")
PLUGIN_SKILLS = (*SKILLS, "rules")
SECTION_HEADING = "## Cerebro Memory System"


def _template(name: str) -> str:
    return resources.files("cerebro.integration.claude_code").joinpath("assets", name).read_text(encoding="utf-8")


def hooks_config(*, plugin: bool = False) -> dict[str, Any]:
    """``{"hooks": {Event: [matcher groups]}}`` — the shape of settings.json and of a plugin's hooks.json."""
    events: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, command in HOOKS:
        handler = {"type": "command", "command": (PLUGIN_GATE + command) if plugin else command}
        events.setdefault(event, []).append({"matcher": matcher, "hooks": [handler]})
    return {"hooks": events}


def skill_text(name: str) -> str:
    if name == "rules":
        return rules_skill()
    if name not in SKILLS:
        raise KeyError(name)
    return _template(f"skills/{name}.md")


def claudemd_section() -> str:
    from cerebro.integration.claude_code import usage

    return _template("claudemd_section.md").replace("{capabilities}", usage.claudemd_block())


def rules_skill() -> str:
    """Plugins cannot load a CLAUDE.md, so the plugin carries the section as a skill, verbatim."""
    return (
        "---\n"
        "name: rules\n"
        "description: Cerebro's working rules — when to remember, recall and close the loop, and which command fits"
        " which situation. Load at session start or whenever unsure how to use Cerebro.\n"
        "disable-model-invocation: false\n"
        "allowed-tools: Bash(cerebro *)\n"
        "---\n\n"
        "# Cerebro rules\n\n"
        "Plugins cannot load a CLAUDE.md, so these are the rules `cerebro init` would have written there.\n\n"
        + claudemd_section()
    )


def dump_json(data: Any) -> str:
    """Claude Code's settings style: 2-space indent, literal non-ASCII and ``&&``/``>>``, final newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
