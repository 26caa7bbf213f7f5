"""``cerebro init --agent claude-code|codex|gemini|cursor``: the cerebro MCP server registered with each agent,
and each agent's instructions-file section — merged into the project's files, and taken out again by
``init --agent … --remove``.

Where each agent reads its project's MCP servers (checked against the clients, ADR 0021):

======================  ===========================  ==============================================
agent                   MCP server configuration     instructions file
======================  ===========================  ==============================================
claude-code             ``.mcp.json``                ``CLAUDE.md`` (written by the Claude Code scaffold)
codex                   ``.codex/config.toml``       ``AGENTS.md``
gemini                  ``.gemini/settings.json``    ``GEMINI.md``
cursor                  ``.cursor/mcp.json``         ``AGENTS.md``
======================  ===========================  ==============================================

Every entry is the server ``cerebro`` running ``cerebro mcp``. The project is not written into the entry:
Claude Code starts the server in the project with ``CLAUDE_PROJECT_DIR`` set, the others start it in the
folder the agent was started in (and Cursor advertises the workspace as the client's root), which is what
``cerebro mcp`` resolves — so the committed file is the same on every machine. Codex passes its MCP servers
only a short list of environment variables, so its entry forwards ``CEREBRO_HOME`` by name.

The merge follows the Claude Code settings merge (:mod:`cerebro.integration.claude_code.scaffold`): our
entry is recognised exactly (the whole entry equal to ours — never by the name alone, so a hand-made
``cerebro`` server is the user's and is kept unless ``--force``), the user's servers and every other key stay
where they were, files are written atomically, and a file we cannot parse is refused before anything is
written. The instructions section is the CLAUDE.md section (:func:`templates.claudemd_section`, one source)
with its Claude Code specifics — the plugin note, the hooks, the slash skills — swapped for the MCP tools.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cerebro.errors import InvalidInput
from cerebro.integration.agent_instructions import remove_section, section, write_section
from cerebro.integration.claude_code import scaffold, sections, templates

CREATED, UPDATED, REPLACED, SKIPPED, FAILED, REMOVED = (
    scaffold.CREATED,
    scaffold.UPDATED,
    scaffold.REPLACED,
    scaffold.SKIPPED,
    scaffold.FAILED,
    scaffold.REMOVED,
)
KEPT = "kept"  # a different server named cerebro is there: the user's, left alone
SHARED = "shared"  # the instructions section stays: another agent wired here reads the same file
PLUGIN = scaffold.PLUGIN  # the enabled cerebro plugin carries the MCP server

SERVER = "cerebro"
COMMAND = "cerebro"
ARGS = ("mcp",)


@dataclass(frozen=True)
class Agent:
    name: str
    title: str
    config: str  # the MCP configuration file, relative to the project
    instructions: str  # the instructions file, relative to the project
    key: str = "mcpServers"  # the servers' table in the configuration file

    @property
    def toml(self) -> bool:
        return self.config.endswith(".toml")

    def entry(self) -> dict[str, Any]:
        """Our server entry, exactly as written (and recognised)."""
        entry: dict[str, Any] = {"command": COMMAND, "args": list(ARGS)}
        if self.name == "codex":
            # Codex starts MCP servers with a short allow-list of variables; a brain under a non-default
            # CEREBRO_HOME would otherwise be looked for in ~/.cerebro.
            entry["env_vars"] = ["CEREBRO_HOME"]
        return entry

    def snippet(self) -> str:
        """The configuration as a user would paste it (README, error messages)."""
        if self.toml:
            return _toml_table(self.entry())
        return templates.dump_json({self.key: {SERVER: self.entry()}})


AGENTS: dict[str, Agent] = {
    agent.name: agent
    for agent in (
        Agent("claude-code", "Claude Code", ".mcp.json", "CLAUDE.md"),
        Agent("codex", "Codex", ".codex/config.toml", "AGENTS.md", key="mcp_servers"),
        Agent("gemini", "Gemini CLI", ".gemini/settings.json", "GEMINI.md"),
        Agent("cursor", "Cursor", ".cursor/mcp.json", "AGENTS.md"),
    )
}
NAMES = tuple(AGENTS)


@dataclass
class AgentReport:
    agent: str
    config_file: str
    config: str  # created | updated | replaced | skipped | kept | plugin | removed | failed
    instructions_file: str
    instructions: str | None  # as config, plus "shared"; None where the Claude Code scaffold writes it
    warnings: list[str] = field(default_factory=list)
    plugin: str | None = None  # the enabled cerebro plugin that carries Claude Code's server

    @property
    def failed(self) -> bool:
        return FAILED in (self.config, self.instructions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "config_file": self.config_file,
            "config": self.config,
            "instructions_file": self.instructions_file,
            "instructions": self.instructions,
            "warnings": list(self.warnings),
            "plugin": self.plugin,
        }


def agents(names: list[str] | tuple[str, ...]) -> list[Agent]:
    """The agents named, in the order given, each once; an unknown name is refused."""
    unknown = [n for n in names if n not in AGENTS]
    if unknown:
        raise InvalidInput(f"unknown agent {unknown[0]!r}: choose from {', '.join(NAMES)}")
    return [AGENTS[n] for n in dict.fromkeys(names)]


# --------------------------------------------------------------------------- init --agent


def check(project: Path, chosen: list[Agent]) -> None:
    """Refuse before anything is written (or removed): a configuration file we could not merge into."""
    for agent in chosen:
        path = project / agent.config
        if path.exists():
            _servers(agent, path, _load(agent, path))


def wire(project: Path, chosen: list[Agent], *, force: bool = False) -> list[AgentReport]:
    """Each agent's server entry and (for all but Claude Code, whose CLAUDE.md the scaffold writes) its
    instructions section. A step that fails is reported without stopping the others."""
    reports = []
    sections_done: set[str] = set()
    for agent in chosen:
        report = AgentReport(agent.name, agent.config, FAILED, agent.instructions, None)
        path = project / agent.config
        try:
            plugin = scaffold.plugin_enabled(project) if agent.name == "claude-code" else None
            if plugin:
                report.config, report.plugin = PLUGIN, plugin
                if force and path.exists() and remove_entry(agent, path) == REMOVED:
                    report.warnings.append(
                        f"removed init's cerebro server from {agent.config}: the {plugin} plugin carries it"
                    )
            else:
                report.config = merge_entry(agent, path, force=force)
            if report.config == KEPT:
                report.warnings.append(
                    f"{agent.config} already has a different '{SERVER}' server: kept (run 'cerebro init --agent "
                    f"{agent.name} --force' to replace it with cerebro's)"
                )
        except (OSError, InvalidInput) as exc:
            report.config = FAILED
            report.warnings.append(f"could not update {agent.config}: {exc}")
        if agent.name != "claude-code":
            if agent.instructions in sections_done:
                report.instructions = SKIPPED
            else:
                try:
                    report.instructions = write_section(project / agent.instructions, section(agent.name), force=force)
                except (OSError, UnicodeDecodeError) as exc:  # not UTF-8 text: left as it is, said so
                    report.instructions = FAILED
                    report.warnings.append(f"could not update {agent.instructions}: {exc}")
                sections_done.add(agent.instructions)
        reports.append(report)
    return reports


def unwire(project: Path, chosen: list[Agent]) -> list[AgentReport]:
    """``init --agent … --remove``: our server entries out, and the instructions sections no other wired agent
    still reads (``AGENTS.md`` is Codex's and Cursor's)."""
    reports = []
    for agent in chosen:
        report = AgentReport(agent.name, agent.config, FAILED, agent.instructions, None)
        path = project / agent.config
        try:
            report.config = remove_entry(agent, path) if path.exists() else SKIPPED
            if report.config == KEPT:
                report.warnings.append(
                    f"kept the '{SERVER}' server in {agent.config}: it differs from cerebro's (edited?)"
                )
        except (OSError, InvalidInput) as exc:
            report.warnings.append(f"could not update {agent.config}: {exc}")
        reports.append(report)
    names = {agent.name for agent in chosen}
    for agent, report in zip(chosen, reports, strict=True):
        if agent.name == "claude-code":
            continue
        readers = [
            other
            for other in AGENTS.values()
            if other.instructions == agent.instructions and other.name not in names and is_wired(project, other)
        ]
        if readers:
            report.instructions = SHARED
            continue
        try:
            report.instructions = remove_section(project / agent.instructions)
        except (OSError, UnicodeDecodeError) as exc:
            report.instructions = FAILED
            report.warnings.append(f"could not update {agent.instructions}: {exc}")
    for agent in chosen:
        _rmdir_if_empty(project, agent)
    return reports


def is_wired(project: Path, agent: Agent) -> bool:
    """Is our server entry in this agent's configuration?"""
    path = project / agent.config
    try:
        return path.exists() and _servers(agent, path, _load(agent, path)).get(SERVER) == agent.entry()
    except (OSError, InvalidInput):
        return False


def _rmdir_if_empty(project: Path, agent: Agent) -> None:
    folder = (project / agent.config).parent
    if folder != project:
        try:
            folder.rmdir()  # only if our removal left it empty
        except OSError:
            pass


# --------------------------------------------------------------------------- configuration files


def _load(agent: Agent, path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text ({exc}); fix it and run init again") from None
    if agent.toml:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInput(f"{path} is not valid TOML ({exc}); fix it and run init again") from None
    else:
        try:
            data = json.loads(text) if text.strip() else {}
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path} is not valid JSON ({exc}); fix it and run init again") from None
        if not isinstance(data, dict):
            raise InvalidInput(f"{path} does not hold a JSON object; fix it and run init again")
    return data


def _servers(agent: Agent, path: Path, data: dict[str, Any]) -> dict[str, Any]:
    servers = data.get(agent.key, {})
    if not isinstance(servers, dict):
        raise InvalidInput(f'{path}: "{agent.key}" is not a table of servers; fix it and run init again')
    return servers


def merge_entry(agent: Agent, path: Path, *, force: bool = False) -> str:
    """Add our server. An entry already equal to ours is left (skipped); a different ``cerebro`` entry is the
    user's and is kept, unless ``force`` (then it is replaced, where it stood)."""
    if not path.exists():
        sections.write_atomically(path, agent.snippet())
        return CREATED
    data = _load(agent, path)
    servers = _servers(agent, path, data)
    current = servers.get(SERVER)
    if current == agent.entry():
        return SKIPPED
    if current is not None and not force:
        return KEPT
    if agent.toml:
        _merge_toml(agent, path, data, replace=current is not None)
    else:
        servers = dict(servers)
        servers[SERVER] = agent.entry()
        data[agent.key] = servers
        like = path.read_bytes().decode("utf-8") if path.exists() else None
        sections.write_atomically(path, templates.dump_json(data, like=like))
    return REPLACED if current is not None else UPDATED


def remove_entry(agent: Agent, path: Path) -> str:
    """Take our server out; a table it leaves empty goes too, and a file left with nothing is deleted. A
    different ``cerebro`` entry is kept."""
    data = _load(agent, path)
    servers = _servers(agent, path, data)
    if SERVER not in servers:
        return SKIPPED
    if servers[SERVER] != agent.entry():
        return KEPT
    if agent.toml:
        rest = _cut_toml(agent, path, data)
    else:
        servers = {k: v for k, v in servers.items() if k != SERVER}
        if servers:
            data[agent.key] = servers
        else:
            data.pop(agent.key, None)
        rest = templates.dump_json(data, like=path.read_bytes().decode("utf-8")) if data else ""
    if rest.strip():
        sections.write_atomically(path, rest)
    else:
        sections.delete_left_empty(path, "" if agent.toml else templates.dump_json({}))
    return REMOVED


# TOML is merged as text, so the user's comments, layout and quoting survive: our table is appended (or
# cut out), and the result is parsed again and must equal the old document plus (or minus) our server —
# anything else (a server table written inline, say) is refused with the snippet to add by hand.

_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_OUR_HEADER = re.compile(r'^\s*\[\s*mcp_servers\s*\.\s*(?:cerebro|"cerebro"|\'cerebro\')\s*\]\s*(?:#.*)?$')


def _toml_table(entry: dict[str, Any]) -> str:
    lines = [f"[mcp_servers.{SERVER}]"]
    lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items()]  # str / list of str: valid TOML
    return "\n".join(lines) + "\n"


def _without_ours(data: dict[str, Any], key: str) -> dict[str, Any]:
    servers = {k: v for k, v in data.get(key, {}).items() if k != SERVER}
    rest = {k: v for k, v in data.items() if k != key}
    return rest | ({key: servers} if servers else {})


def _merge_toml(agent: Agent, path: Path, data: dict[str, Any], *, replace: bool) -> None:
    text = _cut_toml(agent, path, data) if replace else path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        text += "\n"
    merged = text + ("\n" if text.strip() else "") + agent.snippet()
    expected = _without_ours(data, agent.key)
    expected[agent.key] = {**expected.get(agent.key, {}), SERVER: agent.entry()}
    if _parse_or_none(merged) != expected:
        raise InvalidInput(
            f"cannot add cerebro's server to {path} without rewriting it (is [{agent.key}] written inline?); "
            f"add this by hand:\n{agent.snippet()}"
        )
    sections.write_atomically(path, merged)


def _cut_toml(agent: Agent, path: Path, data: dict[str, Any]) -> str:
    """The file's text without our ``[mcp_servers.cerebro]`` table (checked by parsing the result)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if _OUR_HEADER.match(line)), None)
    if start is None:
        raise InvalidInput(f"{path}: the cerebro server is not a [{agent.key}.{SERVER}] table; edit it by hand")
    end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
    before = "".join(lines[:start]).rstrip("\n")
    after = "".join(lines[end:])
    rest = (before + "\n\n" if before and after else before + ("\n" if before else "")) + after
    if _parse_or_none(rest) != _without_ours(data, agent.key):
        raise InvalidInput(f"{path}: cannot cut the cerebro server out cleanly; edit it by hand")
    return rest


def _parse_or_none(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
