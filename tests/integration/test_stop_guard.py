"""``cerebro stop-guard``: the opt-in Claude Code Stop hook (spec claude-code-integration.md §4).

Part 1 is a decision table over ``stop_guard.evaluate`` (pure), written from the spec's regexes and from
the way a coding agent really ends a turn. Parts 2-4 run the command (in-process, and in a subprocess where
the process is the point), fed the JSON Claude Code sends on a Stop event, and check the output contract, the
metrics record and that the brain is never written.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from cerebro import Brain, paths
from cerebro.integration.claude_code import stop_guard
from cerebro.metrics.store import MetricsStore, metrics_path
from tests.conftest import env_without_home_leaks
from tests.helpers import run_in_process

CEREBRO = [sys.executable, "-m", "cerebro"]

PERM, PREM, SCOPE = "permission-seeking", "premature-stopping", "scope-reduction"
REASONS = {c.name: c.reason for c in stop_guard.CATEGORIES}

# --------------------------------------------------------------------------------------- window fillers

# A neutral clause: no category phrase, no exemption trigger (not even as a substring: "plan", "design",
# "approach", "proposal", "strategy", "ready for", "tests pass", "0 errors"…), no request or risk signal.
_NEUTRAL = "the config loader now reads the file once and caches it "


def _pad(n: int) -> str:
    """Exactly ``n`` characters of neutral prose, beginning and ending with a space (so the words on
    either side keep their word boundaries)."""
    assert n >= 2
    body = (_NEUTRAL * (n // len(_NEUTRAL) + 2))[: n - 2]
    if body.endswith(" "):
        body = body[:-1] + "x"
    return " " + body + " "


# Exemption 1: the phrase followed within <=40 chars by a destructive / outward-facing verb.
DESTRUCTIVE_AT_40 = "Shall I" + _pad(40) + "push the branch?"
DESTRUCTIVE_AT_41 = "Shall I" + _pad(41) + "push the branch?"
# Exemption 2: verified done, then the question within <=200 chars (dot matches newline).
VERIFIED_AT_200 = "All 48 tests pass" + _pad(199) + "\nWould you like me to bump the version as well?"
VERIFIED_AT_201 = "All 48 tests pass" + _pad(200) + "\nWould you like me to bump the version as well?"
# Exemption 3: a plan / proposal put up for review, then the question within <=500 chars.
PLAN_AT_500 = "Here is my proposal:" + _pad(497) + "\n\nShall I start with step one?"
PLAN_AT_501 = "Here is my proposal:" + _pad(498) + "\n\nShall I start with step one?"
# The gate idiom "blocked on … only you": <=120 chars, dot matches newline.
BLOCKED_AT_120 = "I'm blocked on the signing key." + _pad(102) + "\nOnly you can add it; I'll leave it there."
BLOCKED_AT_121 = "I'm blocked on the signing key." + _pad(103) + "\nOnly you can add it; I'll leave it there."


def test_window_fillers_have_the_lengths_the_table_claims() -> None:
    """The near-miss rows are only near misses if the gaps are what their ids say."""

    def gap(message: str, left: str, right: str) -> int:
        start = message.lower().index(left.lower()) + len(left)
        return message.lower().index(right.lower(), start) - start

    assert gap(DESTRUCTIVE_AT_40, "Shall I", "push") == 40
    assert gap(DESTRUCTIVE_AT_41, "Shall I", "push") == 41
    assert gap(VERIFIED_AT_200, "tests pass", "would you like me to") == 200
    assert gap(VERIFIED_AT_201, "tests pass", "would you like me to") == 201
    assert gap(PLAN_AT_500, "proposal", "shall I") == 500
    assert gap(PLAN_AT_501, "proposal", "shall I") == 501
    assert gap(BLOCKED_AT_120, "blocked on", "only you") == 120
    assert gap(BLOCKED_AT_121, "blocked on", "only you") == 121
    filler = _pad(600)
    assert len(filler) == 600 and "  " not in filler
    assert stop_guard.evaluate("Shall I rename it?" + filler).category == PERM  # the filler exempts nothing
    assert not stop_guard.confirmation_gate(filler)


# --------------------------------------------------------------------------------------- 1. decision table

R = pytest.param
TABLE = [
    # ---- ordinary completions: allow
    R(
        "I've updated `parse_payload` to ignore non-string session ids and added three regression tests. "
        "All 48 tests pass and ruff is clean.",
        False,
        "",
        id="allow-plain-summary-with-test-results",
    ),
    R(
        "## Summary\n- Fixed the off-by-one in pagination\n- Added `test_last_page`\n\n"
        "Full suite: 312 passed, 0 failed in 41s.",
        False,
        "",
        id="allow-multiline-markdown-summary",
    ),
    R(
        "Which timezone should the weekly report use: UTC, or each user's local zone?",
        False,
        "",
        id="allow-genuine-question-without-phrases",
    ),
    R(
        "The Marshall Islands locale now formats dates correctly.",
        False,
        "",
        id="allow-shall-i-inside-a-word-is-not-a-match",
    ),
    R("The parser is good enough for now. Done.", False, "", id="allow-for-now-without-comma"),
    R("", False, "", id="allow-empty-message"),
    R("  \n\t \n ", False, "", id="allow-whitespace-only-message"),
    # ---- permission-seeking
    R(
        "I found the root cause in `cache.py`: the TTL is read in seconds but stored in ms. "
        "Would you like me to fix it?",
        False,
        PERM,
        id="perm-would-you-like-me-to-fix",
    ),
    R("Shall I proceed with the refactor of the retry loop?", False, PERM, id="perm-shall-i-proceed"),
    R("LET ME KNOW IF you want the same change in the CLI.", False, PERM, id="perm-upper-case"),
    R(
        "Summary:\n- added retries to the HTTP client\n- documented CEREBRO_TIMEOUT\n\n"
        "The flaky test is still flaky; let me know if you'd like me to dig into it.\nThanks!",
        False,
        PERM,
        id="perm-mid-paragraph-multiline",
    ),
    # exemption 1: destructive / outward-facing verb within 40 chars
    R(
        "The branch is rebased onto main. Would you like me to open a PR and merge it?",
        False,
        "",
        id="perm-exempt-destructive-verb-nearby",
    ),
    R("Let me know if I should delete the old fixtures too.", False, "", id="perm-exempt-let-me-know-if-delete"),
    R(DESTRUCTIVE_AT_40, False, "", id="perm-exempt-destructive-verb-at-40-chars"),
    R(DESTRUCTIVE_AT_41, False, PERM, id="perm-near-miss-destructive-verb-at-41-chars"),
    R(
        "Would you like me to\ndelete the scratch branch?",
        False,
        PERM,
        id="perm-destructive-window-does-not-cross-a-newline",
    ),
    # exemption 2: verified done, then the question within 200 chars
    R(
        "Done. All tests pass.\n\nShall I also update the changelog?",
        False,
        "",
        id="perm-exempt-tests-pass-across-newline",
    ),
    R("CI is all green. Let me know if you want anything else tweaked.", False, "", id="perm-exempt-all-green"),
    R(
        "Ran the full suite: 0 failures, 2 skipped.\nWould you like me to look at the skipped ones?",
        False,
        "",
        id="perm-exempt-0-failures-across-newline",
    ),
    R(VERIFIED_AT_200, False, "", id="perm-exempt-verified-at-200-chars"),
    R(VERIFIED_AT_201, False, PERM, id="perm-near-miss-verified-at-201-chars"),
    R(
        "Shall I run the tests? Once all tests pass I'll report back.",
        False,
        PERM,
        id="perm-verified-after-the-question-does-not-exempt",
    ),
    # exemption 3: a plan / proposal / design, then the question within 500 chars
    R(
        "Proposed approach:\n1. Split `store.py` into reads and writes\n2. Move the retry helper\n\n"
        "Shall I go ahead with this?",
        False,
        "",
        id="perm-exempt-approach-then-shall-i",
    ),
    R(
        "The PR is ready for your review. Would you like me to address anything else?",
        False,
        "",
        id="perm-exempt-ready-for-review",
    ),
    R(PLAN_AT_500, False, "", id="perm-exempt-proposal-at-500-chars"),
    R(PLAN_AT_501, False, PERM, id="perm-near-miss-proposal-at-501-chars"),
    R(
        "Here is the plan: cache the parsed config and invalidate on mtime. Let me know if that works.",
        False,
        PERM,
        id="perm-plan-exemption-does-not-cover-let-me-know-if",
    ),
    # beyond upstream: the exemptions' words are whole words ("explanation" is no plan, "10 failures" no pass)
    R(
        "I added an explanation to the README. Shall I also update the changelog?",
        False,
        PERM,
        id="perm-explanation-is-not-a-plan",
    ),
    R(
        "10 failures remain in the legacy suite. Shall I keep going?",
        False,
        PERM,
        id="perm-10-failures-is-not-0-failures",
    ),
    # ---- premature-stopping
    R("The main path works end to end, so I can stop here.", False, PREM, id="prem-i-can-stop-here"),
    R("I'll leave it there for today; the remaining edge cases are minor.", False, PREM, id="prem-ill-leave-it"),
    R(
        "Changes:\n1. Added the index on `nodes.created_at`\n2. Rewrote the query to use it\n\n"
        "THAT SHOULD BE SUFFICIENT to fix the slowdown.",
        False,
        PREM,
        id="prem-multiline-upper-case",
    ),
    R("I\u2019ll leave it there.", False, PREM, id="prem-curly-apostrophe"),  # beyond upstream: typographic quote
    # ---- scope-reduction
    R("Handling Windows paths is beyond the scope of this change.", False, SCOPE, id="scope-beyond-the-scope"),
    R("Implemented the exporter.\nOut of scope: IPv6 support.", False, SCOPE, id="scope-out-of-scope-multiline"),
    R("I've noted the batching as a future improvement in TODO.md.", False, SCOPE, id="scope-as-a-future"),
    R("The fix is in. For now, the parser just skips malformed lines.", False, SCOPE, id="scope-for-now-comma"),
    # ---- the confirmation gate (checked before every category)
    R(
        "for now, I've held off on the force-push \u2014 need your confirmation",
        False,
        "",
        id="gate-spec-example-force-push-need-your-confirmation",
    ),
    R(
        "I'll leave it here: the migration is written but not run. Awaiting your go-ahead before I run it "
        "against the live database.",
        False,
        "",
        id="gate-request-and-risk-far-apart",
    ),
    R("Shall I tag v2.3.0? Just need your OK on the changelog first.", False, "", id="gate-risk-tag-request-need-your"),
    R(
        "Two decisions required before I continue: the date format, and whether to keep the legacy flag. "
        "I can stop here until you answer.",
        False,
        "",
        id="gate-idiom-decisions-required",
    ),
    R(BLOCKED_AT_120, False, "", id="gate-idiom-blocked-on-only-you-across-newline"),
    R(BLOCKED_AT_121, False, PREM, id="gate-near-miss-blocked-on-only-you-at-121-chars"),
    R(
        "The OAuth login step must run interactively, so I can stop here.",
        False,
        "",
        id="gate-idiom-must-run-interactively",
    ),
    R(
        "Notarization requires human review in the Apple portal. That should be sufficient for today.",
        False,
        "",
        id="gate-idiom-requires-human",
    ),
    R(
        "The next step requires an interactive terminal; I'll leave it to you.",
        False,
        "",
        id="gate-idiom-requires-an-interactive",
    ),
    R(
        "Everything is staged behind the push gate. Shall I continue with the docs?",
        False,
        "",
        id="gate-idiom-push-gate",
    ),
    R(
        "The release gate is still closed, so I'll leave it at the changelog update.",
        False,
        "",
        id="gate-idiom-release-gate",
    ),
    R(
        "Please confirm the new wording reads well. I can stop here.",
        False,
        PREM,
        id="gate-closed-request-without-risk",
    ),
    R(
        "I pushed the branch and deployed to staging. Shall I also update the docs?",
        False,
        PERM,
        id="gate-closed-risk-without-request",
    ),
    # ---- stop_hook_active: never block twice in a row
    R("Shall I proceed? For now, I can stop here.", True, "", id="active-hook-allows-a-blocking-message"),
    R("Shall I proceed? For now, I can stop here.", False, PERM, id="active-hook-control-same-message-blocks"),
    # ---- category order: the first category that matches and is not exempt
    R(
        "I can stop here. Shall I also add docs for it?",
        False,
        PERM,
        id="order-permission-before-premature-whatever-the-text-order",
    ),
    R("For now, that should be sufficient.", False, PREM, id="order-premature-before-scope"),
    R(
        "All tests pass. Shall I open the PR? Otherwise I'll leave it as is.",
        False,
        PREM,
        id="order-exempt-permission-falls-through-to-premature",
    ),
    R(
        "Would you like me to delete the temp files? Out of scope here: the cache rework.",
        False,
        SCOPE,
        id="order-exempt-permission-falls-through-to-scope",
    ),
]


def test_decision_table_is_big_enough() -> None:
    assert len(TABLE) >= 36
    ids = [p.id for p in TABLE]
    assert len(ids) == len(set(ids))
    assert {p.values[2] for p in TABLE} == {"", PERM, PREM, SCOPE}


@pytest.mark.parametrize(("message", "stop_hook_active", "expected"), TABLE)
def test_decision_table(message: str, stop_hook_active: bool, expected: str) -> None:
    decision = stop_guard.evaluate(message, stop_hook_active=stop_hook_active)
    assert decision.category == expected
    assert decision.blocks is bool(expected)
    assert decision.reason == REASONS.get(expected, "")
    if expected:
        assert json.loads(decision.to_json()) == {"decision": "block", "reason": REASONS[expected]}
    else:
        assert decision.to_json() == "{}"


# --------------------------------------------------------------------------------------- 2. the real command

BLOCKING = "I refactored the loader. Would you like me to add tests for it as well?"  # permission-seeking
FINE = "Refactored the loader and added four tests; the full suite passes (212 passed)."


def _payload(message: object = BLOCKING, *, active: object = False, session: str = "sess-1") -> str:
    return json.dumps(
        {
            "session_id": session,
            "transcript_path": "/tmp/transcript.jsonl",
            "cwd": "/tmp",
            "hook_event_name": "Stop",
            "stop_hook_active": active,
            "last_assistant_message": message,
            "some_future_field": {"x": [1, 2]},
        }
    )


def _env(home: Path, **extra: str) -> dict[str, str]:
    return env_without_home_leaks(CEREBRO_HOME=str(home), **extra)


def _guard(home: Path, project: Path | None, stdin: str, **env: str) -> dict:
    """Run the command (in this process: tests/helpers.run_in_process); assert the hook contract (exit 0,
    exactly one JSON line) and return that JSON."""
    args = ["stop-guard"] + (["-p", str(project)] if project is not None else [])
    done = run_in_process(args, stdin=stdin, env=_env(home, **env))
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("\n") and done.stdout.count("\n") == 1, repr(done.stdout)
    return json.loads(done.stdout)


def _block(category: str) -> dict:
    return {"decision": "block", "reason": REASONS[category]}


def _make_brain(project: Path) -> Path:
    path = paths.project_brain_path(project)
    Brain.init(path, embed_provider="none")
    return path


@pytest.fixture
def enabled_project(project: Path, cli) -> Path:
    _make_brain(project)
    result = cli("config", "set", "stop_guard_enabled", "true", "-p", str(project))
    assert result.exit_code == 0, result.stderr
    return project


def test_disabled_without_a_brain(project: Path, isolated_home: Path) -> None:
    assert _guard(isolated_home, project, _payload(BLOCKING)) == {}
    assert not paths.project_brain_path(project).exists()  # the guard never creates a brain


def test_disabled_when_the_brain_lacks_the_key(project: Path, isolated_home: Path) -> None:
    _make_brain(project)
    assert _guard(isolated_home, project, _payload(BLOCKING)) == {}


def test_disabled_after_config_set_false(project: Path, isolated_home: Path, cli) -> None:
    _make_brain(project)
    assert cli("config", "set", "stop_guard_enabled", "true", "-p", str(project)).exit_code == 0
    assert _guard(isolated_home, project, _payload(BLOCKING)) == _block(PERM)  # control: it was on
    assert cli("config", "set", "stop_guard_enabled", "false", "-p", str(project)).exit_code == 0
    assert _guard(isolated_home, project, _payload(BLOCKING)) == {}


@pytest.mark.parametrize("value", ["TRUE", "True", "1", "yes"])
def test_only_the_literal_true_enables(project: Path, isolated_home: Path, value: str) -> None:
    brain_file = _make_brain(project)
    conn = sqlite3.connect(brain_file)
    with conn:
        conn.execute(
            "INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('config.stop_guard_enabled', ?)", (value,)
        )
    conn.close()
    assert _guard(isolated_home, project, _payload(BLOCKING)) == {}


def test_unreadable_brain_allows(project: Path, isolated_home: Path) -> None:
    brain_file = paths.project_brain_path(project)
    brain_file.parent.mkdir(parents=True, exist_ok=True)
    brain_file.write_bytes(b"this is not an sqlite database" * 100)
    assert _guard(isolated_home, project, _payload(BLOCKING)) == {}


@pytest.mark.parametrize("with_brain", [False, True], ids=["no-brain", "key-unset"])
def test_disabled_guard_does_not_read_stdin(project: Path, isolated_home: Path, with_brain: bool) -> None:
    """Spec §4 Gate: when disabled the guard answers `{}` without reading stdin (stdin is never closed here)."""
    if with_brain:
        _make_brain(project)
    proc = subprocess.Popen(
        [*CEREBRO, "stop-guard", "-p", str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(isolated_home),
    )
    try:
        code = proc.wait(timeout=60)
        assert (code, proc.stdout.read()) == (0, "{}\n")
    finally:
        proc.kill()
        proc.stdin.close()
        proc.stdout.close()
        proc.stderr.close()
        proc.wait()


def test_the_answer_is_one_compact_json_line(enabled_project: Path, isolated_home: Path) -> None:
    for message, category in ((BLOCKING, PERM), ("That should be sufficient.", PREM)):
        done = run_in_process(
            ["stop-guard", "-p", str(enabled_project)], stdin=_payload(message), env=_env(isolated_home)
        )
        assert done.stdout == json.dumps(_block(category), ensure_ascii=False, separators=(",", ":")) + "\n"
    assert not REASONS[PREM].isascii()  # UTF-8 as is, not \u escapes


def test_extra_arguments_allow_the_stop_with_one_line_on_stderr(enabled_project: Path, isolated_home: Path) -> None:
    done = run_in_process(
        ["stop-guard", "extra", "-p", str(enabled_project)], stdin=_payload(BLOCKING), env=_env(isolated_home)
    )
    assert (done.returncode, done.stdout) == (0, "{}\n")
    assert done.stderr == "cerebro: stop-guard: unexpected arguments ['extra']\n"


def test_enabled_blocks_a_blocking_message_and_allows_a_fine_one(enabled_project: Path, isolated_home: Path) -> None:
    assert _guard(isolated_home, enabled_project, _payload(BLOCKING)) == _block(PERM)
    assert _guard(isolated_home, enabled_project, _payload("That should be sufficient.")) == _block(PREM)
    assert _guard(isolated_home, enabled_project, _payload("Windows is out of scope.")) == _block(SCOPE)
    assert _guard(isolated_home, enabled_project, _payload(FINE)) == {}
    gated = "for now, I've held off on the force-push \u2014 need your confirmation"
    assert _guard(isolated_home, enabled_project, _payload(gated)) == {}


def test_enabled_resolves_the_project_from_claude_project_dir(enabled_project: Path, isolated_home: Path) -> None:
    assert _guard(isolated_home, None, _payload(BLOCKING), CLAUDE_PROJECT_DIR=str(enabled_project)) == _block(PERM)


@pytest.mark.parametrize(
    "stdin",
    [
        R("{not json at all", id="garbage"),
        R("", id="empty"),
        R("   \n", id="whitespace"),
        R(json.dumps([{"last_assistant_message": BLOCKING}]), id="json-array"),
        R("null", id="json-null"),
        R(_payload(42), id="message-is-a-number"),
        R(_payload(["Would you like me to add tests?"]), id="message-is-a-list"),
        R(_payload(None), id="message-is-null"),
        R(_payload(BLOCKING, active=True), id="stop-hook-active"),
    ],
)
def test_enabled_allows_unusable_input_and_active_continuations(
    enabled_project: Path, isolated_home: Path, stdin: str
) -> None:
    assert _guard(isolated_home, enabled_project, stdin) == {}


def test_enabled_ignores_unknown_fields_and_a_missing_session(enabled_project: Path, isolated_home: Path) -> None:
    payload = {
        "hook_event_name": "Stop",
        "last_assistant_message": BLOCKING,
        "permission_mode": "plan",
        "nested": {"deep": [None, True]},
    }
    assert _guard(isolated_home, enabled_project, json.dumps(payload)) == _block(PERM)


# --------------------------------------------------------------------------------------- 3. metrics record


def test_a_blocked_stop_is_recorded_in_the_session_metrics(enabled_project: Path, isolated_home: Path) -> None:
    target = metrics_path(enabled_project)

    def events(session: str | None = None) -> list[tuple[str, str, str]]:
        if not target.exists():
            return []
        with MetricsStore.open(target) as store:
            return store.stop_guard_events(session)

    # allowed stops record nothing
    assert _guard(isolated_home, enabled_project, _payload(FINE, session="sess-allow")) == {}
    assert _guard(isolated_home, enabled_project, _payload(BLOCKING, active=True, session="sess-active")) == {}
    assert events() == []

    assert _guard(isolated_home, enabled_project, _payload(BLOCKING, session="sess-block")) == _block(PERM)
    recorded = events("sess-block")
    assert len(recorded) == 1
    session, at, category = recorded[0]
    assert (session, category) == ("sess-block", PERM)
    assert at  # a timestamp
    assert events() == recorded  # nothing for the allowed sessions

    assert _guard(isolated_home, enabled_project, _payload("I can stop here.", session="sess-block")) == _block(PREM)
    assert [c for _, _, c in events("sess-block")] == [PERM, PREM]

    # no (or an empty) session id: recorded all the same, under "default"
    no_session = json.dumps({"hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": BLOCKING})
    assert _guard(isolated_home, enabled_project, no_session) == _block(PERM)
    assert [(s, c) for s, _, c in events("default")] == [("default", PERM)]


def test_a_disabled_guard_records_nothing(project: Path, isolated_home: Path) -> None:
    _make_brain(project)
    assert _guard(isolated_home, project, _payload(BLOCKING, session="sess-off")) == {}
    target = metrics_path(project)
    if target.exists():
        with MetricsStore.open(target) as store:
            assert store.stop_guard_events() == []


# --------------------------------------------------------------------------------------- 4. brain untouched


@pytest.mark.parametrize("enable", [True, False], ids=["enabled", "key-unset"])
def test_the_brain_is_not_modified(project: Path, isolated_home: Path, cli, brain_snapshot, enable: bool) -> None:
    brain_file = _make_brain(project)
    with Brain.open(brain_file) as brain:
        brain.add("the deploy script lives in scripts/deploy.sh", type="concept", importance=0.6)
    if enable:
        assert cli("config", "set", "stop_guard_enabled", "true", "-p", str(project)).exit_code == 0
    before = brain_snapshot(brain_file)
    expected = _block(PERM) if enable else {}
    assert _guard(isolated_home, project, _payload(BLOCKING)) == expected
    assert _guard(isolated_home, project, _payload(FINE)) == {}
    assert _guard(isolated_home, project, "{garbage") == {}
    assert _guard(isolated_home, project, _payload(BLOCKING, active=True)) == {}
    after = brain_snapshot(brain_file)
    assert after == before
    assert any(rows for rows in before.values())  # the snapshot saw real rows


@pytest.mark.parametrize("flag", [True, 1, "true", "True", "1", 2, "yes", [1]])
def test_any_sign_of_a_forced_continuation_never_blocks(flag: object) -> None:
    message, active, _ = stop_guard.stop_fields(
        {"stop_hook_active": flag, "last_assistant_message": "Shall I continue?"}
    )
    assert active and not stop_guard.evaluate(message, stop_hook_active=active).blocks


@pytest.mark.parametrize("flag", [False, 0, "false", "False", "", "0", None, []])
def test_no_sign_of_a_forced_continuation_leaves_the_guard_on(flag: object) -> None:
    assert stop_guard.stop_fields({"stop_hook_active": flag})[1] is False


def test_a_confirmation_asked_early_in_a_long_report_still_allows_the_stop() -> None:
    """The gate read only the message's tail: a report that asks for confirmation at its top and ends with "Shall I
    go ahead?" was blocked and told to "do the remaining work" — the risky action it waits to be allowed (a review)."""
    message = (
        "I need your confirmation before I force-push to main.\n\n"
        + _pad(stop_guard.MESSAGE_TAIL)
        + "\nShall I go ahead?"
    )
    assert not stop_guard.evaluate(message).blocks
    assert stop_guard.evaluate(_pad(stop_guard.MESSAGE_TAIL) + "\nShall I go ahead?").category == PERM


def test_plural_plans_stay_exempt() -> None:
    assert not stop_guard.evaluate("Two plans above, A and B. Shall I go with A?").blocks


def test_only_the_messages_last_characters_are_judged() -> None:
    """A pathological message (hundreds of KB) must not stall the hook: only the last MESSAGE_TAIL characters
    are searched, so a phrase further back no longer counts."""
    ask = "Shall I continue with the remaining files?"
    assert stop_guard.evaluate(ask + _pad(stop_guard.MESSAGE_TAIL - len(ask) - 10)).category == PERM
    assert not stop_guard.evaluate(ask + _pad(stop_guard.MESSAGE_TAIL)).blocks


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        ({"last_assistant_message": 123, "session_id": 5}, ("", False, "")),
        ({"last_assistant_message": None, "session_id": ""}, ("", False, "")),
        ({"last_assistant_message": "done", "session_id": "s", "stop_hook_active": "true"}, ("done", True, "s")),
        ({}, ("", False, "")),
    ],
)
def test_stop_fields_of_the_wrong_type_read_as_empty(payload: dict, expected: tuple) -> None:
    assert stop_guard.stop_fields(payload) == expected


def test_a_decision_that_cannot_be_recorded_still_blocks_and_says_why(
    enabled_project: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cerebro.metrics import store

    def unwritable(*_args: object) -> None:
        raise OSError("disk\nfull")

    monkeypatch.setattr(store, "record_stop_guard_decision", unwritable)
    done = run_in_process(["stop-guard", "-p", str(enabled_project)], stdin=_payload(BLOCKING), env=_env(isolated_home))
    assert json.loads(done.stdout) == _block(PERM)
    assert done.stderr == "cerebro: stop-guard: could not record the decision: disk full\n"


@pytest.mark.parametrize("closed", ["stdout", "stdout and stderr"])
def test_a_guard_started_with_its_output_closed_still_exits_0(project: Path, isolated_home: Path, closed: str) -> None:
    """Issue 17: with stdout closed (`>&-`) Python has no sys.stdout; the guard printed a traceback and exited 1."""
    _make_brain(project)
    command = " ".join([*CEREBRO, "stop-guard", "-p", str(project)]) + " >&-" + (" 2>&-" if "stderr" in closed else "")
    done = subprocess.run(
        ["bash", "-c", command], input="{}", capture_output=True, text=True, env=_env(isolated_home), timeout=60
    )
    assert done.returncode == 0
    assert "Traceback" not in done.stderr and done.stderr == ""


def test_recording_a_decision_gives_up_on_a_locked_metrics_file_at_once(
    enabled_project: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingest or the dashboard holding the metrics file kept a blocked stop waiting ten seconds (eight retries,
    each waiting the busy timeout): the record is best effort, so it is retried for half a second and given up."""
    from cerebro import retry
    from cerebro.db.engine import connect_raw
    from cerebro.errors import BrainBusy
    from cerebro.metrics import store

    store.record_stop_guard_decision(enabled_project, "s0", "permission")  # the file exists
    budgets: list[float] = []
    real = retry.run_with_retry

    def watched(work, **kwargs):
        budgets.append(kwargs.get("max_seconds", retry.MAX_SECONDS))
        return real(work, **kwargs)

    monkeypatch.setattr(retry, "run_with_retry", watched)
    holder = connect_raw(store.metrics_path(enabled_project))
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(BrainBusy):
            store.record_stop_guard_decision(enabled_project, "s1", "permission")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert budgets == [0.5]
