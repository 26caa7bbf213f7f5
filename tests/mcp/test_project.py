"""Which brain ``cerebro mcp`` serves: --project > $CLAUDE_PROJECT_DIR > the client's first file:// root >
the current directory; never a brain it creates; and the SDK is never imported off the ``cerebro mcp`` path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cerebro import Brain, paths
from tests.mcp.helpers import cli, run, serve


def brain_for(directory: Path) -> Path:
    path = paths.project_brain_path(directory)
    Brain.init(path, embed_provider="none")
    return path


def contents(path: Path) -> list[str]:
    with Brain.open(path) as brain:
        return [n.content for n in brain.list()]


def test_the_clients_first_root_names_the_project(home: Path, tmp_path: Path) -> None:
    rooted, elsewhere = tmp_path / "rooted project", tmp_path / "elsewhere"
    rooted.mkdir()
    elsewhere.mkdir()
    rooted_brain, other_brain = brain_for(rooted), brain_for(elsewhere)
    uri = rooted.as_uri()
    assert "%20" in uri  # a root with a space arrives percent-encoded

    async def body() -> None:
        async with serve(home, None, roots=[uri, (tmp_path / "second root").as_uri()], cwd=elsewhere) as client:
            await client.ok("remember", content="Stored in the rooted project")
        async with serve(home, None, cwd=elsewhere) as client:  # no roots: the current directory
            await client.ok("remember", content="Stored in the current directory's project")
        async with serve(home, None, roots=[uri], cwd=elsewhere, env={"CLAUDE_PROJECT_DIR": str(elsewhere)}) as client:
            await client.ok("remember", content="Stored in CLAUDE_PROJECT_DIR")
        async with serve(home, elsewhere, roots=[uri]) as client:  # --project wins over the roots
            await client.ok("remember", content="Stored in --project")

    run(body)
    assert contents(rooted_brain) == ["Stored in the rooted project"]
    assert sorted(contents(other_brain)) == sorted(
        ["Stored in the current directory's project", "Stored in CLAUDE_PROJECT_DIR", "Stored in --project"]
    )


def test_a_root_no_file_can_have_is_passed_over(home: Path, tmp_path: Path) -> None:
    """A client's root with a NUL in its path named no folder, yet broke every call (an internal error)."""
    rooted = tmp_path / "rooted"
    rooted.mkdir()
    rooted_brain = brain_for(rooted)

    async def body() -> None:
        async with serve(home, None, roots=["file:///tmp/a%00b", rooted.as_uri()], cwd=tmp_path) as client:
            await client.ok("remember", content="Stored past the bad root")

    run(body)
    assert contents(rooted_brain) == ["Stored past the bad root"]


def test_no_brain_is_a_tool_error_and_none_is_created(home: Path, project: Path) -> None:
    async def body() -> None:
        async with serve(home, project) as client:
            message = await client.error("recall", query="anything")
            assert f"no brain for {project}" in message and "run 'cerebro init'" in message
            assert "run 'cerebro init'" in await client.error("remember", content="x")
            cli(home, "init", "-p", str(project), "--embed-provider", "none", "--skip-integration")
            assert (await client.ok("remember", content="after init"))["near_duplicates"] == []

    run(body)
    assert contents(paths.project_brain_path(project)) == ["after init"]


def test_the_global_brain_beside_the_project(home: Path, fake_brain_path: Path, project: Path) -> None:
    async def body() -> None:
        async with serve(home, project) as client:
            assert "cerebro init --global" in await client.error("recall", query="x", **{"global": True})
        cli(home, "init", "--global", "--embed-provider", "fake", "--skip-integration")
        with Brain.open(paths.global_brain_path()) as shared:
            shared_id = shared.add("Everywhere: prefer small pull requests")
        async with serve(home, project, "--global") as client:
            local = await client.ok("remember", content="Here: pull requests need two reviews")
            both = await client.ok("recall", query="pull requests")
            stores = {r["id"]: r.get("store") for r in both["results"]}
            assert stores == {local["id"]: "project", shared_id: "global"}
            assert "the global cerebro brain" in both["_text"]
            alone = await client.ok("recall", query="pull requests", **{"global": False})
            assert [r["id"] for r in alone["results"]] == [local["id"]]

    run(body)


def test_the_sdk_is_imported_only_by_cerebro_mcp(home: Path, fake_brain_path: Path, project: Path) -> None:
    code = (
        "import sys\n"
        "from cerebro.cli.app import run\n"
        f"run(['recall', 'anything', '-p', {str(project)!r}])\n"
        f"run(['recall', '--prime', '-p', {str(project)!r}])\n"
        f"run(['add', 'a memory', '-p', {str(project)!r}])\n"
        f"run(['hook', 'has-brain', '-p', {str(project)!r}])\n"
        "import cerebro.mcp, cerebro.mcp.framing\n"
        "print('SDK', sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('mcp', 'mcp_types', 'starlette', 'uvicorn')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert "SDK []" in done.stdout, (done.stdout, done.stderr)
