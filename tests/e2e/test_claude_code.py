"""Cerebro inside the real Claude Code CLI (pinned in tests/e2e/node/package-lock.json), against a fake API.

What is checked is what a user would see: a session starts primed with the project's memories, its end-of-
session work (gc, then metrics ingest) gets done however the session ended, a machine without `cerebro` on
PATH sees no hook errors, the plugin and marketplace validate, and plugin + `cerebro init` do not double
anything.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from cerebro.integration.claude_code.templates import PLUGIN_SKILLS

from .client import REPO, World, load_cpu, offered_skills, query, wait_for

pytestmark = pytest.mark.e2e

MEMORY = "The deploy password rotation runs every Tuesday at 04:00 UTC"
STALE = "Scratch note from an abandoned spike: the staging VM was called tortoise-7"
END_OF_SESSION_DEADLINE = 60.0


def _init_with_memories(world: World) -> str:
    """``cerebro init`` plus the distinctive memory and a stale one that gc's retention formula archives
    (tiny importance, untouched since 2000). Returns the stale memory's id."""
    world.init()
    world.add(MEMORY)
    stale = world.add(STALE, "--importance", "0.001")
    world.backdate(stale)
    return stale


def _end_of_session_state(world: World, session_id: str, stale_id: str) -> str:
    turns = query(world.metrics_path, "SELECT COUNT(*) FROM turn_metrics WHERE session_id = ?", (session_id,))
    archived = query(world.brain_path, "SELECT archive_reason FROM nodes_archive WHERE id = ?", (stale_id,))
    active = query(world.brain_path, "SELECT status FROM nodes WHERE id = ?", (stale_id,))
    log = world.cerebro_home / "logs" / "aftercare.log"
    return (
        f"metrics db {world.metrics_path} exists: {world.metrics_path.exists()}; turns of {session_id}: {turns}\n"
        f"stale memory archived: {archived}; still in nodes: {active}\n"
        f"aftercare log: {log.read_text(errors='replace')[-2000:] if log.exists() else '(none)'}"
    )


def _assert_end_of_session_work_done(world: World, session_id: str, stale_id: str, run_text: str) -> None:
    """Poll until the session's turns are in the metrics database (ingest ran) and the stale memory is in the
    archive (gc ran) — the hook itself may have handed the work to something that outlives the client."""

    def ingested() -> bool:
        rows = query(world.metrics_path, "SELECT COUNT(*) FROM turn_metrics WHERE session_id = ?", (session_id,))
        return bool(rows and rows[0][0] >= 1)

    def collected() -> bool:
        rows = query(world.brain_path, "SELECT archive_reason FROM nodes_archive WHERE id = ?", (stale_id,))
        gone = query(world.brain_path, "SELECT COUNT(*) FROM nodes WHERE id = ?", (stale_id,))
        return bool(rows) and gone == [(0,)]

    wait_for(
        lambda: ingested() and collected(),
        timeout=END_OF_SESSION_DEADLINE,
        what="the end-of-session work (metrics ingest of the session's turns, gc archiving the stale memory)",
        diagnose=lambda: _end_of_session_state(world, session_id, stale_id) + "\n" + run_text,
    )


def _session_end_lines(debug_log: str) -> list[str]:
    return [line for line in debug_log.splitlines() if "SessionEnd" in line]


# --------------------------------------------------------------------------- (a) primed at session start


def test_session_start_hook_primes_the_model_with_the_projects_memories(world: World) -> None:
    world.init()
    world.add(MEMORY)

    run = world.claude("hello")

    assert run.returncode == 0, run.describe()
    primed = [line for line in run.debug_lines("Hook SessionStart") if "provided additionalContext" in line]
    assert primed, f"no SessionStart hook provided additionalContext\n{run.describe()}"
    lines = run.debug_log.splitlines()
    finished = [
        i for i, line in enumerate(lines) if "SessionStart:startup" in line and "finished with status 0" in line
    ]
    assert finished, f"the SessionStart hook did not finish with status 0\n{run.describe()}"
    assert any(
        "Successfully parsed and validated hook JSON output" in line for i in finished for line in lines[i + 1 : i + 4]
    ), run.describe()
    session_start = [e for e in run.hook_responses if e.get("hook_event") == "SessionStart"]
    assert session_start and all(e.get("exit_code") == 0 for e in session_start), run.hook_responses
    conversation = world.api.conversation_requests()
    assert conversation, f"the fake API got no conversation request: {[r.path for r in world.api.requests]}"
    assert MEMORY in conversation[0].text, "the primed memory is not in what the client sent the model"


# --------------------------------------------------------------------------- (b) the end of a session


@pytest.mark.parametrize("case", ["reply", "model-call-fails", "machine-loaded"])
def test_end_of_session_work_completes_after_claude_p_exits(world: World, case: str) -> None:
    stale = _init_with_memories(world)
    if case == "model-call-fails":
        world.api.mode = "error"

    if case == "machine-loaded":
        with load_cpu(2):
            run = world.claude("hello")
            _assert_end_of_session_work_done(world, run.session_id, stale, run.describe())
    else:
        run = world.claude("hello")
        _assert_end_of_session_work_done(world, run.session_id, stale, run.describe())

    if case == "model-call-fails":
        assert run.result and run.result.get("is_error"), "the scripted API failure did not reach the client"
    else:
        assert run.returncode == 0, run.describe()
    assert "Hook cancelled" not in run.stderr, run.describe()
    assert "Hook cancelled" not in run.debug_log, run.describe()
    cancelled = [line for line in _session_end_lines(run.debug_log) if "cancelled" in line.lower()]
    assert not cancelled, "\n".join(cancelled)
    assert [line for line in _session_end_lines(run.debug_log) if "completed with status 0" in line], (
        f"the SessionEnd hook did not complete\n{run.describe()}"
    )


# --------------------------------------------------------------------------- (c) no cerebro on PATH


def test_no_hook_errors_when_cerebro_is_not_on_path(world: World) -> None:
    world.init()
    world.add(MEMORY)

    run = world.claude("hello", env=world.env(with_cerebro=False))

    assert run.returncode == 0, run.describe()
    assert run.hook_responses, f"no hook ran at all: the check below would prove nothing\n{run.describe()}"
    failing = [e for e in run.hook_responses if e.get("exit_code") != 0 or e.get("outcome") != "success"]
    assert not failing, failing
    assert not run.hook_trouble(), "\n".join(run.hook_trouble())
    for text in (run.debug_log, run.stderr):
        assert "exit 127" not in text and "status 127" not in text
        assert "Hook cancelled" not in text
    ended = [line for line in _session_end_lines(run.debug_log) if "completed with status 0" in line]
    assert ended, f"the SessionEnd hook did not complete cleanly\n{run.describe()}"


# --------------------------------------------------------------------------- (d) plugin manifests


@pytest.mark.parametrize("target", [".claude-plugin/marketplace.json", "claude-plugin/cerebro"])
def test_plugin_manifests_validate_strictly(world: World, target: str) -> None:
    out = world.claude_cli("plugin", "validate", "--strict", str(REPO / target))
    assert out.returncode == 0, (
        f"claude plugin validate --strict {target}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    )


# --------------------------------------------------------------------------- (e) plugin + init


def test_plugin_and_init_together_prime_once_and_do_not_double_skills(world: World) -> None:
    for args in (("plugin", "marketplace", "add", str(REPO)), ("plugin", "install", "cerebro@cerebro")):
        out = world.claude_cli(*args)
        assert out.returncode == 0, f"claude {' '.join(args)}: exit {out.returncode}\n{out.stdout}\n{out.stderr}"
    world.init()
    world.add(MEMORY)

    run = world.claude("hello")

    assert run.returncode == 0, run.describe()
    first = world.api.conversation_requests()[0].text
    assert first.count(MEMORY) == 1, f"the memory was primed {first.count(MEMORY)} times\n{run.describe()}"
    offered = offered_skills(first)
    ours = [name for name in offered if name.split(":")[-1] in PLUGIN_SKILLS]
    assert ours, f"none of cerebro's skills was offered; the client offered {offered}"
    doubled = {base: n for base, n in Counter(name.split(":")[-1] for name in ours).items() if n > 1}
    assert not doubled, f"skills offered twice: {doubled} (all of cerebro's offered: {ours})"


# ------------------------------------------------------------------ (f) an interactive session's exit


def test_end_of_session_work_completes_after_an_interactive_exit(world: World) -> None:
    stale = _init_with_memories(world)

    session = world.interactive("hello", expect_reply=world.api.reply_text)

    assert session.returncode == 0, session.describe()
    ended = [line for line in _session_end_lines(session.debug_log) if "SessionEnd:prompt_input_exit" in line]
    assert ended, f"/exit did not run the SessionEnd hooks\n{session.describe()}"
    _assert_end_of_session_work_done(world, session.session_id, stale, session.describe())
    assert "Hook cancelled" not in session.screen, session.describe()
    assert "Hook cancelled" not in session.debug_log and not [
        line for line in _session_end_lines(session.debug_log) if "cancelled" in line.lower()
    ], session.describe()


# --------------------------------------------------------------------------- the agent's own use of cerebro


def test_the_agent_recalls_through_its_bash_tool(world: World) -> None:
    """The model (scripted) runs the command cerebro's skills tell it to run, in the client's own shell; the
    memory comes back to the model as the tool result."""
    world.init()
    world.add(MEMORY)
    world.api.mode, world.api.tool_name = "tool", "Bash"
    world.api.tool_input = {
        "command": f"cerebro recall -p '{world.project}' 'deploy password rotation'",
        "description": "Recall from Cerebro",
    }

    run = world.claude("When does the deploy password rotate?", "--allowedTools", "Bash(cerebro recall *)")

    assert run.returncode == 0, run.describe()
    assert world.api.tool_results, f"the client never sent the tool's result back\n{run.describe()}"
    assert MEMORY in json.dumps(world.api.tool_results), world.api.tool_results
    assert run.result and run.result.get("result") == world.api.final_text, run.result


# --------------------------------------------------------------------------- upstream's hooks, migrated


def test_init_force_over_upstreams_hooks_primes_once_in_the_client(world: World) -> None:
    """A user migrating from Go cerebro: upstream 3.3.2's hook set in settings.json, then `init --force`.
    The client then runs one set: the memory is primed once, and no hook fails."""
    golden = json.loads((REPO / "tests" / "integration" / "golden" / "upstream-hooks.json").read_text())
    settings = world.project / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps(golden["v3"], indent=2))
    world.init("--force")
    world.add(MEMORY)

    run = world.claude("hello")

    assert run.returncode == 0, run.describe()
    conversation = world.api.conversation_requests()
    assert conversation and conversation[0].text.count(MEMORY) == 1, run.describe()
    assert all(e.get("exit_code") == 0 for e in run.hook_responses), run.hook_responses
    wired = json.loads(settings.read_text())["hooks"]
    commands = [h["command"] for groups in wired.values() for g in groups for h in g["hooks"]]
    assert not any(".cerebro-compact.log" in c or "2>/dev/null; printf" in c for c in commands)
