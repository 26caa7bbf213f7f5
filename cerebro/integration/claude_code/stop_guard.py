"""``cerebro stop-guard``: an opt-in Claude Code **Stop** hook that catches an agent stopping too early.

Off unless the project's brain says ``config stop_guard_enabled true`` *and* the user wired a Stop hook
themselves (neither ``init`` nor the plugin does). It reads the agent's last message and blocks the stop —
Claude is told why and keeps working — when the message asks permission it does not need, declares done
without checking, or trims the request's scope. A message that asks the user to confirm something risky
(a push, a deploy, a deletion …) is a legitimate stop and always passes: that gate is checked first.

Always exit 0 with exactly one JSON line: ``{}`` (allow) or ``{"decision":"block","reason":…}``. A stop that
is already a continuation forced by a Stop hook (``stop_hook_active``) is never blocked, so the guard can
not loop. Each block is recorded in the project's session metrics (best effort), so ``stats --metrics`` and
the dashboard count real fires.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_I = re.IGNORECASE
MESSAGE_TAIL = 20_000  # characters of the last message that are judged
_IS = re.IGNORECASE | re.DOTALL

# Upstream's patterns (spec §4), with three repairs: the exemptions' words must be whole words ("explanation"
# is not a plan, "10 failures" is not "0 failures"), and "I’ll" may carry a typographic apostrophe.
# The confirmation gate: asking for a go-ahead on something risky is the right way to stop.
_REQUEST = re.compile(
    r"\b(confirm|confirmation|approv\w*|authoriz\w*|go-ahead|green.?light|sign.?off|awaiting your|waiting for your"
    r"|need your|needs your|your (explicit )?go\b|ok to\b|permission)",
    _I,
)
_RISK = re.compile(
    r"\b(push\w*|merge\w*|deploy\w*|apply(ing)?|applie[sd]|delet\w*|dropp?\w*|releas\w*|publish\w*|force\w*"
    r"|reset\w*|destroy\w*|migrat\w*|rewrit\w*|irreversib\w*|permanent\w*|production|prod|overwrit\w*|purg\w*"
    r"|revok\w*|tag\w*|rebas\w*)\b",
    _I,
)
_GATE_IDIOMS = (
    re.compile(r"\bdecisions? required\b", _I),
    re.compile(r"\bblocked on\b.{0,120}\bonly you\b", _IS),
    re.compile(r"\bmust run interactively\b|\brequires? (an? )?(interactive|human)\b", _I),
    re.compile(r"\b(push|merge|approval|confirmation|release|deploy) gate\b", _I),
)


@dataclass(frozen=True)
class Category:
    name: str
    pattern: re.Pattern[str]
    reason: str
    exemptions: tuple[re.Pattern[str], ...] = ()


CATEGORIES = (
    Category(
        "permission-seeking",
        re.compile(r"\bshall I\b|\bwould you like me to\b|\blet me know if\b", _I),
        "You asked for permission instead of acting. The request is yours to complete: do the remaining work, "
        "and stop only when it is fully addressed.",
        exemptions=(
            # ... about to do something destructive or outward-facing: asking is right.
            re.compile(
                r"(shall I|would you like me to|let me know if)\b.{0,40}"
                r"\b(push|deploy|merge|delete|remove|drop|force|publish|release|reset)\b",
                _I,
            ),
            # ... the work is done and verified; offering the next step is fine.
            re.compile(
                r"\b(tests? pass|all green|build succeed|linter.{0,80}clean|0 (failures|errors))"
                r".{0,200}(shall I|would you like me to|let me know)",
                _IS,
            ),
            # ... a plan or design put up for review before building it.
            re.compile(
                r"\b(plans?|approach(es)?|proposals?|designs?|strateg(y|ies)|ready for.{0,10}review)\b"
                r".{0,500}(shall I|would you like me to)",
                _IS,
            ),
        ),
    ),
    Category(
        "premature-stopping",
        re.compile(r"\bI can stop here\b|\bI['\u2019]ll leave it\b|\bthat should be sufficient\b", _I),
        "You declared the work done without verifying it. Re-read the request, check every part of it (run the "
        "tests), then finish — or state precisely what is and is not complete.",
    ),
    Category(
        "scope-reduction",
        re.compile(r"\bbeyond the scope\b|\bout of scope\b|\bas a future\b|\bfor now,", _I),
        "You reduced the scope, and that was not yours to reduce. Complete the request as stated, or ask the "
        "user whether the smaller scope is acceptable.",
    ),
)


@dataclass(frozen=True)
class Decision:
    category: str = ""  # "" → allow
    reason: str = ""

    @property
    def blocks(self) -> bool:
        return bool(self.category)

    def to_json(self) -> str:
        if not self.blocks:
            return "{}"
        return json.dumps({"decision": "block", "reason": self.reason}, ensure_ascii=False, separators=(",", ":"))


ALLOW = Decision()


def confirmation_gate(message: str) -> bool:
    if _REQUEST.search(message) and _RISK.search(message):
        return True
    return any(idiom.search(message) for idiom in _GATE_IDIOMS)


def evaluate(message: str, *, stop_hook_active: bool = False) -> Decision:
    """The decision for the agent's last message (pure: no I/O)."""
    if stop_hook_active:
        return ALLOW  # this stop already follows a block: never block twice in a row
    # The gate reads the whole message (its patterns are linear, or windowed): a long report that asks for
    # confirmation at its top must not lose the request to the tail cut and be told to "do the remaining work".
    message = message.strip()
    if not message or confirmation_gate(message):
        return ALLOW
    # The end of a message is where an agent asks or stops; bounding it keeps a pathological message
    # (hundreds of KB) from stalling the categories' patterns and their exemptions.
    message = message[-MESSAGE_TAIL:]
    for category in CATEGORIES:
        if category.pattern.search(message) and not any(e.search(message) for e in category.exemptions):
            return Decision(category.name, category.reason)
    return ALLOW


def stop_fields(payload: dict[str, Any]) -> tuple[str, bool, str]:
    """(last message, stop_hook_active, session id) from the Stop hook's JSON; wrong types read as empty."""
    message = payload.get("last_assistant_message")
    session = payload.get("session_id")
    return (
        message if isinstance(message, str) else "",
        _truthy(payload.get("stop_hook_active")),  # any sign of a forced continuation: never loop (ADR 0016)
        session if isinstance(session, str) and session else "",
    )


def _truthy(value: object) -> bool:
    """Any truthy value (``true``, ``1``, ``"True"``, ``"yes"``, ``[1]``): the no-loop rule errs on allow."""
    if isinstance(value, str):
        return value.strip().lower() not in ("", "false", "0", "no", "off", "null", "none")
    return bool(value)


def enabled(project: Path) -> bool:
    """Only the literal ``true`` in the project's brain enables the guard; anything else (no brain, an
    unreadable one) leaves it off."""
    from cerebro import paths

    brain_file = paths.project_brain_path(project)
    if not brain_file.is_file():
        return False
    from cerebro.api import Brain

    with Brain.open(brain_file) as brain:
        return brain.config_value("stop_guard_enabled") is True


def _record(project: Path, session: str, decision: Decision) -> None:
    try:
        from cerebro.metrics.store import record_stop_guard_decision

        record_stop_guard_decision(project, session or "default", decision.category)
    except Exception as exc:  # noqa: BLE001 - metrics are a nicety; the decision stands
        print(f"cerebro: stop-guard: could not record the decision: {' '.join(str(exc).split())}", file=sys.stderr)


def run(argv: list[str]) -> int:
    """``cerebro stop-guard``: always exit 0 and print exactly one JSON line."""
    from cerebro import paths
    from cerebro.cli_state import state

    decision = ALLOW
    try:
        if argv:
            raise ValueError(f"unexpected arguments {argv}")
        project = paths.resolve_project_dir(state.project)
        if enabled(project):
            from cerebro.integration.claude_code.hooks import read_payload

            message, active, session = stop_fields(read_payload())
            decision = evaluate(message, stop_hook_active=active)
            if decision.blocks:
                _record(project, session, decision)
    except Exception as exc:  # noqa: BLE001 - a hook never breaks a session
        print(f"cerebro: stop-guard: {' '.join(str(exc).split())}", file=sys.stderr)  # decision: still ALLOW
    sys.stdout.write(decision.to_json() + "\n")
    return 0
