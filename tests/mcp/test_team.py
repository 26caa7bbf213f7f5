"""``cerebro mcp`` for a project whose brain is a team brain on PostgreSQL (issue 20, ADR 0030): the official
client over stdio, a real server, the same tools — and what other processes commit is seen at the next call."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerebro import Brain, paths, team
from tests.mcp.helpers import cli, run, serve


def test_the_server_serves_the_folders_team_brain_and_sees_other_writers(home: Path, project: Path, team_url) -> None:
    key = "mcp-team"
    Brain.init(team_url, embed_provider="fake", team_project=key)
    team.bind(project, team_url, key)
    Brain.init(team_url, embed_provider="fake", team_project="another-project")
    with Brain.open(team_url, team_project="another-project") as other:
        other.add("Another project's VPN secret lives in the vault")

    async def body() -> None:
        async with serve(home, project) as client:
            mine = await client.ok("remember", content="Deploys to staging go through the team VPN")
            # Another process (a teammate's CLI, a hook) commits while the server runs.
            cli(home, "add", "-p", str(project), "The release branch is cut on Thursdays")
            found = await client.ok("recall", query="release branch cut Thursdays")
            assert found["results"] and found["results"][0]["content"] == "The release branch is cut on Thursdays"
            vpn = await client.ok("recall", query="VPN")
            assert [r["id"] for r in vpn["results"]] == [mine["id"]]  # never the other project's
            assert (await client.ok("stats"))["active_nodes"] == 2

    run(body)
    with Brain.open(team_url, team_project=key) as brain:
        assert sorted(n.content for n in brain.list()) == [
            "Deploys to staging go through the team VPN",
            "The release branch is cut on Thursdays",
        ]
    assert not paths.project_brain_path(project).exists()  # no brain file was made beside it


def test_the_slot_keeps_the_team_brain_open_and_follows_the_folders_binding(project: Path, team_url) -> None:
    from cerebro.errors import BrainNotFound
    from cerebro.mcp.host import Host

    for key in ("first", "second"):
        Brain.init(team_url, embed_provider="none", team_project=key)
    team.bind(project, team_url, "first")
    host = Host(project)
    try:
        first = host.project()
        assert host.project() is first and first.handle.name == "first"  # one connection across calls
        team.bind(project, team_url, "second")  # re-bound while the server runs
        second = host.project()
        assert second is not first and second.handle.name == "second"
        team.binding_file(project).unlink()  # unbound: the folder's brain file, which does not exist
        with pytest.raises(BrainNotFound, match="run 'cerebro init' there first"):
            host.project()
    finally:
        host.close()
