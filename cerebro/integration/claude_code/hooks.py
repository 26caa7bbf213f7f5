"""``cerebro hook prime | post-compact | session-end | catch-up`` — run by Claude Code, once per session per event.

A user may wire both ``cerebro init``'s hooks and the plugin, so every event can fire twice, even at the
same instant. Each event is *claimed* by creating a file with ``O_EXCL`` (atomic: exactly one of two
racing processes wins); a prime that delivered nothing gives its claim back so the UserPromptSubmit
fallback can try again. Claims live in ``CEREBRO_HOME/session-state/`` (0700 folder, 0600 files) under a
hash of the session id — the id comes from Claude Code and never names a file directly — and files
older than 7 days are swept.

A hook must never break a session: every internal error ends with exit 0, nothing injected, one line
on stderr.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from cerebro import paths

STDIN_LIMIT = 64 * 1024 * 1024  # a long prompt must not cost the session id (upstream: 1 MiB)
SWEEP_AFTER_SECONDS = 7 * 24 * 3600
# A prime claimed this recently was delivered into the already compacted context by a parallel registration
# of the same event (init's hooks and the plugin's fire together): re-arming it would prime twice.
REARM_GRACE_SECONDS = 5.0
CHARS_PER_TOKEN = 4  # a download-free estimate, close for English and code (the same as cerebro.mcp.framing)
NO_BRAIN_NOTICE = {
    "systemMessage": "Cerebro: no brain initialized. Run: cerebro init",
    "hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": "Cerebro: no brain initialized for this project. Run: cerebro init",
    },
}


def read_payload() -> dict[str, Any]:
    """The hook's stdin JSON, leniently: anything missing, garbled or not an object is ``{}``."""
    stream = sys.stdin
    try:
        if stream is None or stream.isatty():
            return {}
        data = json.loads(stream.read(STDIN_LIMIT) or "{}")
    except Exception:  # noqa: BLE001 - garbage in, nothing out
        return {}
    return data if isinstance(data, dict) else {}


def session_id(payload: dict[str, Any]) -> str | None:
    """The session the hook runs for; None without one (a hook run by hand). A shared stand-in id ("default") made
    every such run one session: primed once, then silent for a day; its end-of-session work done once, ever."""
    value = payload.get("session_id")
    if isinstance(value, str) and value.strip():
        return value
    return os.environ.get("CLAUDE_SESSION_ID") or None


def state_dir() -> Path:
    return paths.ensure_private_dir(paths.home() / "session-state")


def _claim_path(sid: str, event: str) -> Path:
    digest = paths.sha256(sid.encode("utf-8")).hexdigest()[:32]
    return state_dir() / f"{digest}.{event}"


def claim(sid: str, event: str) -> bool:
    """True for exactly one caller per (session, event) until released."""
    try:
        fd = os.open(_claim_path(sid, event), os.O_CREAT | os.O_EXCL | os.O_WRONLY, paths.FILE_MODE)
    except FileExistsError:
        return False
    os.write(fd, json.dumps({"session_id_sha256": paths.sha256(sid.encode()).hexdigest(), "at": time.time()}).encode())
    os.close(fd)
    sweep()
    return True


def release(sid: str | None, event: str) -> None:
    if sid is not None:
        _claim_path(sid, event).unlink(missing_ok=True)


def sweep() -> None:
    cutoff = time.time() - SWEEP_AFTER_SECONDS
    try:
        for entry in os.scandir(state_dir()):
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                Path(entry.path).unlink(missing_ok=True)
    except OSError:
        pass


def export_session_env(sid: str | None, project: Path) -> None:
    """At SessionStart Claude Code offers ``CLAUDE_ENV_FILE``: lines appended there reach the agent's later
    commands, so its writes carry this session (Claude Code does not pass the session id to them)."""
    target = os.environ.get("CLAUDE_ENV_FILE")
    if not target:
        return
    import shlex

    with open(target, "a", encoding="utf-8") as handle:
        if sid is not None:
            handle.write(f"export CEREBRO_ORIGIN_SESSION={shlex.quote(sid)}\n")
        handle.write(f"export CLAUDE_PROJECT_DIR={shlex.quote(str(project))}\n")


def render_prime(primed: list[Any], total_active: int, budget_tokens: int, tail: str) -> tuple[str, int]:
    """The primed memories framed as quoted data (:mod:`cerebro.mcp.framing`, as the MCP server frames them:
    a memory cannot pose as the user or the system) within the token budget, then ``tail`` (the gc notice),
    ending with how many more memories exist and how to recall them. Returns (text, memories shown).

    The budget is a cap on all of it, the caller's banner included: a memory that alone would overflow it is cut,
    with a pointer to the whole text; a gc notice longer than a quarter of it keeps its count only, and under a
    budget too small for the notice, the closing line and a memory, the memory comes first."""
    from cerebro.mcp.framing import CHARS_PER_TOKEN, MIN_CUT_CHARS, frame_memories, header

    def more_line(more: int) -> str:
        noun = "memory" if more == 1 else "memories"
        return f'\n\n_{more} more {noun} in this brain — `cerebro recall "<topic>"` finds them._' if more else ""

    def tokens(chars: int) -> int:
        return chars // CHARS_PER_TOKEN + 1

    if len(tail) > budget_tokens // 4 * CHARS_PER_TOKEN:
        tail = "\n".join(tail.split("\n")[:4])  # its heading and count, not each eviction
    room = budget_tokens - tokens(len(banner(total_active)) + 2)
    extras = tokens(len(tail) + len(more_line(total_active)))  # the longest the closing line can be
    if room - extras < tokens(len(header("0" * 8, "project")) + MIN_CUT_CHARS):
        tail, extras, closing = "", 0, False  # too small a budget for them and a memory: the memory first
    else:
        closing = True
    framed = frame_memories(primed, budget_tokens=max(0, room - extras), short_ids=True, get_hint="`cerebro get {id}`")
    more = more_line(max(0, total_active - framed.shown)) if closing else ""
    return framed.text + tail + more, framed.shown


def banner(shown: int) -> str:
    return f"Cerebro online. {shown} memor{'y' if shown == 1 else 'ies'} loaded."


def gc_tail(project: Path) -> str:
    log = paths.gc_log_path(project)
    try:
        lines = [line for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
        entry = json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return ""
    # Only what cerebro wrote is shown, and only as numbers and ids: never a file's text.
    from cerebro.values import NODE_TYPES  # here: the hooks that never reach this do not define the values (ADR 0036)

    if not isinstance(entry, dict):
        return ""
    archived = entry.get("archived")
    if type(archived) is not int or archived <= 0:  # a bool is an int to isinstance: `true` is no count
        return ""
    shown = [
        f"- {e['type']} {e['id'][:8]} (retention {float(e['retention_score']):.4f})"
        for e in entry.get("evicted") or []
        if isinstance(e, dict)
        and isinstance(e.get("id"), str)
        and e.get("type") in NODE_TYPES
        and isinstance(e.get("retention_score"), int | float)
    ][:10]
    head = f"{archived} memor{'y' if archived == 1 else 'ies'} archived by the last gc (their text is in the archive)"
    return "\n\n--- CEREBRO GC EVICTIONS (review and re-add if needed) ---\n" + "\n".join([head, *shown])


def prime(event: str, project: Path, payload: dict[str, Any]) -> str | None:
    """What to print for ``hook prime`` (None: nothing)."""
    sid = session_id(payload)
    if event == "sessionstart":
        try:
            export_session_env(sid, project)
        except OSError:
            pass
        try:
            catch_up_in_background()
        except OSError:
            pass
    if sid is None and event == "userpromptsubmit":
        return None  # once a session cannot be told without its id: never at every prompt (ADR 0064)
    if sid is not None and not claim(sid, "session_start"):
        return None  # already primed: every later prompt of the session pays only this check
    # The brain's modules on a handle, not the Brain facade, which imports every module it delegates to (~6 ms).
    from cerebro.brain import retrieval, settings, status
    from cerebro.brain.opening import project_handle
    from cerebro.errors import BrainNotFound

    delivered = False
    try:
        try:
            h = project_handle(project)
        except BrainNotFound:
            # Told once per session, at session start; prime stays unclaimed so a brain made later still primes.
            if event == "sessionstart" and (sid is None or claim(sid, "no_brain_notice")):
                return json.dumps(NO_BRAIN_NOTICE, ensure_ascii=False)
            return None
        try:
            primed = retrieval.prime(h, statuses=False)  # text only: no statuses shown
            if not primed:
                return None  # an empty brain stays silent
            total = status.active_count(h)
            budget = settings.config_value(h, "prime_token_budget")
            text, shown = render_prime(primed, total, budget, gc_tail(project))
            if not shown:
                return None  # nothing fitted: deliver nothing, stay retryable
            retrieval.touch_surfaced(h, [p.node.id for p in primed[:shown]])  # the budget's leftovers: not surfaced
        finally:
            h.close()
        body = f"{banner(shown)}\n\n{text}"
        delivered = True
        if event == "sessionstart":
            return json.dumps(
                {
                    "systemMessage": banner(shown),
                    "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": body},
                },
                ensure_ascii=False,
            )
        return body
    finally:
        if not delivered:
            release(sid, "session_start")  # nothing reached the model: let a later event try again


def post_compact(payload: dict[str, Any]) -> None:
    """Re-arm prime: the compacted context lost what was primed — unless the prime is seconds old (a parallel
    registration of this event already primed the compacted context)."""
    sid = session_id(payload)
    if sid is None:
        return  # never claimed
    try:
        age = time.time() - _claim_path(sid, "session_start").stat().st_mtime
    except OSError:
        return  # not primed (or already re-armed): nothing to release
    if age >= REARM_GRACE_SECONDS:
        release(sid, "session_start")


def session_end(project: Path, payload: dict[str, Any]) -> None:
    """Record this session's end-of-session work (gc, then metrics ingest) and start the detached worker
    that does it: the hook itself returns in a process start-up's time, inside Claude Code's 1.5 s
    SessionEnd budget whatever the load (ADR 0017). Once per session: the job file is the claim."""
    import uuid

    from cerebro.integration.claude_code import aftercare

    # Without a session id, each end is its own job: one stand-in id was done once and never again.
    sid = session_id(payload) or f"unidentified-{uuid.uuid4()}"
    aftercare.enqueue(project, sid, _transcript_dir(payload))
    if aftercare.has_pending():  # also work a killed worker left behind
        aftercare.spawn_worker()


def _transcript_dir(payload: dict[str, Any]) -> Path | None:
    """Where Claude Code keeps this session's transcript, from the payload (more reliable than deriving the
    folder's name from the project path); None → ingest derives it. Only a folder of Claude Code's own transcript
    store is taken (symbolic links resolved): a payload must not point ingest at any folder on the machine."""
    value = payload.get("transcript_path")
    if not isinstance(value, str) or not value.endswith(".jsonl"):
        return None
    transcript = Path(value)
    if not transcript.is_file():
        return None
    folder = Path(os.path.realpath(transcript.parent))
    store = Path(os.path.realpath(paths.claude_projects_dir()))
    return transcript.parent if folder.parent == store else None


def catch_up_in_background() -> None:
    """At session start: a previous session's end-of-session work that never finished (its worker was
    killed, the machine slept) is started again. A directory listing when there is nothing to do: the worker's module
    (~2 ms of import) only when the pending folder holds anything."""
    try:
        with os.scandir(paths.aftercare_pending_dir()) as entries:
            if next(entries, None) is None:
                return
    except OSError:
        return  # no pending folder: no session has ended here yet
    from cerebro.integration.claude_code import aftercare

    if aftercare.has_pending() and not aftercare.worker_running():
        aftercare.spawn_worker()


def has_brain(project: Path) -> bool:
    """The plugin's self-gate: a file check, no database opened (a team brain: its binding, ADR 0030)."""
    from cerebro import team

    if paths.project_brain_path(project).is_file() or os.environ.get(team.ENV_STORE_URL):
        return True
    return team.binding_file(project).is_file()


def _catch_up(rest: list[str]) -> int:
    """Run pending end-of-session work now, in the foreground (the detached worker runs exactly this)."""
    from cerebro.integration.claude_code import aftercare

    if rest:
        raise ValueError(f"unexpected arguments {rest}")
    done = aftercare.catch_up()
    if not os.environ.get(aftercare.WORKER_ENV):
        left = len(aftercare.pending_jobs())
        print(
            f"End-of-session work done for {done} session{'' if done == 1 else 's'}"
            + (
                f"; {left} still pending (another worker is running, or a step failed: see {aftercare.log_path()})"
                if left
                else ""
            )
        )
    return 0


def run(argv: list[str]) -> int:
    """``hook <prime|post-compact|session-end> [--event E]``: always exit 0 (a hook never breaks a session).

    ``hook has-brain`` is the one probe with a meaningful exit code (0 yes, 1 no): the plugin's hooks run it
    first and stay silent in projects without a brain.
    """
    from cerebro.cli_state import state

    if argv[:1] == ["has-brain"]:
        try:
            return 0 if len(argv) == 1 and has_brain(paths.resolve_project_dir(state.project)) else 1
        except Exception:  # noqa: BLE001 - unresolvable project: no brain
            return 1
    try:
        if argv[:1] == ["catch-up"]:  # a session's garbage collection and metrics ingest: not bounded like a hook
            from cerebro import process

            process.resume_collector()
            return _catch_up(argv[1:])
        if not argv or argv[0] not in ("prime", "post-compact", "session-end"):
            raise ValueError(
                f"unknown hook {argv[0] if argv else ''!r}: use prime, post-compact, session-end or catch-up"
            )
        event = ""
        rest = argv[1:]
        if rest[:1] == ["--event"] and len(rest) >= 2:
            event, rest = rest[1], rest[2:]
        elif rest and rest[0].startswith("--event="):
            event, rest = rest[0].split("=", 1)[1], rest[1:]
        if rest or event not in ("", "sessionstart", "userpromptsubmit"):
            raise ValueError(f"unexpected arguments {rest or [event]}")
        payload = read_payload()
        project = paths.resolve_project_dir(state.project)
        if argv[0] == "prime":
            output = prime(event, project, payload)
            if output:
                try:
                    sys.stdout.write(output + "\n" if event == "sessionstart" else output)  # one JSON line
                    sys.stdout.flush()
                except OSError:  # Claude Code went away (EPIPE): nothing was delivered, so a later event may prime
                    release(session_id(payload), "session_start")
                    raise
        elif argv[0] == "post-compact":
            post_compact(payload)
        else:
            session_end(project, payload)
    except Exception as exc:  # noqa: BLE001
        print(f"cerebro: hook: {' '.join(str(exc).split())}", file=sys.stderr)
    return 0
