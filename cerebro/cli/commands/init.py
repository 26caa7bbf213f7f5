from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro import paths
from cerebro.cli.common import brain_path
from cerebro.cli.output import emit
from cerebro.logs import warn

_SETTINGS_MESSAGES = {
    "created": "Created {file} (session hooks)",
    "updated": "Updated {file} (added cerebro's session hooks)",
    "replaced": "Updated {file} (replaced cerebro hooks with latest)",
    "skipped": "Skipped {file} (cerebro hooks already present)",
    "plugin": "Skipped {file}: the {plugin} plugin carries the hooks and skills",
    "removed": "Removed cerebro's hooks from {file}",
    "failed": "Could not update {file} (left as it was; see the warning)",
}
_CLAUDEMD_MESSAGES = {
    "created": "Created {file} (Cerebro Memory System section)",
    "updated": "Updated {file} (added Cerebro Memory System section)",
    "replaced": "Updated {file} (replaced Cerebro Memory System section)",
    "skipped": "Skipped {file} (Cerebro section already present, use --force to update)",
    "removed": "Removed the Cerebro Memory System section from {file}",
    "failed": "Could not update {file} (see the warning)",
}


def init(
    *,
    global_: Annotated[bool, Parameter(name="--global", help="Create the global brain (CEREBRO_HOME/global.sqlite)")] = False,
    embed_provider: Annotated[str | None, Parameter(help="local (default: offline MiniLM), ollama, voyage or none")] = None,
    embed_model: Annotated[str | None, Parameter(help="Embedding model (default: the provider's)")] = None,
    embed_dims: Annotated[int | None, Parameter(help="Vector dimensions (0 or omitted: the provider's)")] = None,
    force: Annotated[
        bool,
        Parameter(help="Back up the brain and refresh cerebro's hooks, skills and CLAUDE.md section (replacing "
                       "older cerebro and upstream hooks); with --embed-*, also re-write the embedding settings"),
    ] = False,
    skip_integration: Annotated[bool, Parameter(help="Only create the brain; write no Claude Code files")] = False,
    local: Annotated[
        bool,
        Parameter(help="Wire Claude Code for you alone: hooks in .claude/settings.local.json and the section in "
                       "CLAUDE.local.md (neither is committed); no project skills"),
    ] = False,
    remove: Annotated[
        bool,
        Parameter(help="Take out what init added (cerebro's hooks, its unedited skills, the CLAUDE.md section); "
                       "the brain stays unless --purge"),
    ] = False,
    purge: Annotated[bool, Parameter(help="With --remove: also delete the project's brain, after a backup")] = False,
) -> None:
    """Create the brain for this project (or the global brain) and wire it into Claude Code. Safe to run again.

    Writes cerebro's session hooks into .claude/settings.json (your own entries are kept), the skills remember, recall, consolidate, dream and develop into .claude/skills/, and a "## Cerebro Memory System" section into CLAUDE.md. Each hook does nothing for a teammate without cerebro installed. Where the cerebro plugin is enabled, the plugin carries the hooks and skills and init writes only the CLAUDE.md section.
    """  # noqa: E501 - one paragraph: the help renderer wraps it
    from cerebro.api import Brain
    from cerebro.cli_state import state
    from cerebro.errors import InvalidInput
    from cerebro.integration.claude_code import scaffold as cc

    if purge and not remove:
        raise InvalidInput("--purge goes with --remove")
    if remove and (global_ or force or skip_integration or embed_provider or embed_model or embed_dims is not None):
        raise InvalidInput("--remove takes only --local and --purge")
    project = paths.resolve_project_dir(state.project).absolute()
    if not project.is_dir():
        raise InvalidInput(f"project folder {project} does not exist")
    targets = cc.Targets(project, local=local)
    if remove:
        _remove(targets, purge=purge)
        return

    wire = not (global_ or skip_integration)
    if wire:
        cc.check(targets)  # a settings file we cannot merge into: refuse before the brain is touched
    target = paths.global_brain_path() if global_ else brain_path()
    result = Brain.init(
        target, embed_provider=embed_provider, embed_model=embed_model, embed_dims=embed_dims, force=force
    )
    data = result.to_dict() | {"is_global": global_}
    scaffolded = None
    marketplace = None
    if wire:
        with Brain.open(target) as brain:
            guard_on = brain.config_value("stop_guard_enabled") is True
        scaffolded = cc.scaffold(targets, force=force, stop_guard_enabled=guard_on)
        for message in scaffolded.warnings:
            warn(message)
        data["integration"] = scaffolded.to_dict() | {"project": str(project)}
        if not scaffolded.plugin:
            marketplace = _marketplace()
            data["integration"]["marketplace"] = str(marketplace) if marketplace else None

    def md() -> str:
        what = "Global brain" if global_ else "Brain"
        if result.created:
            lines = [f"{what} initialized at {result.path}"]
        elif result.backup and force:
            lines = [f"{what} re-initialized at {result.path} (backup: {result.backup})"]
        else:
            lines = [f"{what} already initialized at {result.path}"]
        lines.append(f"Embeddings: {result.embedding_provider}" + (f" ({result.embedding_model}, {result.embedding_dimensions} dims)" if result.embedding_dimensions else ""))
        if scaffolded is not None:
            lines.append("")
            lines.extend(_report_lines(scaffolded, force=force))
            if marketplace is not None:
                lines.append("")
                lines.append("Claude Code plugin (instead of these files; hooks run once per session either way):")
                lines.append(f"  claude plugin marketplace add {marketplace}")
                lines.append("  claude plugin install cerebro@cerebro     then: cerebro init --force (removes init's copies)")
        lines.append("Tune it with: cerebro config list")
        return "\n".join(lines)

    emit(data, md)
    if scaffolded is not None and scaffolded.failed:
        from cerebro.errors import IntegrationFailed

        raise IntegrationFailed("the brain is ready but Claude Code was not fully wired (see the warnings above)")


def _report_lines(report, *, force: bool) -> list[str]:  # noqa: ANN001
    lines = [_SETTINGS_MESSAGES[report.settings].format(file=report.settings_file, plugin=report.plugin)]
    if report.settings != "plugin" and report.settings_file.endswith("settings.local.json"):
        lines.append("Skipped skills (a --local install writes none: project skills are committed files)")
    elif report.skills_removed:
        lines.append(f"Removed {report.skills_removed} skill files from .claude/skills/")
    elif report.settings == "plugin":
        lines.append("Skipped skills (the plugin carries them)")
    else:
        written = report.skills_written
        lines.append(
            f"{'Updated' if force else 'Created'} {written} skill files in .claude/skills/" if written
            else "Skipped skills (already up to date)" if force
            else "Skipped skills (already present, use --force to update)"
        )
    lines.append(
        f"Skipped {report.claudemd_file} (Cerebro section already up to date)"
        if force and report.claudemd == "skipped" else _CLAUDEMD_MESSAGES[report.claudemd].format(file=report.claudemd_file)
    )
    return lines


def _remove(targets, *, purge: bool) -> None:  # noqa: ANN001
    from cerebro.errors import IntegrationFailed
    from cerebro.integration.claude_code import scaffold as cc

    report = cc.remove(targets)
    for message in report.warnings:
        warn(message)
    data = {"removed": report.to_dict(), "project": str(targets.project), "brain": None, "backup": None}
    brain = paths.project_brain_path(targets.project)
    if purge and brain.exists():
        from cerebro.db.migrate import backup_file

        data["backup"] = str(backup_file(brain, "pre-purge"))
        for suffix in ("", "-wal", "-shm"):
            brain.with_name(brain.name + suffix).unlink(missing_ok=True)
        data["brain"] = str(brain)

    def md() -> str:
        lines = [
            "Left .claude settings alone (no cerebro hooks)" if report.settings == "skipped"
            else _SETTINGS_MESSAGES[report.settings].format(file=report.settings_file, plugin=report.plugin),
        ]
        if report.skills_removed:
            lines.append(f"Removed {report.skills_removed} skill files from .claude/skills/")
        lines.append(
            f"Left {report.claudemd_file} alone (no Cerebro section)" if report.claudemd == "skipped"
            else _CLAUDEMD_MESSAGES[report.claudemd].format(file=report.claudemd_file)
        )
        if data["brain"]:
            lines.append(f"Deleted the brain {data['brain']} (backup: {data['backup']})")
        else:
            lines.append(f"Kept the brain {brain}" if brain.exists() else "No brain for this project")
        if report.plugin:
            lines.append(f"The {report.plugin} plugin is still enabled: claude plugin uninstall {report.plugin}")
        return "\n".join(lines)

    emit(data, md)
    if report.failed:
        raise IntegrationFailed("some of cerebro's Claude Code files could not be removed (see the warnings above)")


def _marketplace():  # noqa: ANN202
    """A local marketplace holding cerebro's plugin, rendered from this version's templates under
    CEREBRO_HOME (so it works from a wheel, without this repository); None if it cannot be written."""
    from cerebro.integration.claude_code import plugin

    root = paths.home() / "claude-plugin"
    try:
        paths.ensure_private_dir(root)
        plugin.write(root)
    except OSError as exc:
        warn(f"could not write the plugin marketplace under {root}: {exc}")
        return None
    return root
