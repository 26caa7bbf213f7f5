"""The real local embedder (all-MiniLM-L6-v2) behind the server: near duplicates and recall by meaning."""

from __future__ import annotations

from pathlib import Path

from tests.mcp.helpers import cli, run, serve


def test_near_duplicates_and_recall_by_meaning_with_the_local_model(home: Path, project: Path) -> None:
    cli(home, "init", "-p", str(project), "--skip-integration")  # the default provider: local

    async def body() -> None:
        async with serve(home, project) as client:
            first = await client.ok(
                "remember", content="JWT auth: 15 min access tokens, 7 day refresh tokens", type="concept"
            )
            await client.ok("remember", content="The staging database is restored from production every Sunday")
            again = await client.ok(
                "remember",
                type="concept",
                content="JWT auth: access tokens last 15 minutes and refresh tokens last 7 days",
            )
            assert [d["id"] for d in again["near_duplicates"]] == [first["id"]]
            found = await client.ok("recall", query="how long does a login stay valid", explain=True)
            top = found["results"][0]
            assert found["mode"] == "hybrid" and top["id"] in (first["id"], again["id"])
            assert "vector" in top["explain"]["lanes"]
            assert (await client.ok("stats"))["embedded_nodes"] == 3

    run(body)
