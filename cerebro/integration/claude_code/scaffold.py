"""``cerebro init``'s Claude Code files: hooks merged into ``.claude/settings.json``, skills, the CLAUDE.md section.

Each step is idempotent and touches only what is ours. Our hook entries are recognised by their exact
command text (the current templates plus the few an older scaffold wrote) — never by the substring
"cerebro", which would also catch a user's own hook or permission rule that mentions it. The user's entries
and every unrelated key stay where they were, in their order.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cerebro.errors import InvalidInput
from cerebro.integration.claude_code import templates

CREATED, UPDATED, REPLACED, SKIPPED, FAILED = "created", "updated", "replaced", "skipped", "failed"


@dataclass(frozen=True)
class ScaffoldReport:
    settings: str  # created | updated | replaced | skipped | failed
    skills_written: int
    claudemd: str  # created | updated | replaced | skipped | failed
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "skills_written": self.skills_written,
            "claudemd": self.claudemd,
            "warnings": list(self.warnings),
        }


def scaffold(project: Path, *, force: bool = False, stop_guard_enabled: bool = False) -> ScaffoldReport:
    """All three steps; a failing step is a warning, never the end of init (the brain already exists).

    ``stop_guard_enabled``: the brain has the guard on, so a Stop → stop-guard entry is the user's own
    wiring, not an older scaffold's leftover, and ``--force`` keeps it."""
    warnings: list[str] = []
    settings = skills = claudemd = None
    try:
        settings = merge_settings(project / ".claude" / "settings.json", force=force,
                                  keep_stop_guard=stop_guard_enabled)
    except (OSError, InvalidInput) as exc:
        settings = FAILED
        warnings.append(f"could not update .claude/settings.json: {exc}")
    try:
        skills = write_skills(project / ".claude" / "skills", force=force)
    except OSError as exc:
        warnings.append(f"could not write skills: {exc}")
    try:
        claudemd = write_claudemd_section(project / "CLAUDE.md", force=force)
    except OSError as exc:
        claudemd = FAILED
        warnings.append(f"could not update CLAUDE.md: {exc}")
    return ScaffoldReport(settings, skills or 0, claudemd, tuple(warnings))


# --------------------------------------------------------------------------- settings.json


def _ours(*, keep_stop_guard: bool = False) -> set[tuple[str, str]]:
    """(event, command) pairs this or an older scaffold wrote."""
    legacy = {(e, c) for e, c in templates.LEGACY_COMMANDS if not (keep_stop_guard and e == "Stop")}
    return {(event, command) for event, _, command in templates.HOOKS} | legacy


def merge_settings(path: Path, *, force: bool = False, keep_stop_guard: bool = False) -> str:
    if not path.exists():
        _write_atomically(path, templates.dump_json(templates.hooks_config()))
        return CREATED
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); left as it is") from None
    if not isinstance(settings, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; left as it is")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
        raise InvalidInput(f"{path}: \"hooks\" is not an object of event lists; left as it is")

    before = json.dumps(hooks, sort_keys=True)
    removed = _remove_ours(hooks, keep_stop_guard=keep_stop_guard) if force else 0
    for event, matcher, command in templates.HOOKS:
        if not _has_command(hooks.get(event, []), matcher, command):
            hooks.setdefault(event, []).append(
                {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}
            )
    if json.dumps(hooks, sort_keys=True) == before:
        return SKIPPED
    settings["hooks"] = hooks
    _write_atomically(path, templates.dump_json(settings))
    return REPLACED if removed else UPDATED


def _has_command(groups: list[Any], matcher: str, command: str) -> bool:
    """Is ``command`` wired under ``matcher``? (resume, compact and clear share one command.)"""
    return any(
        isinstance(group, dict) and (group.get("matcher") or "") == matcher
        and isinstance(handler, dict) and handler.get("command") == command
        for group in groups
        for handler in (group.get("hooks") or [] if isinstance(group, dict) else [])
    )


def _remove_ours(hooks: dict[str, list[Any]], *, keep_stop_guard: bool = False) -> int:
    """Drop our handlers (exact match), then matcher groups and events they leave empty. Returns how many."""
    ours = _ours(keep_stop_guard=keep_stop_guard)
    removed = 0
    for event in list(hooks):
        kept_groups = []
        for group in hooks[event]:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept_groups.append(group)
                continue
            kept = [h for h in handlers if not (isinstance(h, dict) and (event, h.get("command")) in ours)]
            removed += len(handlers) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
            elif not handlers:
                kept_groups.append(group)  # the user's own empty group: not ours to drop
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    return removed


# --------------------------------------------------------------------------- skills


def write_skills(folder: Path, *, force: bool = False) -> int:
    written = 0
    for name in templates.SKILLS:
        target = folder / name / "SKILL.md"
        text = templates.skill_text(name)
        if target.exists() and (not force or target.read_text(encoding="utf-8") == text):
            continue
        _write_atomically(target, text)
        written += 1
    return written


# --------------------------------------------------------------------------- CLAUDE.md


def write_claudemd_section(path: Path, *, force: bool = False) -> str:
    section = templates.claudemd_section()
    if not path.exists():
        _write_atomically(path, section)
        return CREATED
    text = path.read_text(encoding="utf-8")
    start = _heading_line(text, templates.SECTION_HEADING)
    if start is None:
        if text and not text.endswith("\n"):
            text += "\n"
        _write_atomically(path, text + ("\n" if text else "") + section)
        return UPDATED
    if not force:
        return SKIPPED
    before = text[:start].rstrip()
    end = _next_section(text, start + len(templates.SECTION_HEADING))
    after = text[end:] if end is not None else ""
    rebuilt = (before + "\n\n" if before else "") + section + ("\n" + after if after else "")
    if rebuilt == text:
        return SKIPPED
    _write_atomically(path, rebuilt)
    return REPLACED


def _lines_outside_fences(text: str) -> list[tuple[int, str]]:
    """(offset, line) of every line not inside a fenced code block (``` or ~~~): a heading quoted in an
    example is not a section."""
    result = []
    offset = 0
    fence = ""
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        marker = stripped[:3]
        if fence:
            if stripped.startswith(fence) and not stripped[len(fence):].strip(fence[0]).strip():
                fence = ""
        elif marker in ("```", "~~~"):
            fence = stripped[: len(stripped) - len(stripped.lstrip(marker[0]))]
        else:
            result.append((offset, line))
        offset += len(line)
    return result


def _heading_line(text: str, heading: str) -> int | None:
    """Offset of the line that is exactly ``heading`` (trailing spaces allowed), outside code fences."""
    return next((offset for offset, line in _lines_outside_fences(text) if line.rstrip() == heading), None)


def _next_section(text: str, after: int) -> int | None:
    """Offset of the next ``## `` heading after ``after``, outside code fences (``###`` sub-headings
    belong to our section)."""
    return next(
        (offset for offset, line in _lines_outside_fences(text) if offset > after and line.startswith("## ")), None
    )


# --------------------------------------------------------------------------- files


def _write_atomically(path: Path, text: str) -> None:
    """Write via a temp file and rename, so an interrupted init never leaves half a settings.json."""
    path.parent.mkdir(mode=0o750, parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
