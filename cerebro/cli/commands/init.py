from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro import paths
from cerebro.cli.common import brain_path
from cerebro.cli.output import emit
from cerebro.logs import warn

_SETTINGS_MESSAGES = {
    "created": "Created .claude/settings.json (session hooks)",
    "updated": "Updated .claude/settings.json (added cerebro's session hooks)",
    "replaced": "Updated .claude/settings.json (replaced cerebro hooks with latest)",
    "skipped": "Skipped .claude/settings.json (cerebro hooks already present)",
    "failed": "Could not update .claude/settings.json (left as it was; see the warning)",
}
_CLAUDEMD_MESSAGES = {
    "created": "Created CLAUDE.md (Cerebro Memory System section)",
    "updated": "Updated CLAUDE.md (added Cerebro Memory System section)",
    "replaced": "Updated CLAUDE.md (replaced Cerebro Memory System section)",
    "skipped": "Skipped CLAUDE.md (Cerebro section already present, use --force to update)",
    "failed": "Could not update CLAUDE.md (see the warning)",
}


def init(
    *,
    global_: Annotated[bool, Parameter(name="--global", help="Create the global brain (CEREBRO_HOME/global.sqlite)")] = False,
    embed_provider: Annotated[str | None, Parameter(help="local (default: offline MiniLM), ollama, voyage or none")] = None,
    embed_model: Annotated[str | None, Parameter(help="Embedding model (default: the provider's)")] = None,
    embed_dims: Annotated[int | None, Parameter(help="Vector dimensions (0 or omitted: the provider's)")] = None,
    force: Annotated[
        bool,
        Parameter(help="Back up the brain and refresh cerebro's hooks, skills and CLAUDE.md section; with "
                       "--embed-*, also re-write the brain's embedding settings"),
    ] = False,
    skip_integration: Annotated[bool, Parameter(help="Only create the brain; write no Claude Code files")] = False,
) -> None:
    """Create the brain for this project (or the global brain) and wire it into Claude Code. Safe to run again.

    Writes cerebro's session hooks into .claude/settings.json (your own entries are kept), the skills remember, recall, consolidate, dream and develop into .claude/skills/, and a "## Cerebro Memory System" section into CLAUDE.md.
    """  # noqa: E501 - one paragraph: the help renderer wraps it
    from cerebro.api import Brain

    target = paths.global_brain_path() if global_ else brain_path()
    result = Brain.init(
        target, embed_provider=embed_provider, embed_model=embed_model, embed_dims=embed_dims, force=force
    )
    data = result.to_dict() | {"is_global": global_}
    scaffolded = None
    if not (global_ or skip_integration):
        from cerebro.cli_state import state
        from cerebro.integration.claude_code.scaffold import scaffold

        project = paths.resolve_project_dir(state.project).absolute()
        with Brain.open(target) as brain:
            guard_on = brain.config_value("stop_guard_enabled") is True
        scaffolded = scaffold(project, force=force, stop_guard_enabled=guard_on)
        for message in scaffolded.warnings:
            warn(message)
        data["integration"] = scaffolded.to_dict() | {"project": str(project)}

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
            lines.append(_SETTINGS_MESSAGES[scaffolded.settings])
            written = scaffolded.skills_written
            lines.append(
                f"{'Updated' if force else 'Created'} {written} skill files in .claude/skills/" if written
                else "Skipped skills (already up to date)" if force
                else "Skipped skills (already present, use --force to update)"
            )
            lines.append(
                "Skipped CLAUDE.md (Cerebro section already up to date)"
                if force and scaffolded.claudemd == "skipped" else _CLAUDEMD_MESSAGES[scaffolded.claudemd]
            )
            lines.append("")
            lines.append("Claude Code plugin (instead of, or beside, these files — hooks run once per session):")
            lines.append("  /plugin marketplace add <cerebro repository>   then   /plugin install cerebro@cerebro")
        lines.append("Tune it with: cerebro config list")
        return "\n".join(lines)

    emit(data, md)
