"""A month in the life of a project brain, driven through the CLI as an agent would, with the clock pinned
day by day: episodes of mixed importance, a consolidation into a concept, a superseded fact, memories left
to decay — then gc, recall and provenance must agree on what the brain now knows."""

from __future__ import annotations

from .conftest import (
    archive_rows,
    assert_one_line_error,
    day,
    fts_ids,
    layout,
    node_ids,
    retention_of,
    vec_ids,
)

THRESHOLD = 0.1  # config gc_threshold: importance ≥ 0.2 can never decay away (the floor)

# (day, key, type, importance, subtype, content); keys starting with "n" are the intended decays.
PLAN = [
    (0, "p0", "episode", 0.6, None, "Refactored the retry wrapper around the HTTP client"),
    (0, "n0", "episode", 0.05, None, "Noticed the office wifi dropped twice"),
    (0, "r0", "reflection", 0.1, None, "Short sessions lose context between tasks"),
    (1, "m1", "episode", 0.7, "migration", "Ran the alembic migration on staging without a backup and had to restore"),
    (1, "n1", "episode", 0.08, None, "Tried a new terminal font"),
    (1, "proc1", "procedure", 0.05, None, "Restart the file watcher with make watch"),
    (
        2,
        "m2",
        "episode",
        0.6,
        "migration",
        "Second migration attempt took a sqlite backup first and the upgrade went fine",
    ),
    (2, "n2", "episode", 0.05, "scratch", "Looked up the syntax for git worktree"),
    (3, "f3", "concept", 0.6, "infra", "The staging database runs PostgreSQL 14"),
    (3, "m3", "episode", 0.08, "migration", "Migration dry run printed the SQL before the upgrade"),
    (5, "n5", "episode", 0.1, None, "Coffee machine on floor three is fixed"),
    (5, "l5", "episode", 0.05, None, "Read the flaky scheduler test log"),
    (10, "n10", "episode", 0.1, None, "Paired with Sam on CSS grid layout"),
    (16, "k16", "episode", 0.1, None, "Benchmarked the JSON encoder"),
    (17, "n17", "episode", 0.05, None, "Skimmed the changelog of the linter"),
    (25, "k25", "episode", 0.05, None, "Quick note that the CI cache warmed up"),
    (29, "p29", "episode", 0.5, None, "Release 1.2 shipped to production"),
]
DECAYED = {"n0", "n1", "n2", "n5", "n10", "n17"}
CONSOLIDATED = {"m1", "m2", "m3"}


def test_a_simulated_month(run, cli, at, fake_brain_path, project):
    ids: dict[str, str] = {}
    run("config", "set", "gc_threshold", str(THRESHOLD))
    log = project / ".cerebro-gc.log"

    for today in range(31):
        at(today, hours=9)
        run("recall", "--prime")  # session start: surfaces memories, never counts as an access
        for when, key, node_type, importance, subtype, content in PLAN:
            if when != today:
                continue
            args = ["--type", node_type, "--importance", str(importance)]
            if subtype:
                args += ["--subtype", subtype]
            ids[key] = run("add", content, *args)["id"]
        if today == 8:
            # The agent asks what to consolidate and merges the migration episodes into a concept.
            groups = {g["subtype"]: g for g in run("consolidate", "--suggest", "--limit", "50")["groups"]}
            migration = [e["id"] for e in groups["migration"]["episodes"]]
            assert migration == [ids["m1"], ids["m2"], ids["m3"]]  # oldest first
            assert groups["migration"]["count"] == 3
            at(today, hours=10)
            ids["c8"] = run(
                "add",
                "Database migrations: always take a backup before running alembic upgrade",
                "--type",
                "concept",
                "--importance",
                "0.8",
            )["id"]
            report = run("consolidate", "--into", ids["c8"], *migration)
            assert report["edges_added"] == 3 and report["consolidated"] == 3
        if today == 12:
            ids["f12"] = run(
                "supersede", ids["f3"], "The staging database now runs PostgreSQL 16", "--importance", "0.7"
            )["id"]
        if today == 20:
            run("reinforce", ids["l5"])  # the agent used this one again
        if today in (7, 14, 21):
            weekly = run("gc", "--dry-run", "--log", str(log))  # the weekly look at what is fading
            keys = {k for k, v in ids.items() if v in {e["id"] for e in weekly["evicted"]}}
            assert keys <= DECAYED, (today, keys)

    # Day 30: what should go, from the formula alone and the memories as the CLI shows them.
    now = at(30, hours=9)
    active = run("list", "--status", "active", "--limit", "1000")["memories"]
    independent = {n["id"] for n in active if retention_of(n, now) < THRESHOLD}
    assert archive_rows(fake_brain_path) == {}
    assert independent == {ids[k] for k in DECAYED}
    assert all(retention_of(n, now) >= THRESHOLD for n in active if n["id"] not in independent)

    preview = run("gc", "--dry-run")
    assert {e["id"] for e in preview["evicted"]} == independent
    report = run("gc", "--log", str(log))
    assert report["threshold"] == THRESHOLD
    assert {e["id"] for e in report["evicted"]} == independent
    assert report["evaluated"] == len(active)

    decayed = {ids[k] for k in DECAYED}
    consolidated = {ids[k] for k in CONSOLIDATED}
    archived = archive_rows(fake_brain_path)
    assert set(archived) == decayed
    assert {row["archive_reason"] for row in archived.values()} == {"decayed"}
    assert {row["status"] for row in archived.values()} == {"active"}
    assert archived[ids["n17"]]["archived_at"] == layout(day(30, hours=9))
    assert archived[ids["n0"]]["original_created_at"] == layout(day(0, hours=9))
    assert not decayed & (node_ids(fake_brain_path) | vec_ids(fake_brain_path) | fts_ids(fake_brain_path))
    log_lines = log.read_text(encoding="utf-8").splitlines()
    assert len(log_lines) == 4

    # Consolidated (even the low-importance m3) and superseded memories are not gc's business.
    assert {n["id"] for n in run("list", "--status", "consolidated")["memories"]} == consolidated
    assert {n["id"] for n in run("list", "--status", "superseded")["memories"]} == {ids["f3"]}
    # The survivors that were at risk: reinforced (l5), recent enough (k16, k25), slow types (proc1, r0).
    for key in ("l5", "k16", "k25", "proc1", "r0", "p0", "p29"):
        assert run("get", ids[key])["status"] == "active"
    for key in DECAYED:
        assert_one_line_error(cli("get", ids[key]), exit_code=3)

    # recall: the concept and the new fact, never the consolidated, superseded or archived memories.
    hidden = decayed | consolidated | {ids["f3"]}
    migration = run("recall", "database migration backup alembic upgrade")
    found = [r["id"] for r in migration["results"]]
    assert ids["c8"] in found
    staging = run("recall", "which PostgreSQL version does the staging database run")
    found_staging = [r["id"] for r in staging["results"]]
    assert ids["f12"] in found_staging
    assert ids["f3"] not in found_staging
    for query in (
        "database migration backup alembic upgrade",
        "staging database PostgreSQL",
        "office wifi dropped",
        "terminal font",
        "git worktree syntax",
        "coffee machine floor three",
        "CSS grid layout with Sam",
        "linter changelog",
        "migration dry run SQL",
    ):
        results = run("recall", query)["results"]
        assert not {r["id"] for r in results} & hidden, query

    # Provenance leads back from the concept to the episodes it was made from.
    concept = run("get", ids["c8"], "--with-provenance")
    assert concept["provenance_status"] == "complete"
    assert sorted((p["id"], p["depth"]) for p in concept["provenance"]) == sorted((i, 1) for i in consolidated)
    assert {p["status"] for p in concept["provenance"]} == {"consolidated"}
    text = run("get", ids["c8"], "--with-provenance", fmt="md")
    assert "### Provenance" in text
    for key in CONSOLIDATED:
        assert f"- {ids[key][:8]} [episode/consolidated]" in text
    recalled = {
        r["id"]: r for r in run("recall", "database migration backup alembic upgrade", "--with-provenance")["results"]
    }
    assert {p["id"] for p in recalled[ids["c8"]]["provenance"]} == consolidated
    assert run("get", ids["f12"])["provenance_status"] == "none"
    assert any(e["relation"] == "supersedes" and e["target_id"] == ids["f3"] for e in run("get", ids["f12"])["edges"])
