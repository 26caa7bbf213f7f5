"""Our section of a Markdown instructions file (CLAUDE.md, AGENTS.md, GEMINI.md) — found outside code fences,
written in, replaced or taken out — and the atomic file write every scaffold step uses."""

from __future__ import annotations

import os
from pathlib import Path

from cerebro.integration.claude_code import templates

# What a step did to a file.
CREATED, UPDATED, REPLACED, SKIPPED, FAILED, REMOVED = "created", "updated", "replaced", "skipped", "failed", "removed"


# --------------------------------------------------------------------------- CLAUDE.md


def write_claudemd_section(path: Path, *, force: bool = False) -> str:
    section = templates.claudemd_section()
    if not path.exists():
        write_atomically(path, section)
        return CREATED
    text = path.read_text(encoding="utf-8")
    start = heading_line(text, templates.SECTION_HEADING)
    if start is None:
        if text and not text.endswith("\n"):
            text += "\n"
        write_atomically(path, text + ("\n" if text else "") + section)
        return UPDATED
    if not force:
        return SKIPPED
    before = text[:start].rstrip()
    after = text[section_end(text, start) :].lstrip("\n")
    rebuilt = (before + "\n\n" if before else "") + section + ("\n" + after if after else "")
    if rebuilt == text:
        return SKIPPED
    write_atomically(path, rebuilt)
    return REPLACED


def remove_claudemd_section(path: Path) -> str:
    """Cut our section out, keeping what stands before and after it; a file left empty is deleted."""
    if not path.exists():
        return SKIPPED
    text = path.read_text(encoding="utf-8")
    start = heading_line(text, templates.SECTION_HEADING)
    if start is None:
        return SKIPPED
    before = text[:start].rstrip()
    after = text[section_end(text, start) :].lstrip("\n")
    rest = before + ("\n\n" if before and after else "") + after
    if not rest.strip():
        delete_left_empty(path)
    else:
        write_atomically(path, rest if rest.endswith("\n") else rest + "\n")
    return REMOVED


def lines_outside_fences(text: str) -> list[tuple[int, str]]:
    """(offset, line) of every line not inside a fenced code block (``` or ~~~): a heading quoted in an
    example is not a section."""
    result = []
    offset = 0
    fence = ""
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip()
        marker = stripped[:3]
        if fence:
            if stripped.startswith(fence) and not stripped[len(fence) :].strip(fence[0]).strip():
                fence = ""
        elif marker in ("```", "~~~"):
            fence = stripped[: len(stripped) - len(stripped.lstrip(marker[0]))]
        else:
            result.append((offset, line))
        offset += len(line)
    return result


def heading_line(text: str, heading: str) -> int | None:
    """Offset of the line that is exactly ``heading`` (trailing spaces allowed), outside code fences."""
    return next((offset for offset, line in lines_outside_fences(text) if line.rstrip() == heading), None)


def next_section(text: str, after: int) -> int | None:
    """Offset of the next ``#`` or ``##`` heading after ``after``, outside code fences (``###`` sub-headings
    belong to our section)."""
    return next(
        (offset for offset, line in lines_outside_fences(text) if offset > after and line.startswith(("## ", "# "))),
        None,
    )


def section_end(text: str, start: int) -> int:
    """Where our section, starting at ``start``, ends: at the next ``#``/``##`` heading — or, when the section is
    still exactly as cerebro writes it (CLAUDE.md's, an agent's), right after that text: lines a user appended below
    it without a heading of their own are theirs, and --remove or --force must leave them."""
    heading = next_section(text, start + len(templates.SECTION_HEADING))
    limit = len(text) if heading is None else heading
    for written in _written_sections():
        body = written.rstrip("\n")
        if text.startswith(body, start) and start + len(body) <= limit:
            return start + len(body)
    return limit


def _written_sections() -> list[str]:
    """Every section text this cerebro writes into an instructions file."""
    from cerebro.integration.agent_instructions import section
    from cerebro.integration.agents import AGENTS

    texts = {templates.claudemd_section(), *(section(name) for name in AGENTS)}
    return sorted(texts, key=len, reverse=True)  # the longest first: one may begin with another


# --------------------------------------------------------------------------- files


def write_atomically(path: Path, text: str) -> None:
    """Write via a temp file and rename, so an interrupted init never leaves half a settings.json. A symlink (a
    dotfiles link to the user's CLAUDE.md or settings) stays a link: its target is written."""
    from cerebro import paths

    if path.is_symlink():
        path = Path(os.path.realpath(path))
    _make_folders(path.parent)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644  # a file the user may commit keeps its mode
    with paths.written_in_one_step(path, overwrite=True, mode=mode) as partial:
        partial.write_text(text, encoding="utf-8")


def delete_left_empty(path: Path, empty: str = "") -> None:
    """A file our removal left with nothing is deleted — unless it is a symlink the user made (a dotfiles link): the
    link stays and its target is left holding ``empty`` (``{}`` for a JSON file), not our text."""
    if path.is_symlink():
        write_atomically(path, empty)
    else:
        path.unlink()


def _make_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents 0755 at most — a project's folders, readable by the team, never
    world-writable even under umask 000 (``mkdir(parents=True)`` gives the parents 0777 minus the umask)."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for created in reversed(missing):
        try:
            created.mkdir(mode=0o755)  # the umask can only take bits away
        except FileExistsError:  # made meanwhile
            pass
