"""The Claude Code plugin in this repository: shape, paths, lockstep with init, and its hooks run for real."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cerebro import Brain, paths
from cerebro.integration.claude_code import plugin, templates

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / plugin.PLUGIN_DIR
EVENTS = {"SessionStart", "UserPromptSubmit", "PostCompact", "SessionEnd"}


def test_committed_plugin_files_match_the_templates() -> None:
    """`make plugin` regenerates them; this fails when a template changed and the plugin did not."""
    rendered = plugin.render()
    for relative, text in rendered.items():
        assert (REPO / relative).read_text(encoding="utf-8") == text, f"{relative} is stale: run make plugin"
    on_disk = {str(p.relative_to(REPO)) for p in PLUGIN.rglob("*") if p.is_file()}
    assert on_disk == {r for r in rendered if r.startswith(plugin.PLUGIN_DIR)}


def test_marketplace_and_manifest_shape() -> None:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert market["name"] == "cerebro" and market["owner"]["name"]
    [entry] = market["plugins"]
    assert entry["name"] == "cerebro"  # /plugin install cerebro@cerebro
    source = (REPO / entry["source"]).resolve()
    assert source == PLUGIN.resolve()
    manifest = json.loads((source / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "cerebro" and manifest["version"]
    # hooks/hooks.json and skills/ are found by convention; naming the standard hooks file again in the
    # manifest makes Claude Code report a duplicate hooks file.
    assert "hooks" not in manifest and (source / "hooks" / "hooks.json").is_file()
    assert "skills" not in manifest
    assert sorted(p.name for p in (source / "skills").iterdir()) == sorted(templates.PLUGIN_SKILLS)
    for skill in (source / "skills").iterdir():
        assert (skill / "SKILL.md").read_text().startswith(f"---\nname: {skill.name}\n")
    # Only plugin.json lives in .claude-plugin/; components sit at the plugin root.
    assert [p.name for p in (source / ".claude-plugin").iterdir()] == ["plugin.json"]


def test_plugin_hooks_shape_and_self_gate() -> None:
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == EVENTS  # no Stop: the stop-guard is opt-in and wired by hand
    commands = [h["command"] for groups in hooks.values() for g in groups for h in g["hooks"]]
    assert len(commands) == len(templates.HOOKS)
    for command in commands:
        assert command.startswith(templates.PLUGIN_GATE)
        assert "recall --prime" not in command and "stop-guard" not in command
        # rcj6: every `cerebro hook` call is fed the captured stdin, never the already-consumed stream.
        calls = re.findall(r"(.{0,24})cerebro hook (?!has-brain)", command)
        assert all(before.endswith("printf '%s' \"$INPUT\" | ") for before in calls), command
    assert "--event sessionstart" in json.dumps(hooks)
    starts = {g["matcher"] for g in hooks["SessionStart"]}
    assert starts == {"startup", "resume", "compact", "clear"}


def test_rules_skill_carries_the_claudemd_section_verbatim() -> None:
    rules = (PLUGIN / "skills" / "rules" / "SKILL.md").read_text()
    assert rules.startswith("---\nname: rules\n")
    assert templates.claudemd_section() in rules


# --------------------------------------------------------------------------- the hooks, run by bash


def _payload(session: str, event: str, **extra: object) -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/x.jsonl",
            "cwd": "/tmp",
            "hook_event_name": event,
            "permission_mode": "default",
            "unknown_future": [1],
            **extra,
        }
    )


def _run(command: str, home: Path, project: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_ENV_FILE", "CLAUDE_SESSION_ID")}
    env.update(
        CEREBRO_HOME=str(home),
        CLAUDE_PROJECT_DIR=str(project),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return subprocess.run(
        ["bash", "-c", command], input=stdin, capture_output=True, text=True, env=env, timeout=120, cwd=project
    )


def _wired(settings: dict) -> dict[tuple[str, str], str]:
    return {
        (event, g["matcher"]): h["command"]
        for event, groups in settings["hooks"].items()
        for g in groups
        for h in g["hooks"]
    }


@pytest.fixture
def init_project(project: Path, isolated_home: Path, cli) -> Path:
    assert cli("init", "--embed-provider", "none").exit_code == 0
    with Brain.open(paths.project_brain_path(project)) as brain:
        for i in range(3):
            brain.add(f"plugin parity fact {i}", type="concept", importance=0.7)
    return project


SEQUENCE = [  # a session's life: start, a prompt, a compaction, the re-prime, the end
    ("SessionStart", "startup", {"source": "startup"}),
    ("UserPromptSubmit", "", {"prompt": "hi"}),
    ("PostCompact", "", {"trigger": "auto"}),
    ("SessionStart", "compact", {"source": "compact"}),
    ("SessionEnd", "", {"reason": "prompt_input_exit"}),
]


def same_but_nonce(text: str) -> str:
    return re.sub(r"memory-[0-9a-f]{8}", "memory-NONCE", text)


def test_plugin_hooks_give_init_hooks_outputs(init_project: Path, isolated_home: Path, tmp_path: Path) -> None:
    """Each event, run from init's settings.json and from the plugin's hooks.json, in twin copies of the
    same brain: the same stdout, exit 0 everywhere."""
    init_hooks = _wired(json.loads((init_project / ".claude" / "settings.json").read_text()))
    plugin_hooks = _wired(json.loads((PLUGIN / "hooks" / "hooks.json").read_text()))
    twin = tmp_path / "twin-home"
    shutil.copytree(isolated_home, twin)
    outputs = []
    for event, matcher, extra in SEQUENCE:
        if event == "PostCompact":  # compaction comes minutes after the prime, not milliseconds
            for home in (isolated_home, twin):
                for claim in (home / "session-state").iterdir():
                    os.utime(claim, (claim.stat().st_mtime - 600,) * 2)
        stdin = _payload("parity", event, **extra)
        ran_init = _run(init_hooks[(event, matcher)], isolated_home, init_project, stdin)
        ran_plugin = _run(plugin_hooks[(event, matcher)], twin, init_project, stdin)
        assert ran_init.returncode == ran_plugin.returncode == 0, (ran_init.stderr, ran_plugin.stderr)
        # The framing's delimiter is random for every prime: the same text up to it.
        assert same_but_nonce(ran_init.stdout) == same_but_nonce(ran_plugin.stdout), event
        outputs.append(ran_init.stdout)
    start = json.loads(outputs[0])
    assert start["systemMessage"] == "Cerebro online. 3 memories loaded."
    assert outputs[1] == ""  # primed at SessionStart: the prompt fallback stays silent
    assert json.loads(outputs[3])["hookSpecificOutput"]["additionalContext"].count("plugin parity fact") == 3
    # Nothing written into the user's repository beyond what init announced.
    assert sorted(p.name for p in init_project.iterdir()) == [".claude", "CLAUDE.md"]


def test_plugin_is_silent_without_a_brain_and_init_hooks_say_so_once(project: Path, isolated_home: Path) -> None:
    plugin_hooks = _wired(json.loads((PLUGIN / "hooks" / "hooks.json").read_text()))
    for event, matcher, extra in SEQUENCE:
        ran = _run(plugin_hooks[(event, matcher)], isolated_home, project, _payload("none", event, **extra))
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", ""), event
    assert list(project.iterdir()) == []  # nothing written into the repository
    start = templates.hooks_config()["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    first = _run(start, isolated_home, project, _payload("n", "SessionStart", source="startup"))
    assert json.loads(first.stdout)["systemMessage"] == "Cerebro: no brain initialized. Run: cerebro init"
    again = _run(start, isolated_home, project, _payload("n", "SessionStart", source="startup"))
    assert (again.returncode, again.stdout) == (0, "")  # once per session


@pytest.mark.parametrize("source", ["plugin", "init"])
def test_hooks_are_silent_when_the_cli_is_missing(project: Path, isolated_home: Path, source: str) -> None:
    """A teammate without cerebro shares the committed settings.json: no "exit 127 … not found", ever."""
    wired = (
        json.loads((PLUGIN / "hooks" / "hooks.json").read_text()) if source == "plugin" else templates.hooks_config()
    )
    assert "cerebro" not in " ".join(os.listdir("/usr/bin") + os.listdir("/bin"))
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(project), "HOME": str(isolated_home)}
    for (event, _), command in _wired(wired).items():
        ran = subprocess.run(["bash", "-c", command], input="{}", capture_output=True, text=True, env=env, timeout=60)
        assert (ran.returncode, ran.stdout, ran.stderr) == (0, "", ""), event


def test_every_hook_declares_a_timeout_inside_the_clients_limits() -> None:
    for wired in (templates.hooks_config(), json.loads((PLUGIN / "hooks" / "hooks.json").read_text())):
        for event, groups in wired["hooks"].items():
            for group in groups:
                for handler in group["hooks"]:
                    assert handler["timeout"] == templates.TIMEOUTS[event], event
