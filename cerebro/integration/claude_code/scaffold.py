"""``cerebro init``'s Claude Code files: hooks merged into ``.claude/settings.json``, skills, the CLAUDE.md section
(or, with ``--local``, ``.claude/settings.local.json`` and ``CLAUDE.local.md``), and ``init --remove``.

Each step is idempotent and touches only what is ours. Our hook entries are recognised by their exact
command text or by the shape of a cerebro session hook (:func:`templates.is_cerebro_hook`: this cerebro's,
its older scaffolds', upstream Go cerebro's) — never by the substring "cerebro", which would also catch a
user's own hook or permission rule that mentions it. The user's entries and every unrelated key stay where
they were, in their order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cerebro.errors import InvalidInput
from cerebro.integration.claude_code import templates
from cerebro.integration.claude_code.sections import (  # the outcomes of a step, shared by every step
    CREATED,
    FAILED,
    REMOVED,
    REPLACED,
    SKIPPED,
    UPDATED,
    delete_left_empty,
    remove_claudemd_section,
    write_atomically,
    write_claudemd_section,
)

PLUGIN = "plugin"  # the step was left to the installed cerebro plugin, which carries it


@dataclass(frozen=True)
class Targets:
    """Where init writes for a project: the committed files, or with ``--local`` the user's own
    (``.claude/settings.local.json`` and ``CLAUDE.local.md``; project skills are committed files, so a
    local install writes none — the plugin carries them)."""

    project: Path
    local: bool = False

    @property
    def settings(self) -> Path:
        return self.project / ".claude" / ("settings.local.json" if self.local else "settings.json")

    @property
    def skills(self) -> Path | None:
        return None if self.local else self.project / ".claude" / "skills"

    @property
    def claudemd(self) -> Path:
        return self.project / ("CLAUDE.local.md" if self.local else "CLAUDE.md")


@dataclass(frozen=True)
class ScaffoldReport:
    settings: str  # created | updated | replaced | skipped | failed | plugin | removed
    skills_written: int
    claudemd: str  # created | updated | replaced | skipped | failed | removed
    warnings: tuple[str, ...] = ()
    plugin: str | None = None  # the enabled cerebro plugin ("cerebro@cerebro"), if any
    settings_file: str = ".claude/settings.json"
    claudemd_file: str = "CLAUDE.md"
    skills_removed: int = 0

    @property
    def failed(self) -> bool:
        return FAILED in (self.settings, self.claudemd) or any(w.startswith("could not") for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "settings_file": self.settings_file,
            "skills_written": self.skills_written,
            "skills_removed": self.skills_removed,
            "claudemd": self.claudemd,
            "claudemd_file": self.claudemd_file,
            "plugin": self.plugin,
            "warnings": list(self.warnings),
        }


def check(targets: Targets) -> None:
    """Refuse before anything is written: a settings file we could not merge into would leave init half
    done (the brain made, the hooks not wired) behind an exit code of 0."""
    if targets.settings.exists():
        _load_settings(targets.settings)


def scaffold(targets: Targets, *, force: bool = False, stop_guard_enabled: bool = False) -> ScaffoldReport:
    """All three steps; a failing step is reported (and makes init exit non-zero) without stopping the others.

    ``stop_guard_enabled``: the brain has the guard on, so a Stop → stop-guard entry is the user's own
    wiring, not an older scaffold's leftover, and ``--force`` keeps it.

    One rule keeps init and the plugin from doubling anything: where the cerebro plugin is enabled, the
    plugin carries the hooks and skills, so init writes neither (and ``--force`` removes init's earlier
    ones); the CLAUDE.md section, which a plugin cannot provide, is written either way."""
    warnings: list[str] = []
    plugin = plugin_enabled(targets.project)
    settings = claudemd = FAILED
    skills_written = skills_removed = 0
    try:
        if plugin:
            settings = PLUGIN
            if force and targets.settings.exists() and remove_hooks(targets.settings) == REMOVED:
                warnings.append(
                    f"removed init's hooks from {_rel(targets, targets.settings)}: the {plugin} plugin carries them"
                )
        else:
            settings = merge_settings(targets.settings, force=force, keep_stop_guard=stop_guard_enabled)
            stale = _stale_hooks(targets.settings)
            if stale and not force:
                warnings.append(
                    f"{_rel(targets, targets.settings)} has older cerebro hooks ({', '.join(stale)}): "
                    "run 'cerebro init --force' to replace them"
                )
    except (OSError, InvalidInput) as exc:
        settings = FAILED
        warnings.append(f"could not update {_rel(targets, targets.settings)}: {exc}")
    if targets.skills is not None:
        try:
            if plugin:
                if force:
                    skills_removed = remove_skills(targets.skills)
            else:
                skills_written = write_skills(targets.skills, force=force)
        except OSError as exc:
            warnings.append(f"could not write skills: {exc}")
    try:
        claudemd = write_claudemd_section(targets.claudemd, force=force)
    except (OSError, UnicodeDecodeError) as exc:  # not UTF-8 text: left as it is, said so
        claudemd = FAILED
        warnings.append(f"could not update {targets.claudemd.name}: {exc}")
    return ScaffoldReport(
        settings,
        skills_written,
        claudemd,
        tuple(warnings),
        plugin,
        _rel(targets, targets.settings),
        targets.claudemd.name,
        skills_removed,
    )


def remove(targets: Targets) -> ScaffoldReport:
    """``init --remove``: take out exactly what init added — our hook entries (any cerebro version's), the
    skills whose text is ours, the CLAUDE.md section — and keep everything of the user's."""
    warnings: list[str] = []
    settings = claudemd = FAILED
    removed = 0
    try:
        settings = remove_hooks(targets.settings) if targets.settings.exists() else SKIPPED
    except (OSError, InvalidInput) as exc:
        warnings.append(f"could not update {_rel(targets, targets.settings)}: {exc}")
    if targets.skills is not None:
        try:
            removed = remove_skills(targets.skills, warnings=warnings)
        except OSError as exc:
            warnings.append(f"could not remove skills: {exc}")
    try:
        claudemd = remove_claudemd_section(targets.claudemd)
    except (OSError, UnicodeDecodeError) as exc:
        warnings.append(f"could not update {targets.claudemd.name}: {exc}")
    try:
        (targets.project / ".claude").rmdir()  # only if init's removal left it empty
    except OSError:
        pass
    return ScaffoldReport(
        settings,
        0,
        claudemd,
        tuple(warnings),
        plugin_enabled(targets.project),
        _rel(targets, targets.settings),
        targets.claudemd.name,
        removed,
    )


def _rel(targets: Targets, path: Path) -> str:
    try:
        return str(path.relative_to(targets.project))
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- the plugin


def claude_settings_files(project: Path) -> list[Path]:
    """The settings files Claude Code reads for this project, user scope first."""
    return [
        Path.home() / ".claude" / "settings.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ]


def plugin_enabled(project: Path) -> str | None:
    """The id (``cerebro@<marketplace>``) of a cerebro plugin enabled for this project, if any.

    Claude Code records an installed plugin's state under ``enabledPlugins`` in the settings file of the
    scope it was installed in; a later (narrower) scope overrides an earlier one."""
    state: dict[str, bool] = {}
    for path in claude_settings_files(project):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        enabled = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(enabled, dict):
            for key, value in enabled.items():
                if isinstance(key, str) and key.split("@", 1)[0] == "cerebro":
                    state[key] = value is True
    return next((key for key, on in state.items() if on), None)


# --------------------------------------------------------------------------- settings.json


def _load_settings(path: Path) -> dict[str, Any]:
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it and run init again") from None
    if not isinstance(settings, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; fix it and run init again")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or any(not isinstance(v, list) for v in hooks.values()):
        raise InvalidInput(f'{path}: "hooks" is not an object of event lists; fix it and run init again')
    return settings


def _current() -> set[tuple[str, str]]:
    return {(event, templates.init_command(command)) for event, _, command in templates.HOOKS}


def _is_ours(event: str, command: object, *, keep_stop_guard: bool = False) -> bool:
    """A handler this cerebro, an older one or upstream Go cerebro wrote (exact, or by shape)."""
    if (event, command) in _current() or templates.is_cerebro_hook(command):
        return True
    return any(
        e == event and c == command and not (keep_stop_guard and e == "Stop") for e, c in templates.LEGACY_COMMANDS
    )


def _handlers(hooks: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (event, handler.get("command"))
        for event, groups in hooks.items()
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for handler in group["hooks"]
        if isinstance(handler, dict)
    ]


def _stale_hooks(path: Path) -> list[str]:
    """Events with a cerebro hook that is not the current template's (an older scaffold's, or upstream's)."""
    if not path.exists():
        return []
    hooks = _load_settings(path).get("hooks", {})
    current = _current()
    return sorted(
        {
            event
            for event, command in _handlers(hooks)
            if templates.is_cerebro_hook(command) and (event, command) not in current
        }
    )


def merge_settings(path: Path, *, force: bool = False, keep_stop_guard: bool = False) -> str:
    """Without ``force``: add the template's entries that are missing, for events with no cerebro hook at
    all (an older one is left, and reported). With it: remove every cerebro hook, then add the template's."""
    if not path.exists():
        write_atomically(path, templates.dump_json(templates.hooks_config()))
        return CREATED
    settings = _load_settings(path)
    hooks = settings.get("hooks", {})
    before = json.dumps(hooks, sort_keys=True)
    removed = _remove_ours(hooks, keep_stop_guard=keep_stop_guard) if force else 0
    wired = {event for event, command in _handlers(hooks) if _is_ours(event, command)}
    template = templates.hooks_config()["hooks"]
    for event, groups in template.items():
        if event in wired and not force:
            continue
        for group in groups:
            command = group["hooks"][0]["command"]
            if not _has_command(hooks.get(event, []), group["matcher"], command):
                hooks.setdefault(event, []).append(group)
    if json.dumps(hooks, sort_keys=True) == before:
        return SKIPPED
    settings["hooks"] = hooks
    write_atomically(path, templates.dump_json(settings, like=path.read_bytes().decode("utf-8")))
    return REPLACED if removed else UPDATED


def remove_hooks(path: Path) -> str:
    """Take every cerebro hook out of a settings file; a file left holding nothing at all is deleted."""
    settings = _load_settings(path)
    hooks = settings.get("hooks", {})
    if not _remove_ours(hooks):
        return SKIPPED
    if hooks:
        settings["hooks"] = hooks
    else:
        settings.pop("hooks", None)
    if settings:
        write_atomically(path, templates.dump_json(settings, like=path.read_bytes().decode("utf-8")))
    else:
        delete_left_empty(path, templates.dump_json({}))
    return REMOVED


def _has_command(groups: list[Any], matcher: str, command: str) -> bool:
    """Is ``command`` wired under ``matcher``? (resume, compact and clear share one command.)"""
    return any(
        isinstance(group, dict)
        and (group.get("matcher") or "") == matcher
        and isinstance(handler, dict)
        and handler.get("command") == command
        for group in groups
        for handler in (group.get("hooks") or [] if isinstance(group, dict) else [])
    )


def _remove_ours(hooks: dict[str, list[Any]], *, keep_stop_guard: bool = False) -> int:
    """Drop our handlers, then matcher groups and events they leave empty. Returns how many."""
    removed = 0
    for event in list(hooks):
        kept_groups = []
        for group in hooks[event]:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                kept_groups.append(group)
                continue
            kept = [
                h
                for h in handlers
                if not (isinstance(h, dict) and _is_ours(event, h.get("command"), keep_stop_guard=keep_stop_guard))
            ]
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
        write_atomically(target, text)
        written += 1
    return written


def remove_skills(folder: Path, *, warnings: list[str] | None = None) -> int:
    """Remove the skills whose text is ours (a skill the user edited is theirs now: kept, and said)."""
    removed = 0
    for name in templates.SKILLS:
        target = folder / name / "SKILL.md"
        if not target.is_file():
            continue
        if target.read_text(encoding="utf-8") != templates.skill_text(name):
            if warnings is not None:
                warnings.append(f"kept .claude/skills/{name}/SKILL.md: it differs from cerebro's (edited?)")
            continue
        target.unlink()
        removed += 1
        for folder_left in (target.parent, folder):
            try:
                folder_left.rmdir()  # only when empty: the user's files in it stay
            except OSError:
                break
    return removed
