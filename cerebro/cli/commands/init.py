from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any, Literal

from cyclopts import Parameter

from cerebro import paths
from cerebro.cli.common import brain_path
from cerebro.cli.output import emit
from cerebro.logs import warn

if TYPE_CHECKING:
    from pathlib import Path

    from cerebro.integration.agents import AgentReport

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
_MCP_MESSAGES = {
    "created": "Created {file} (cerebro MCP server)",
    "updated": "Updated {file} (added the cerebro MCP server)",
    "replaced": "Updated {file} (replaced the 'cerebro' server with cerebro's)",
    "skipped": "Skipped {file} (cerebro MCP server already present)",
    "kept": "Kept {file} as it is: its own 'cerebro' server differs from cerebro's (--force replaces it)",
    "plugin": "Skipped {file}: the {plugin} plugin carries the MCP server",
    "removed": "Removed the cerebro MCP server from {file}",
    "failed": "Could not update {file} (left as it was; see the warning)",
}
# What each agent needs before it uses the server it was given.
_AGENT_NOTES = {
    "claude-code": "Claude Code asks once to approve the project's .mcp.json server (or set "
    "enableAllProjectMcpServers / enabledMcpjsonServers in its settings)",
    "codex": "Codex reads .codex/config.toml only in a project you trust: accept its trust prompt there "
    "(or run `codex exec --trust` once)",
    "gemini": "With folder trust on (security.folderTrust.enabled), Gemini CLI reads .gemini/settings.json only "
    "once you trust the folder",
}
AgentName = Literal["claude-code", "codex", "gemini", "cursor"]


def init(  # noqa: PLR0913 - each option of the command is a parameter (Cyclopts)
    *,
    global_: Annotated[
        bool, Parameter(name="--global", help="Create the global brain (CEREBRO_HOME/global.sqlite)")
    ] = False,
    embed_provider: Annotated[
        str | None, Parameter(help="local (default: offline MiniLM), ollama, voyage or none")
    ] = None,
    embed_model: Annotated[str | None, Parameter(help="Embedding model (default: the provider's)")] = None,
    embed_dims: Annotated[int | None, Parameter(help="Vector dimensions (0 or omitted: the provider's)")] = None,
    force: Annotated[
        bool,
        Parameter(
            help="Back up the brain and refresh cerebro's hooks, skills and CLAUDE.md section (replacing "
            "older cerebro and upstream hooks); with --embed-*, also re-write the embedding settings"
        ),
    ] = False,
    skip_integration: Annotated[bool, Parameter(help="Only create the brain; write no Claude Code files")] = False,
    local: Annotated[
        bool,
        Parameter(
            help="Wire Claude Code for you alone: hooks in .claude/settings.local.json and the section in "
            "CLAUDE.local.md (neither is committed); no project skills"
        ),
    ] = False,
    remove: Annotated[
        bool,
        Parameter(
            help="Take out what init added (cerebro's hooks, its unedited skills, the CLAUDE.md section); "
            "the brain stays unless --purge"
        ),
    ] = False,
    purge: Annotated[bool, Parameter(help="With --remove: also delete the project's brain, after a backup")] = False,
    own_brain: Annotated[
        bool,
        Parameter(
            help="In a linked git worktree: a brain of its own, instead of the one the repository's worktrees "
            "share (the main worktree's)"
        ),
    ] = False,
    store: Annotated[
        str | None,
        Parameter(
            help="Keep this project's brain in a team database instead of a file: postgresql+psycopg://user@host/db "
            "(the password from PGPASSWORD or ~/.pgpass; never written). Every command in this folder then uses it"
        ),
    ] = None,
    team_project: Annotated[
        str | None,
        Parameter(help="With --store: this project's name in the team database (default: the folder's name)"),
    ] = None,
    agent: Annotated[
        list[AgentName] | None,
        Parameter(
            name="--agent",
            help="Wire this agent (repeatable): its MCP server configuration (.mcp.json, .codex/config.toml, "
            ".gemini/settings.json, .cursor/mcp.json) with the cerebro server, and its instructions section "
            "(CLAUDE.md, AGENTS.md, GEMINI.md); claude-code also gets the hooks and skills. With --remove: "
            "take out what it wrote",
        ),
    ] = None,
) -> None:
    """Create the brain for this project (or the global brain) and wire it into Claude Code. Safe to run again.

    Writes cerebro's session hooks into .claude/settings.json (your own entries are kept), the skills remember, recall, consolidate, dream and develop into .claude/skills/, and a "## Cerebro Memory System" section into CLAUDE.md. Each hook does nothing for a teammate without cerebro installed. Where the cerebro plugin is enabled, the plugin carries the hooks and skills and init writes only the CLAUDE.md section. With --agent (claude-code, codex, gemini, cursor; repeatable), init wires those agents instead: each one's MCP server configuration gets the cerebro server (`cerebro mcp`) and its instructions file the section.

    Examples
      cerebro init
      cerebro init --agent codex --agent gemini
      cerebro init --skip-integration --embed-provider none
      cerebro init --own-brain
    """  # noqa: E501 - one paragraph: the help renderer wraps it
    from cerebro.api import Brain
    from cerebro.cli_state import state
    from cerebro.errors import InvalidInput
    from cerebro.integration import agents as mcp_agents
    from cerebro.integration.claude_code import scaffold as cc

    if purge and not remove:
        raise InvalidInput("--purge goes with --remove")
    if own_brain and (global_ or remove):
        raise InvalidInput("--own-brain does not go with --global or --remove")
    if team_project is not None and store is None:
        raise InvalidInput("--team-project goes with --store")
    if store is not None and (global_ or remove or own_brain):
        raise InvalidInput("--store does not go with --global, --remove or --own-brain")
    if remove and (global_ or force or skip_integration or embed_provider or embed_model or embed_dims is not None):
        raise InvalidInput("--remove takes only --local, --purge and --agent")
    chosen = mcp_agents.agents(list(agent)) if agent else None
    if chosen is not None and (global_ or skip_integration or local):
        raise InvalidInput("--agent does not go with --global, --skip-integration or --local")
    project = paths.resolve_project_dir(state.project).absolute()
    if not project.is_dir():
        raise InvalidInput(f"project folder {project} does not exist")
    targets = cc.Targets(project, local=local)
    if remove:
        _remove(targets, purge=purge, chosen=chosen)
        return

    wire = not (global_ or skip_integration) and (chosen is None or any(a.name == "claude-code" for a in chosen))
    if wire:
        cc.check(targets)  # a settings file we cannot merge into: refuse before the brain is touched
    if chosen:
        mcp_agents.check(project, chosen)  # the same for the agents' configuration files
    team_key = None
    target: str | Path
    owner: Path | None
    if store is not None:
        from cerebro import team

        if not team.is_store_url(store):
            raise InvalidInput(f"--store takes a PostgreSQL URL (postgresql+psycopg://user@host/db), not {store!r}")
        team_key = team.check_project_key(team_project or team.default_project_key(project))
        target, owner = store, None
    elif global_:
        target, owner = paths.global_brain_path(), None
    elif os.environ.get("CEREBRO_STORE_URL") and not own_brain:  # it binds every project of the process (ADR 0030)
        from cerebro import team

        bound = team.binding(project)  # the environment's (a file's binding is the variable's when it is set)
        assert bound is not None  # noqa: S101 - the variable is set: binding() returns it
        team_key = team.check_project_key(bound.project)
        target, owner = bound.url, None
    elif own_brain:
        target, owner = paths.own_brain_path(project), project
    else:  # a linked worktree shares its repository's brain (ADR 0025): the main worktree is its project
        target, owner = brain_path(), paths.brain_owner(project)
    result = Brain.init(
        target,
        embed_provider=embed_provider,
        embed_model=embed_model,
        embed_dims=embed_dims,
        force=force,
        project=owner,
        team_project=team_key,
    )
    if store is not None and team_key is not None:
        from cerebro import team

        team.bind(project, store, team_key)
    data = result.to_dict() | {"is_global": global_}
    if team_key is not None:
        data["team_project"] = team_key
    scaffolded = None
    marketplace = None
    if wire:
        with Brain.open(target, team_project=team_key) as brain:
            guard_on = brain.config_value("stop_guard_enabled") is True
        scaffolded = cc.scaffold(targets, force=force, stop_guard_enabled=guard_on)
        for message in scaffolded.warnings:
            warn(message)
        data["integration"] = scaffolded.to_dict() | {"project": str(project)}
        if not scaffolded.plugin:
            marketplace = _marketplace()
            data["integration"]["marketplace"] = str(marketplace) if marketplace else None
    wired = mcp_agents.wire(project, chosen, force=force) if chosen else []
    for report in wired:
        for message in report.warnings:
            warn(message)
    if chosen:
        data["agents"] = [report.to_dict() for report in wired]

    def md() -> str:
        what = "Global brain" if global_ else "Brain"
        if result.created:
            lines = [f"{what} initialized at {result.path}"]
        elif result.backup and force:
            lines = [f"{what} re-initialized at {result.path} (backup: {result.backup})"]
        else:
            lines = [f"{what} already initialized at {result.path}"]
        lines.append(
            f"Embeddings: {result.embedding_provider}"
            + (
                f" ({result.embedding_model}, {result.embedding_dimensions} dims)"
                if result.embedding_dimensions
                else ""
            )
        )
        if scaffolded is not None:
            lines.append("")
            lines.extend(_report_lines(scaffolded, force=force))
            if marketplace is not None and not state.quiet:  # advice, not a result: -q leaves it out
                lines.append("")
                lines.append("Claude Code plugin (instead of these files; hooks run once per session either way):")
                lines.append(f"  claude plugin marketplace add {marketplace}")
                lines.append(
                    "  claude plugin install cerebro@cerebro     then: cerebro init --force (removes init's copies)"
                )
        if wired:
            lines.append("")
            lines.extend(_agent_lines(wired, force=force))
        if not state.quiet:
            lines.append("Tune it with: cerebro config list")
        return "\n".join(lines)

    emit(data, md)
    if (scaffolded is not None and scaffolded.failed) or any(report.failed for report in wired):
        from cerebro.errors import IntegrationFailed

        what = "Claude Code was" if chosen is None else "the agents were"
        raise IntegrationFailed(f"the brain is ready but {what} not fully wired (see the warnings above)")


def _agent_lines(reports: list[AgentReport], *, force: bool = False, removing: bool = False) -> list[str]:
    """One line per file each agent's step touched (a shared AGENTS.md once), then what the agent needs."""
    from cerebro.integration import agents as mcp_agents

    lines, seen = [], set()
    for report in reports:
        title = mcp_agents.AGENTS[report.agent].title
        if removing and report.config == "skipped":
            lines.append(f"{title}: Left {report.config_file} alone (no cerebro MCP server)")
        else:
            message = _MCP_MESSAGES[report.config].format(file=report.config_file, plugin=report.plugin)
            lines.append(f"{title}: {message}")
        if report.instructions is None or report.instructions_file in seen:
            continue
        seen.add(report.instructions_file)
        file = report.instructions_file
        if report.instructions == "shared":
            lines.append(f"{title}: Kept the Cerebro section in {file} (another wired agent reads it)")
        elif removing and report.instructions == "skipped":
            lines.append(f"{title}: Left {file} alone (no Cerebro section)")
        elif force and report.instructions == "skipped":
            lines.append(f"{title}: Skipped {file} (Cerebro section already up to date)")
        else:
            lines.append(f"{title}: " + _CLAUDEMD_MESSAGES[report.instructions].format(file=file))
    if not removing:
        for report in reports:
            note = _AGENT_NOTES.get(report.agent)
            if note and report.config in ("created", "updated", "replaced"):
                lines.append(f"Note: {note}")
    return lines


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
            f"{'Updated' if force else 'Created'} {written} skill files in .claude/skills/"
            if written
            else "Skipped skills (already up to date)"
            if force
            else "Skipped skills (already present, use --force to update)"
        )
    lines.append(
        f"Skipped {report.claudemd_file} (Cerebro section already up to date)"
        if force and report.claudemd == "skipped"
        else _CLAUDEMD_MESSAGES[report.claudemd].format(file=report.claudemd_file)
    )
    return lines


def _remove(targets, *, purge: bool, chosen=None) -> None:  # noqa: ANN001
    """Without --agent: what plain init wrote (Claude Code's hooks, skills and CLAUDE.md section) and a
    .mcp.json entry an earlier `--agent claude-code` wrote. With --agent: those agents' files only."""
    from cerebro.errors import IntegrationFailed
    from cerebro.integration import agents as mcp_agents
    from cerebro.integration.claude_code import scaffold as cc

    if chosen:
        mcp_agents.check(targets.project, chosen)  # a file we cannot parse: refuse before anything is removed
    claude = chosen is None or any(a.name == "claude-code" for a in chosen)
    report = cc.remove(targets) if claude else None
    if chosen is None:  # plain --remove touches .mcp.json only when it holds exactly cerebro's entry
        claude_code = mcp_agents.AGENTS["claude-code"]
        wired_here = not targets.local and mcp_agents.is_wired(targets.project, claude_code)
        chosen_for_mcp = [claude_code] if wired_here else []
    else:
        chosen_for_mcp = chosen
    unwired = mcp_agents.unwire(targets.project, chosen_for_mcp) if chosen_for_mcp else []
    for message in report.warnings if report else ():
        warn(message)
    for agent_report in unwired:
        for message in agent_report.warnings:
            warn(message)
    data: dict[str, Any] = {
        "removed": report.to_dict() if report else None,
        "project": str(targets.project),
        "brain": None,
        "backup": None,
    }
    if chosen is not None or unwired:
        data["agents"] = [r.to_dict() for r in unwired]
    brain = paths.project_brain_path(targets.project)
    if purge and brain.exists():
        from cerebro.api import Brain

        data["backup"] = str(Brain.purge(brain))
        data["brain"] = str(brain)

    def md() -> str:
        lines = []
        if report is not None:
            lines.append(
                "Left .claude settings alone (no cerebro hooks)"
                if report.settings == "skipped"
                else _SETTINGS_MESSAGES[report.settings].format(file=report.settings_file, plugin=report.plugin)
            )
            if report.skills_removed:
                lines.append(f"Removed {report.skills_removed} skill files from .claude/skills/")
            lines.append(
                f"Left {report.claudemd_file} alone (no Cerebro section)"
                if report.claudemd == "skipped"
                else _CLAUDEMD_MESSAGES[report.claudemd].format(file=report.claudemd_file)
            )
        lines.extend(_agent_lines(unwired, removing=True))
        if data["brain"]:
            lines.append(f"Deleted the brain {data['brain']} (backup: {data['backup']})")
        else:
            lines.append(f"Kept the brain {brain}" if brain.exists() else "No brain for this project")
        if report is not None and report.plugin:
            lines.append(f"The {report.plugin} plugin is still enabled: claude plugin uninstall {report.plugin}")
        return "\n".join(lines)

    emit(data, md)
    if (report is not None and report.failed) or any(r.failed for r in unwired):
        what = "Claude Code" if chosen is None else "agent"
        raise IntegrationFailed(f"some of cerebro's {what} files could not be removed (see the warnings above)")


def _marketplace():  # noqa: ANN202
    """A local marketplace holding cerebro's plugin, rendered from this version's templates under
    CEREBRO_HOME (so it works from a wheel, without this repository); None if it cannot be written."""
    from cerebro.integration.claude_code import plugin

    root = paths.home() / "claude-plugin"
    try:
        paths.ensure_private_dir(root)
        plugin.write(root, mode=paths.FILE_MODE)
    except OSError as exc:
        warn(f"could not write the plugin marketplace under {root}: {exc}")
        return None
    return root
