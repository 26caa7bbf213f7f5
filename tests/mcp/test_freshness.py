"""Warm and correct across processes: what other processes do to the brain is seen by the server's next
answer — another server's writes, a CLI write, a lock held past the busy timeout, a re-embed, a newer cerebro's
upgrade, a brain replaced by an old copy and upgraded by the CLI — and the server keeps running through all."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from cerebro.db.migrate import HEAD_REVISION
from tests.mcp.helpers import cli, run, serve

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "brains"


def raw(path: Path):
    import sqlean.dbapi2 as sqlean

    conn = sqlean.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


def test_two_clients_on_one_brain_at_once(home: Path, fake_brain_path: Path, project: Path) -> None:
    async def body() -> None:
        async with serve(home, project) as a, serve(home, project) as b:
            alpha = await a.ok("remember", content="Alpha: the billing service retries webhooks three times")
            assert [r["id"] for r in (await b.ok("recall", query="billing webhooks retries"))["results"]] == [
                alpha["id"]
            ]
            beta = await b.ok("remember", content="Beta: the search indexer rebuilds every night")
            assert beta["id"] in [r["id"] for r in (await a.ok("recall", query="search indexer nightly"))["results"]]

            async def burst(client, name: str) -> None:
                for i in range(8):
                    await client.ok("remember", content=f"{name} burst memory number {i} about topic {name}{i}")

            async with anyio.create_task_group() as group:
                group.start_soon(burst, a, "left")
                group.start_soon(burst, b, "right")
            for client in (a, b):
                assert (await client.ok("stats"))["active_nodes"] == 18
            found = await a.ok("recall", query="right burst memory number 7 about topic right7", limit=3)
            assert found["results"][0]["content"] == "right burst memory number 7 about topic right7"

    run(body)


def test_a_cli_write_is_seen_by_the_next_recall(home: Path, fake_brain_path: Path, project: Path) -> None:
    async def body() -> None:
        async with serve(home, project) as client:
            await client.ok("remember", content="Kafka topics are partitioned by tenant id")
            await client.ok("recall", query="kafka partitions")  # the warm vector index is built and in use
            await client.ok("recall", query="kafka tenants")
            cli(home, "add", "-p", str(project), "Kafka consumers commit offsets only after processing")
            found = await client.ok("recall", query="kafka consumers commit offsets", explain=True)
            new = [r for r in found["results"] if r["content"].startswith("Kafka consumers")]
            assert new, found["results"]
            assert "vector" in new[0]["explain"]["lanes"], new[0]  # found by meaning: the warm index was refreshed

    run(body)


def test_a_brain_locked_by_another_process(home: Path, fake_brain_path: Path, project: Path) -> None:
    async def body() -> None:
        async with serve(home, project) as client:
            before = await client.ok("remember", content="Written before the lock")
            holder = raw(fake_brain_path)
            holder.execute("BEGIN IMMEDIATE")  # a writer that never lets go (held past the busy timeout)
            try:
                message = await client.error("remember", content="Written during the lock")
                assert "locked" in message
                # WAL: reads still work while another process writes
                assert [r["id"] for r in (await client.ok("recall", query="written before lock"))["results"]] == [
                    before["id"]
                ]
            finally:
                holder.execute("ROLLBACK")
            holder.close()
            after = await client.ok("remember", content="Written after the lock")
            found = await client.ok("recall", query="written after the lock")
            assert after["id"] in [r["id"] for r in found["results"]]
            assert (await client.ok("stats"))["active_nodes"] == 2

    run(body)


def test_a_brain_re_embedded_by_another_process(home: Path, fake_brain_path: Path, project: Path) -> None:
    async def body() -> None:
        async with serve(home, project) as client:
            stored = await client.ok("remember", content="Feature flags live in LaunchDarkly")
            await client.ok("recall", query="feature flags")
            cli(home, "reembed", "-p", str(project), "--provider", "fake", "--model", "fake-hash-32", "--dims", "32")
            found = await client.ok("recall", query="feature flags launchdarkly", explain=True)
            assert found["mode"] == "hybrid" and not found.get("notices")
            assert "vector" in found["results"][0]["explain"]["lanes"] and found["results"][0]["id"] == stored["id"]
            newer = await client.ok("remember", content="Feature flags are cleaned up every quarter")
            stats = await client.ok("stats")
            assert stats["embedding_dimensions"] == 32 and stats["pending_embeddings"] == 0
            assert stats["embedded_nodes"] == 2, stats  # the new memory was embedded with the new model
            assert newer["id"] in [
                r["id"] for r in (await client.ok("recall", query="feature flags cleanup"))["results"]
            ]

    run(body)


def test_a_brain_upgraded_by_a_newer_cerebro_is_refused_then_served_again(
    home: Path, fake_brain_path: Path, project: Path
) -> None:
    async def body() -> None:
        async with serve(home, project) as client:
            await client.ok("remember", content="A memory before the upgrade")
            conn = raw(fake_brain_path)
            try:
                conn.execute("UPDATE alembic_version SET version_num = 'py9999'")  # a revision this code lacks
                message = await client.error("recall", query="memory")
                assert "written by a newer cerebro (revision py9999)" in message
                assert "newer cerebro" in await client.error("stats")  # refused every time, never served stale
                conn.execute("UPDATE alembic_version SET version_num = ?", (HEAD_REVISION,))
                assert (await client.ok("stats"))["active_nodes"] == 1
                conn.execute("UPDATE schema_meta SET value = '8' WHERE key = 'schema_version'")  # Go moved on
                assert "schema_version 8" in await client.error("list")
                conn.execute("UPDATE schema_meta SET value = '7' WHERE key = 'schema_version'")
            finally:
                conn.close()
            assert len((await client.ok("list"))["memories"]) == 1

    run(body)


def test_a_brain_replaced_by_an_old_copy_and_upgraded_by_the_cli(
    home: Path, fake_brain_path: Path, project: Path, tmp_path: Path
) -> None:
    async def body() -> None:
        async with serve(home, project) as client:
            await client.ok("remember", content="Only in the brain that gets replaced")
            await client.ok("recall", query="replaced brain")
            # Restore a copy made by Go cerebro (schema v7) as a user would: replace the file, drop the WAL.
            old = tmp_path / "go-v7.sqlite"
            conn = raw(old)
            conn.executescript((FIXTURES / "v7.sql").read_text(encoding="utf-8"))
            conn.close()
            os.replace(old, fake_brain_path)
            for suffix in ("-wal", "-shm"):
                Path(f"{fake_brain_path}{suffix}").unlink(missing_ok=True)
            cli(home, "stats", "-p", str(project))  # another process opens it: backup, then upgrade
            stats = await client.ok("stats")
            assert stats["revision"] == HEAD_REVISION and stats["embedding_provider"] == "none"
            listed = await client.ok("list", limit=500)
            contents = [m["content"] for m in listed["memories"]]
            assert "Only in the brain that gets replaced" not in contents and contents
            first = listed["memories"][0]
            assert first["id"] in [r["id"] for r in (await client.ok("recall", query=first["content"][:60]))["results"]]
            stored = await client.ok("remember", content="Written into the restored brain")
            assert (await client.ok("get", id=stored["id"]))["content"] == "Written into the restored brain"

    run(body)


def test_a_cli_update_is_seen_after_the_server_copied_the_rows(
    home: Path, fake_brain_path: Path, project: Path
) -> None:
    """Enough recalls at one state for the server to keep a copy of the rows (ADR 0051) — its access touches after each
    recall keep it current —, then another process rewrites a memory: the next recall reads the row afresh."""

    async def body() -> None:
        async with serve(home, project) as client:
            for i in range(12):
                await client.ok("remember", content=f"Deploy note {i}: the staging cluster drains node {i} first")
            target = await client.ok("remember", content="Deploy note: rollbacks use the blue slot")
            for _ in range(40):
                await client.ok("recall", query="deploy rollbacks slot")
            cli(
                home,
                "update",
                "-p",
                str(project),
                target["id"],
                "--content",
                "Deploy note: rollbacks use the green slot",
            )
            contents = [r["content"] for r in (await client.ok("recall", query="deploy rollbacks slot"))["results"]]
            assert "Deploy note: rollbacks use the green slot" in contents, contents
            assert "Deploy note: rollbacks use the blue slot" not in contents

    run(body)
