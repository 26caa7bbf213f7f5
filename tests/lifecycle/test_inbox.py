"""inbox add|list|approve|discard (upstream 3.4.0, spec §6 "inbox" and the quarantine rule of §1):

- a candidate is invisible to recall, search, prime, list, get, gc, consolidate --suggest, forget, stats,
  embed --pending and every export format but the sqlite file copy; import never creates one;
- approve keeps the candidate's id, origin and created_at, indexes it and embeds it (pending when the
  embedder is down, exactly as add's pending path); discard deletes;
- bad input is one stderr line with the right exit code, and the brain is unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cerebro import Brain
from cerebro.errors import AmbiguousId, InvalidInput, NotFound
from cerebro.values import Origin
from tests.fakes import FakeEmbedder
from tests.postgres import all_columns, connect_brain

from .conftest import (
    MISSING_ID,
    UPGRADED_TEXT,
    assert_one_line_error,
    day,
    fts_ids,
    full_snapshot,
    layout,
    node_ids,
    node_row,
    raw_exec,
    raw_rows,
    vec_ids,
)

ORIGIN = Origin("claude-code", "skill", "sess-42", "laptop")


def inbox_rows(path: Path) -> dict[str, dict]:
    conn = connect_brain(path, read_only=True)
    try:
        cur = conn.execute(f"SELECT {all_columns(path, 'inbox_candidates')} FROM inbox_candidates")
        cols = [d[0] for d in cur.description]
        return {r[0]: dict(zip(cols, r, strict=True)) for r in cur.fetchall()}
    finally:
        conn.close()


def meta_value(path: Path, key: str) -> str | None:
    rows = raw_rows(path, "SELECT value FROM schema_meta WHERE key = ?", (key,))
    return rows[0][0] if rows else None


def insert_candidate(path: Path, candidate_id: str, content: str = "raw candidate", importance: float = 0.5) -> None:
    raw_exec(
        path,
        "INSERT INTO inbox_candidates (id, type, content, importance, created_at) VALUES (?, 'episode', ?, ?, ?)",
        (candidate_id, content, importance, "2026-03-01 08:00:00"),
    )


# --------------------------------------------------------------------------- add and list


def test_add_quarantines_and_list_is_oldest_first(fake_brain, fake_brain_path, at):
    before = full_snapshot(fake_brain_path)
    at(0)
    first = fake_brain.inbox_add(
        "first candidate", type="concept", subtype="style", importance=0.7, metadata='{"k": ["é", 1]}', origin=ORIGIN
    )
    at(1)
    second = fake_brain.inbox_add("second candidate")
    third = fake_brain.inbox_add("third candidate, same instant as the second")
    listed = fake_brain.inbox_list()
    assert [c.id for c in listed] == [first, second, third]
    assert [c.id for c in fake_brain.inbox_list(limit=2)] == [first, second]
    assert listed[0].to_dict() == {
        "id": first,
        "type": "concept",
        "subtype": "style",
        "content": "first candidate",
        "metadata": {"k": ["é", 1]},
        "importance": 0.7,
        "created_at": "2026-03-02T09:00:00Z",
        "origin_actor": "claude-code",
        "origin_channel": "skill",
        "origin_session": "sess-42",
        "origin_host": "laptop",
    }
    assert listed[1].type == "episode" and listed[1].importance == 0.5 and listed[1].origin.channel == "api"
    # Only inbox_candidates changed: no node, keyword row or vector.
    after = full_snapshot(fake_brain_path)
    assert {t: rows for t, rows in after.items() if t != "inbox_candidates"} == {
        t: rows for t, rows in before.items() if t != "inbox_candidates"
    }
    assert inbox_rows(fake_brain_path)[first]["created_at"] == layout(day(0))


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"content": "   "}, "empty"),
        ({"content": "x\x00y"}, "NUL"),
        ({"content": "x", "type": "fact"}, "unknown type"),
        ({"content": "x", "importance": 1.5}, "importance"),
        ({"content": "x", "importance": float("nan")}, "importance"),
        ({"content": "x", "metadata": "{bad"}, "metadata"),
        ({"content": "x", "metadata": "[1, 2]"}, "metadata"),
        ({"content": "x", "subtype": "bad\nsub\x1b[31m"}, "subtype holds a control character"),
        ({"content": "x", "subtype": 123}, "subtype must be text"),
        ({"content": "x", "subtype": ["a"]}, "subtype must be text"),
    ],
)
def test_add_validates_as_add_does(fake_brain, fake_brain_path, kwargs, fragment):
    before = full_snapshot(fake_brain_path)
    kwargs = dict(kwargs)  # the parameter is shared by every run of this test
    content = kwargs.pop("content")
    with pytest.raises(InvalidInput, match=fragment):
        fake_brain.inbox_add(content, **kwargs)
    with pytest.raises(InvalidInput, match=fragment):
        fake_brain.add(content, **kwargs)
    assert full_snapshot(fake_brain_path) == before


# --------------------------------------------------------------------------- approve and discard


def test_approve_keeps_id_origin_and_created_at_then_indexes_and_embeds(fake_brain, fake_brain_path, at):
    at(0)
    candidate = fake_brain.inbox_add(
        "Quokkas prefer the shade at noon",
        type="concept",
        subtype="fauna",
        importance=0.7,
        metadata={"source": "hook"},
        origin=ORIGIN,
    )
    at(3)
    node_id = fake_brain.inbox_approve(candidate[:6])
    assert node_id == candidate
    row = node_row(fake_brain_path, node_id)
    assert {k: row[k] for k in ("type", "subtype", "content", "importance", "decay_rate", "status")} == {
        "type": "concept",
        "subtype": "fauna",
        "content": "Quokkas prefer the shade at noon",
        "importance": 0.7,
        "decay_rate": 0.02,
        "status": "active",
    }
    assert json.loads(row["metadata"]) == {"source": "hook"}
    assert row["created_at"] == layout(day(0))  # the candidate's, not the approval's
    assert row["last_accessed"] == layout(day(3))
    assert (row["origin_actor"], row["origin_channel"], row["origin_session"], row["origin_host"]) == (
        "claude-code",
        "skill",
        "sess-42",
        "laptop",
    )
    assert row["provenance_root"] == 0 and row["access_count"] == 0
    assert row["embedding_model"] == "fake-hash-64"
    assert node_id in fts_ids(fake_brain_path) and node_id in vec_ids(fake_brain_path)
    assert inbox_rows(fake_brain_path) == {}
    assert meta_value(fake_brain_path, "has_pending_embeddings") is None
    keyword = fake_brain.recall("quokkas", lanes=("keyword",))
    assert keyword.ids == [node_id] and keyword.results[0].lanes == {"keyword": 1}
    assert fake_brain.search("Quokkas prefer the shade at noon").ids == [node_id]
    with pytest.raises(NotFound):
        fake_brain.inbox_approve(candidate)  # approved once: no longer a candidate


def test_approve_with_the_embedder_down_takes_adds_pending_path(fake_brain, fake_brain_path, at):
    at(0)
    candidate = fake_brain.inbox_add("Wombats dig with their front claws")
    FakeEmbedder.broken = True
    warnings: list[str] = []
    fake_brain.on_warning = warnings.append
    node_id = fake_brain.inbox_approve(candidate)
    assert meta_value(fake_brain_path, "has_pending_embeddings") == "true"  # set by the approval itself
    added = fake_brain.add("Echidnas have no teeth")
    assert warnings == [
        f"embedding failed for {node_id[:8]}: fake provider is down (node stored; run `cerebro embed --pending`)",
        f"embedding failed for {added[:8]}: fake provider is down (node stored; run `cerebro embed --pending`)",
    ]
    approved, plain = node_row(fake_brain_path, node_id), node_row(fake_brain_path, added)
    assert approved["embedding_model"] == plain["embedding_model"] == ""
    assert {node_id, added}.isdisjoint(vec_ids(fake_brain_path))
    assert {node_id, added} <= fts_ids(fake_brain_path)
    assert meta_value(fake_brain_path, "has_pending_embeddings") == "true"
    assert fake_brain.stats().pending_embeddings == 2
    assert fake_brain.recall("wombats").ids == [node_id]  # keyword fallback finds it
    FakeEmbedder.broken = False
    report = fake_brain.embed_pending()
    assert (report.embedded, report.remaining) == (2, 0)
    assert {node_id, added} <= vec_ids(fake_brain_path)


def test_discard_deletes_only_the_candidate(fake_brain, fake_brain_path, at):
    at(0)
    keep = fake_brain.inbox_add("keep me")
    drop = fake_brain.inbox_add("drop me", type="reflection", origin=ORIGIN)
    before = full_snapshot(fake_brain_path)
    discarded = fake_brain.inbox_discard(drop[:4] if drop[:4] != keep[:4] else drop)
    assert (discarded.id, discarded.content, discarded.type, discarded.origin) == (
        drop,
        "drop me",
        "reflection",
        ORIGIN,
    )
    assert [c.id for c in fake_brain.inbox_list()] == [keep]
    after = full_snapshot(fake_brain_path)
    assert {t: r for t, r in after.items() if t != "inbox_candidates"} == {
        t: r for t, r in before.items() if t != "inbox_candidates"
    }
    with pytest.raises(NotFound):
        fake_brain.inbox_discard(drop)


def test_ids_resolve_like_node_ids_but_only_among_candidates(fake_brain, fake_brain_path):
    insert_candidate(fake_brain_path, "b0000301-0000-4000-8000-000000000301")
    insert_candidate(fake_brain_path, "b0000302-0000-4000-8000-000000000302")
    node_id = fake_brain.add("a real memory")
    before = full_snapshot(fake_brain_path)
    with pytest.raises(AmbiguousId, match="matches 2 inbox candidates"):
        fake_brain.inbox_approve("b00003")
    with pytest.raises(InvalidInput, match="too short"):
        fake_brain.inbox_discard("b00")
    with pytest.raises(InvalidInput, match="invalid id"):
        fake_brain.inbox_discard("b000%")
    for missing in (MISSING_ID, "ffff", node_id, node_id[:8]):
        with pytest.raises(NotFound, match="inbox candidate"):
            fake_brain.inbox_approve(missing)
    assert full_snapshot(fake_brain_path) == before
    assert fake_brain.inbox_approve("B0000301") == "b0000301-0000-4000-8000-000000000301"  # case-insensitive
    assert fake_brain.inbox_discard("b0000302-0000-4000-8000-000000000302").content == "raw candidate"


def test_approve_refuses_what_would_break_a_node(fake_brain, fake_brain_path):
    node_id = fake_brain.add("already a memory")
    insert_candidate(fake_brain_path, node_id, "same id as a node")
    insert_candidate(fake_brain_path, "b0000401-0000-4000-8000-000000000401", importance=1.5)
    before = full_snapshot(fake_brain_path)
    with pytest.raises(InvalidInput, match="already exists"):
        fake_brain.inbox_approve(node_id)
    with pytest.raises(InvalidInput, match=r"importance 1\.5"):
        fake_brain.inbox_approve("b0000401")
    assert full_snapshot(fake_brain_path) == before


# --------------------------------------------------------------------------- the quarantine


@pytest.fixture
def quarantined(fake_brain, fake_brain_path, at):
    """Two memories and two candidates about zebras. Each candidate, were it a node, would be found by
    every reader: C1 (episode, importance 0, day 0) would be evicted by gc and suggested for
    consolidation; C2 (concept, importance 1) would lead prime, recall and search."""
    b = fake_brain
    at(0)
    ids = {
        "stale": b.add("zebra stripes episode", importance=0.0),
        "concept": b.add("zebra herds migrate in the dry season", type="concept"),
        "c1": b.inbox_add("zebra crossing unverified episode", importance=0.0),
        "c2": b.inbox_add("zebra facts unverified", type="concept", importance=1.0),
    }
    at(200)
    return ids


def candidates(ids: dict[str, str]) -> set[str]:
    return {ids["c1"], ids["c2"]}


def test_readers_never_see_candidates(fake_brain, quarantined):
    b, ids = fake_brain, quarantined
    assert set(b.recall("zebra unverified").ids) == {ids["stale"], ids["concept"]}
    assert set(b.recall("unverified", lanes=("keyword",)).ids) == set()
    assert set(b.search("zebra facts unverified", threshold=0.0).ids) == {ids["stale"], ids["concept"]}
    primed = {p.node.id for p in b.prime()}
    assert ids["concept"] in primed and primed <= {ids["stale"], ids["concept"]}
    assert {n.id for n in b.list(limit=1000)} == {ids["stale"], ids["concept"]}
    for status in ("active", "consolidated", "superseded", "archived"):
        assert candidates(ids).isdisjoint(n.id for n in b.list(status=status))
    for candidate in candidates(ids):
        with pytest.raises(NotFound):
            b.get(candidate)
    suggested = [n.id for g in b.consolidation_suggestions(limit=100) for n in g["episodes"]]
    assert suggested == [ids["stale"]]
    stats = b.stats()
    assert (stats.total_nodes, stats.active_nodes, stats.pending_embeddings) == (2, 2, 0)
    assert [c.id for c in b.inbox_list()] == [ids["c1"], ids["c2"]]


def test_gc_forget_and_embed_pending_leave_candidates_alone(fake_brain, fake_brain_path, quarantined):
    b, ids = fake_brain, quarantined
    queued = inbox_rows(fake_brain_path)
    report = b.gc()
    assert report.evaluated == 2 and [e["id"] for e in report.evicted] == [ids["stale"]]
    forgotten = b.forget("unverified", apply=True, hard=True)
    assert forgotten.matched == []
    assert [m["id"] for m in b.forget("zebra").matched] == [ids["concept"]]
    FakeEmbedder.broken = True
    b.add("pending zebra")  # something to backfill
    FakeEmbedder.broken = False
    assert b.embed_pending().embedded == 1
    assert candidates(ids).isdisjoint(vec_ids(fake_brain_path) | fts_ids(fake_brain_path) | node_ids(fake_brain_path))
    assert candidates(ids).isdisjoint(r[0] for r in raw_rows(fake_brain_path, "SELECT id FROM nodes_archive"))
    assert inbox_rows(fake_brain_path) == queued


def test_cli_readers_never_show_candidates(run, quarantined):
    hidden = candidates(quarantined)
    outputs = [
        run("recall", "zebra unverified"),
        run("recall", "--prime"),
        run("search", "zebra facts unverified", "-T", "0"),
        run("list", "--limit", "1000"),
        run("consolidate", "--suggest"),
        run("forget", "--subject", "unverified"),
        run("gc", "--dry-run"),
        run("stats"),
    ]
    for output in outputs:
        echoed = ("query", "subject")  # what was asked is echoed back, not found
        text = json.dumps({k: v for k, v in output.items() if k not in echoed} if isinstance(output, dict) else output)
        assert "unverified" not in text, text
        assert not any(c in text for c in hidden), text
    assert {r["id"] for r in outputs[0]["results"]} == {quarantined["stale"], quarantined["concept"]}
    assert len(run("inbox", "list")["candidates"]) == 2


@pytest.mark.parametrize("fmt", ["json", "jsonl", "sql"])
def test_exports_carry_no_candidates(cli, quarantined, fmt):
    """Upstream §9: "Not exported: archived rows (nodes_archive), vectors and inbox candidates"."""
    result = cli("export", "--format", fmt)
    assert result.exit_code == 0, result
    assert quarantined["concept"] in result.stdout  # the memories are there
    assert "unverified" not in result.stdout and "inbox" not in result.stdout
    assert not any(c in result.stdout for c in candidates(quarantined))


@pytest.mark.file_only  # a copy of the brain file
def test_the_sqlite_copy_is_the_whole_brain_candidates_included(cli, quarantined, fake_brain_path, tmp_path):
    """``export --format sqlite`` and ``backup`` are file copies (SQLite's backup API), not exports of
    records: the quarantine travels with them, still quarantined."""
    copy = tmp_path / "copy.sqlite"
    assert cli("export", "--format", "sqlite", "-o", str(copy)).exit_code == 0
    assert inbox_rows(copy) == inbox_rows(fake_brain_path)
    with Brain.open(copy) as brain:
        assert {c.id for c in brain.inbox_list()} == candidates(quarantined)
        assert candidates(quarantined).isdisjoint(n.id for n in brain.list(limit=1000))


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_import_never_creates_candidates(cli, quarantined, tmp_path, fmt):
    dump = tmp_path / f"brain.{fmt}"
    assert cli("export", "--format", fmt, "-o", str(dump)).exit_code == 0
    other = tmp_path / "other-project"
    other.mkdir()
    assert cli("init", "--embed-provider", "fake", "--skip-integration", project_dir=other).exit_code == 0
    result = cli("import", str(dump), project_dir=other)
    assert result.exit_code == 0, result
    listed = cli("inbox", "list", "--format", "json", project_dir=other)
    assert listed.exit_code == 0 and listed.json() == {"candidates": []}
    nodes = {n["id"] for n in cli("list", "--format", "json", project_dir=other).json()["memories"]}
    assert nodes == {quarantined["stale"], quarantined["concept"]}


def test_import_takes_no_inbox_records(cli, fake_brain_path, tmp_path):
    """An inbox record in a jsonl file is refused whole; an inbox list in a json bundle is ignored."""
    node = {
        "kind": "node",
        "id": "e0000601-0000-4000-8000-000000000601",
        "type": "episode",
        "content": "real",
        "status": "active",
    }
    candidate = {"kind": "inbox", "id": "b0000601-0000-4000-8000-000000000601", "type": "episode", "content": "x"}
    lines = tmp_path / "smuggled.jsonl"
    lines.write_text(json.dumps(node) + "\n" + json.dumps(candidate) + "\n")
    before = full_snapshot(fake_brain_path)
    assert_one_line_error(cli("import", str(lines)), "unknown record kind", exit_code=2)
    assert full_snapshot(fake_brain_path) == before

    node.pop("kind")
    candidate.pop("kind")
    bundle = tmp_path / "smuggled.json"
    bundle.write_text(json.dumps({"version": "1", "nodes": [node], "edges": [], "inbox_candidates": [candidate]}))
    assert cli("import", str(bundle)).exit_code == 0
    assert inbox_rows(fake_brain_path) == {}
    assert node["id"] in node_ids(fake_brain_path)


# --------------------------------------------------------------------------- the CLI


def test_cli_add_list_approve_discard(cli, run_any, fake_brain_path, at):
    at(0)
    added = cli(
        "inbox",
        "add",
        "Koalas sleep twenty hours",
        "--type",
        "concept",
        "--subtype",
        "fauna",
        "--importance",
        "0.6",
        "--metadata",
        '{"seen": 2}',
        "--origin-actor",
        "claude-code",
        "--origin-channel",
        "skill",
        "--origin-session",
        "s-9",
        "--origin-host",
        "laptop",
    )
    assert added.exit_code == 0 and added.stderr == ""
    koala = added.stdout.strip()
    assert len(koala) == 36 and added.stdout == koala + "\n"
    at(1)
    piped = cli("inbox", "add", "-", "--format", "json", stdin="Platypus lay eggs\n")
    assert piped.exit_code == 0, piped
    platypus = piped.json()["id"]

    listed = run_any("inbox", "list")
    assert [c["id"] for c in listed["candidates"]] == [koala, platypus]
    first = listed["candidates"][0]
    assert (
        first["created_at"],
        first["origin_actor"],
        first["origin_channel"],
        first["origin_session"],
        first["origin_host"],
        first["metadata"],
        first["subtype"],
    ) == ("2026-03-02T09:00:00Z", "claude-code", "skill", "s-9", "laptop", {"seen": 2}, "fauna")
    assert listed["candidates"][1]["content"] == "Platypus lay eggs"  # stdin without its closing newline
    assert listed["candidates"][1]["origin_channel"] == "cli"
    assert run_any("inbox", "list", "--limit", "1")["candidates"] == listed["candidates"][:1]

    text = run_any("inbox", "list", fmt="md")
    assert text.splitlines()[:3] == [
        f"## {koala[:8]} [concept] (importance: 0.60) · fauna",
        "Koalas sleep twenty hours",
        "- added 2026-03-02T09:00:00Z by claude-code",
    ]
    assert f"## {platypus[:8]} [episode] (importance: 0.50)" in text

    at(5)
    approved = cli("inbox", "approve", koala[:8])
    assert approved.exit_code == 0 and approved.stderr == "" and approved.stdout == koala + "\n"
    node = run_any("get", koala)
    assert (node["created_at"], node["origin_actor"], node["origin_channel"], node["type"]) == (
        "2026-03-02T09:00:00Z",
        "claude-code",
        "skill",
        "concept",
    )
    assert [r["id"] for r in run_any("recall", "koalas")["results"]] == [koala]

    discarded = cli("inbox", "discard", platypus[:8])
    assert discarded.exit_code == 0 and discarded.stderr == ""
    assert discarded.stdout == f"Discarded {platypus[:8]} [episode]: Platypus lay eggs\n"
    assert run_any("inbox", "list") == {"candidates": []}
    assert run_any("inbox", "list", fmt="md") == "The inbox is empty.\n"


def test_cli_importance_zero_means_the_default_as_add(run_any, fake_brain):
    """ADR 0006 (revised): the CLI's insert commands store --importance 0 as 0.5; the library keeps 0."""
    run_any("inbox", "add", "cli candidate", "--importance", "0")
    fake_brain.inbox_add("library candidate", importance=0)
    assert [c.importance for c in fake_brain.inbox_list()] == [0.5, 0.0]


def test_cli_json_shapes(run_any, fake_brain_path):
    candidate = run_any("inbox", "add", "a candidate")["id"]
    assert run_any("inbox", "approve", candidate) == {"id": candidate}
    second = run_any("inbox", "add", "another")["id"]
    discarded = run_any("inbox", "discard", second)
    assert set(discarded) == {"discarded"} and discarded["discarded"]["id"] == second
    assert discarded["discarded"]["content"] == "another"


def test_cli_approve_warns_and_stays_pending_when_the_embedder_is_down(cli, fake_brain_path):
    candidate = cli("inbox", "add", "Dingoes howl at dusk").stdout.strip()
    FakeEmbedder.broken = True
    result = cli("inbox", "approve", candidate)
    assert result.exit_code == 0 and result.stdout == candidate + "\n"
    warning = (
        f"cerebro: warning: embedding failed for {candidate[:8]}: fake provider is down "
        "(node stored; run `cerebro embed --pending`)"
    )
    assert result.stderr.splitlines() == [warning]
    assert candidate not in vec_ids(fake_brain_path) and candidate in fts_ids(fake_brain_path)


@pytest.mark.parametrize(
    ("argv", "code", "fragment"),
    [
        (("inbox", "add", "x", "--type", "fact"), 2, "for --type"),
        (("inbox", "add", "x", "--importance", "1.5"), 2, "importance"),
        (("inbox", "add", "x", "--importance", "nan"), 2, "importance"),
        (("inbox", "add", "x", "--metadata", "{bad"), 2, "metadata"),
        (("inbox", "add", "x", "--metadata", "[1]"), 2, "metadata"),
        (("inbox", "add", "   "), 2, "empty"),
        (("inbox", "add"), 2, ""),
        (("inbox", "list", "--limit", "0"), 2, "limit"),
        (("inbox", "approve", MISSING_ID), 3, "no inbox candidate"),
        (("inbox", "approve", "ffff"), 3, "no inbox candidate"),
        (("inbox", "discard", MISSING_ID), 3, "no inbox candidate"),
        (("inbox", "approve", "b00"), 2, "too short"),
        (("inbox", "discard", "b0%_"), 2, "invalid id"),
        (("inbox", "approve", "b00003"), 2, "ambiguous"),
        (("inbox", "approve", "NODE"), 3, "no inbox candidate"),
        (("inbox", "frobnicate"), 2, ""),
    ],
)
def test_cli_bad_input_is_one_line_and_changes_nothing(cli, fake_brain, fake_brain_path, argv, code, fragment):
    node_id = fake_brain.add("a real memory")
    insert_candidate(fake_brain_path, "b0000301-0000-4000-8000-000000000301")
    insert_candidate(fake_brain_path, "b0000302-0000-4000-8000-000000000302")
    argv = tuple(node_id if a == "NODE" else a for a in argv)
    before = full_snapshot(fake_brain_path)
    assert_one_line_error(cli(*argv), fragment, exit_code=code)
    assert full_snapshot(fake_brain_path) == before


def test_cli_without_a_brain_exits_4(cli):
    assert_one_line_error(cli("inbox", "list"), "cerebro init", exit_code=4)


# --------------------------------------------------------------------------- a brain as Go wrote it


def test_go_brains_candidates_list_approve_and_discard(upgraded, at):
    """fixtures/brains/go_v7_no_fts.sql: two candidates Go 3.4.0 left, one with an RFC 3339 offset time."""
    path = upgraded("go_v7_no_fts")
    with Brain.open(path) as brain:
        listed = brain.inbox_list()
        assert [c.to_dict() for c in listed] == [
            {
                "id": "b0000201-0000-4000-8000-000000000201",
                "type": "procedure",
                "subtype": "candidate",
                "content": "Check `cerebro stats` for the keyword lane after an upgrade",
                "metadata": {"source": "hook"},
                "importance": 0.5,
                "created_at": "2026-08-27T10:00:00Z",
                "origin_actor": "claude-code",
                "origin_channel": "hook",
                "origin_session": "sess-d2",
                "origin_host": "devbox",
            },
            {
                "id": "b0000202-0000-4000-8000-000000000202",
                "type": "reflection",
                "subtype": None,
                "content": "Quarantine keeps the brain clean",
                "metadata": None,
                "importance": 1.0,
                "created_at": "2026-08-27T10:05:00Z",
                "origin_actor": None,
                "origin_channel": None,
                "origin_session": None,
                "origin_host": None,
            },
        ]
        brain.config_set("bm25_enabled", "true")  # the fixture turned the keyword lane off
        assert "b0000201-0000-4000-8000-000000000201" not in brain.recall("cerebro stats upgrade").ids
        before_nodes = node_ids(path)
        assert brain.inbox_approve("b0000201") == "b0000201-0000-4000-8000-000000000201"
        assert brain.recall("cerebro stats upgrade").ids[0] == "b0000201-0000-4000-8000-000000000201"
        discarded = brain.inbox_discard("b0000202")
        assert discarded.content == "Quarantine keeps the brain clean"
        assert brain.inbox_list() == []
    row = node_row(path, "b0000201-0000-4000-8000-000000000201")
    assert (row["created_at"], row["last_accessed"], row["type"], row["subtype"], row["decay_rate"]) == (
        "2026-08-27 10:00:00",
        UPGRADED_TEXT,
        "procedure",
        "candidate",
        0.005,
    )
    assert (row["origin_actor"], row["origin_channel"], row["origin_session"], row["origin_host"]) == (
        "claude-code",
        "hook",
        "sess-d2",
        "devbox",
    )
    assert json.loads(row["metadata"]) == {"source": "hook"}
    assert row["embedding_model"] == ""  # provider none: no vector, and nothing pending
    assert meta_value(path, "has_pending_embeddings") is None
    assert node_ids(path) == before_nodes | {"b0000201-0000-4000-8000-000000000201"}
    assert "b0000201-0000-4000-8000-000000000201" in fts_ids(path)
