"""What Cerebro writes into Claude Code: hook commands, skills and the CLAUDE.md section.

One source for both delivery routes — ``cerebro init`` (into a project's ``.claude/``) and the plugin in this
repository (``claude-plugin/cerebro/``, generated from here; a test keeps the two in lockstep). The plugin's
commands are init's behind a self-gate, so a plugin installed for every project stays silent where there is
no brain (and where the CLI is not installed).
"""

from __future__ import annotations

import json
import re
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

# (event, matcher, command), in the order they are written. A resumed, cleared or compacted session lost
# what was primed, so those sources re-arm prime first. PreCompact is not wired: there is nothing for
# cerebro to do before a compaction (upstream appended to a log file in the user's repository).
HOOKS: tuple[tuple[str, str, str], ...] = (
    ("SessionStart", "startup", CAPTURE + _PRIME_SESSION),
    ("SessionStart", "resume", CAPTURE + f"{_REARM}; {_PRIME_SESSION}"),
    ("SessionStart", "compact", CAPTURE + f"{_REARM}; {_PRIME_SESSION}"),
    ("SessionStart", "clear", CAPTURE + f"{_REARM}; {_PRIME_SESSION}"),
    ("UserPromptSubmit", "", CAPTURE + _feed("prime --event userpromptsubmit")),
    ("PostCompact", "", CAPTURE + _REARM),
    ("SessionEnd", "", CAPTURE + f"{_feed('session-end')}; true"),
)

# Seconds each event's hook may take before Claude Code cancels it (its default is 60 s, 1.5 s for
# SessionEnd). Ours finish in a process start-up plus a prime (~0.1–0.3 s); the margin is for a loaded
# machine. SessionEnd only enqueues its work and starts a detached worker (ADR 0017).
TIMEOUTS = {"SessionStart": 15, "UserPromptSubmit": 15, "PostCompact": 10, "SessionEnd": 10}

# init's hooks live in a committed settings file: a teammate without cerebro must see nothing at all
# (no "exit 127 … cerebro: not found" on every prompt), so each command first checks that it can run.
INIT_GATE = "command -v cerebro >/dev/null 2>&1 || exit 0; "

# The plugin runs for every project of a user who installed it: leave the ones with no brain alone (a
# missing CLI fails the probe too, and `|| exit 0` keeps that silent).
PLUGIN_GATE = f"cerebro hook has-brain -p {PROJECT} >/dev/null 2>&1 || exit 0; "


def init_command(command: str) -> str:
    return INIT_GATE + command


# Commands an older scaffold wrote that are ours to remove on `init --force` (recognised exactly, never by
# the substring "cerebro": a user's own hook may mention it). The stop-guard is opt-in and no longer wired.
LEGACY_COMMANDS: tuple[tuple[str, str], ...] = (("Stop", f"cerebro stop-guard -p {PROJECT}"),)

# What a hook command written by any cerebro — this one's older scaffolds and plugin, upstream Go
# cerebro's from 1.x to 3.4 — does, recognised by shape: a hook calling a cerebro hook/prime/gc, or
# writing upstream's session files. A command matching one of these is a cerebro hook whoever wrote it,
# so `init --force` replaces it and `init --remove` takes it out.
_CEREBRO_HOOK_SHAPES = (
    r"\bcerebro\s+hook\s+(?:prime|post-compact|session-end|has-brain|catch-up)\b",
    r"\bcerebro\s+recall\s+--prime\b",
    r"\.cerebro-(?:compact|gc)\.log\b",
    r"/tmp/cerebro-primed-",  # noqa: S108 - recognises a file name upstream's hooks used; writes nothing
)


# The plumbing those hooks run around their cerebro calls (upstream's read the session id with grep/head/cut, kept
# a marker file, echoed a log's last line): the first word of each of their shell steps is one of these, or cerebro,
# or a variable's assignment. A user's own hook that also calls cerebro (`./backup.sh && cerebro hook session-end`)
# runs something else too: it is theirs, and init neither replaces nor removes it.
_PLUMBING = frozenset(
    [
        "cerebro",
        "echo",
        "printf",
        "grep",
        "head",
        "cut",
        "tail",
        "touch",
        "rm",
        "date",
        "cat",
        "true",
        "exit",
        "[",
        "test",
        "command",
        "fi",
        ":",
    ]
)
_STEP = r"\|\||&&|[;|\n]"  # how a shell command line chains its steps (``2>&1`` is not one)
_ASSIGNMENT = r"^[A-Za-z_][A-Za-z0-9_]*="


def is_cerebro_hook(command: object) -> bool:
    """Does this hook command do a cerebro session hook's work (any version, ours or upstream's) — and nothing else?"""
    import re

    if not isinstance(command, str) or not any(re.search(shape, command) for shape in _CEREBRO_HOOK_SHAPES):
        return False
    for step in re.split(_STEP, command):
        words = step.replace("(", " ").replace(")", " ").split()
        while words and words[0] in ("if", "then", "else", "do", "!"):
            words = words[1:]
        if words and not (words[0] in _PLUMBING or re.match(_ASSIGNMENT, words[0])):
            return False
    return True


SKILLS = ("remember", "recall", "consolidate", "dream", "develop")
PLUGIN_SKILLS = (*SKILLS, "rules")
SECTION_HEADING = "## Cerebro Memory System"


def _template(name: str) -> str:
    return resources.files("cerebro.integration.claude_code").joinpath("assets", name).read_text(encoding="utf-8")


def handler(event: str, command: str, *, plugin: bool = False) -> dict[str, Any]:
    """One hook handler as Claude Code reads it, gated for its delivery route."""
    gated = (PLUGIN_GATE + command) if plugin else init_command(command)
    return {"type": "command", "command": gated, "timeout": TIMEOUTS[event]}


def hooks_config(*, plugin: bool = False) -> dict[str, Any]:
    """``{"hooks": {Event: [matcher groups]}}`` — the shape of settings.json and of a plugin's hooks.json."""
    events: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, command in HOOKS:
        events.setdefault(event, []).append({"matcher": matcher, "hooks": [handler(event, command, plugin=plugin)]})
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


def dump_json(data: object, *, like: str | None = None) -> str:
    """Claude Code's settings style: 2-space indent, literal non-ASCII and ``&&``/``>>``, final newline. ``like``: the
    file's text before this write (read as bytes: universal newlines would turn CRLF into LF), whose indent (4 spaces,
    a tab) and line endings are kept — a user's file is not reformatted because a hook was added to it."""
    indent: str | int = 2
    found = re.match(r"\s*[{\[]\r?\n([ \t]+)\S", like or "")
    if found:
        indent = found.group(1)
    text = json.dumps(data, indent=indent, ensure_ascii=False) + "\n"
    return text.replace("\n", "\r\n") if like and "\r\n" in like else text
