"""Secrets never enter a brain in clear (ADR 0027): every write path of the library redacts them before storage,
the keyword index and embedding; a brain that holds some already (stored before, or on purpose) is scanned and
redacted after a backup, and the old text is gone from the file itself — read here as bytes."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from cerebro import Brain, clock
from cerebro.errors import InvalidInput
from cerebro.store import vec
from tests.fakes import hashed_vector
from tests.helpers import as_stored
from tests.postgres import connect_brain

AWS = "AKIAQX3NZ7VGLD5KPW2M"
PASSWORD = "Xk9#mP2vQ-staging"
TEXT = f"deploy needs {AWS} and DB_PASSWORD={PASSWORD} on staging"
CLEAN = "deploy needs [secret:aws-access-key] and DB_PASSWORD=[secret:password] on staging"


def file_bytes(path: Path) -> bytes:
    """Everything SQLite keeps of a brain on disk: the file and its write-ahead log."""
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def stored_vector(path: Path, node_id: str) -> list[float] | None:
    from cerebro.db.engine import connect_raw

    conn = connect_raw(path, wal=False)
    try:
        return vec.vectors_for(conn, [node_id]).get(node_id)
    finally:
        conn.close()


def keyword_hits(brain: Brain, word: str) -> list[str]:
    return [r.node.id for r in brain.recall(word, limit=10).results if "keyword" in r.lanes]


@pytest.fixture
def warnings(fake_brain: Brain) -> list[str]:
    seen: list[str] = []
    fake_brain.on_warning = seen.append
    return seen


def test_add_stores_markers_indexes_and_embeds_them_and_warns_by_kind(
    fake_brain: Brain, fake_brain_path: Path, warnings: list[str]
) -> None:
    node_id = fake_brain.add(TEXT, metadata={"api_key": "a8Fk29dkLs0qPz7wXn3M", "ticket": "OPS-12"})
    node = fake_brain.get(node_id).node
    assert node.content == CLEAN
    assert node.metadata == {"api_key": "[secret:api-key]", "ticket": "OPS-12"}
    assert warnings == [
        "redacted 3 secrets before storing (api-key, aws-access-key, password); --allow-secret keeps them on purpose"
    ]
    # embedded as stored
    assert stored_vector(fake_brain_path, node_id) == pytest.approx(as_stored(hashed_vector(CLEAN)))
    fake_brain.close()
    data = file_bytes(fake_brain_path)
    assert AWS.encode() not in data and PASSWORD.encode() not in data and b"a8Fk29dkLs0qPz7wXn3M" not in data


def test_every_write_path_redacts(fake_brain: Brain, fake_brain_path: Path) -> None:
    first = fake_brain.add("a note")
    fake_brain.update(first, content=f"now {TEXT}", metadata={"note": f"key {AWS}"})
    replacement = fake_brain.supersede(first, TEXT)
    batch = fake_brain.add_many([{"content": TEXT}, {"content": "plain", "metadata": {"password": PASSWORD}}])
    candidate = fake_brain.inbox_add(TEXT)
    edge = fake_brain.add_edge(first, replacement, "relates_to", metadata={"why": f"key {AWS}"}).edge
    assert edge.metadata == {"why": "key [secret:aws-access-key]"}
    assert fake_brain.get(first).node.content == f"now {CLEAN}"
    assert fake_brain.get(first).node.metadata == {"note": "key [secret:aws-access-key]"}
    assert fake_brain.get(replacement).node.content == CLEAN
    assert [fake_brain.get(i).node.content for i in batch] == [CLEAN, "plain"]
    assert fake_brain.get(batch[1]).node.metadata == {"password": "[secret:password]"}
    assert fake_brain.inbox_get(candidate).content == CLEAN
    fake_brain.close()
    assert AWS.encode() not in file_bytes(fake_brain_path)


TOKEN = "ghp_Q7vN2kLm9xR4tY8wZ1aB5cD3eF6gH0jK2sPq"


def test_every_write_path_redacts_the_labels_too(fake_brain: Brain, fake_brain_path: Path, warnings: list[str]) -> None:
    """A subtype and an origin's fields are listed, shown and synced in clear: a token pasted into one was stored as
    given (a review). Each write path redacts them as it redacts the content, in the same one warning."""
    from cerebro.values import Origin

    marker = "[secret:github-token]"
    origin = Origin(actor=f"bot {TOKEN}", channel="api", session=TOKEN, host="laptop")
    first = fake_brain.add("a note", subtype=TOKEN, origin=origin)
    assert warnings == ["redacted 3 secrets before storing (github-token ×3); --allow-secret keeps them on purpose"]
    node = fake_brain.get(first).node
    assert (node.subtype, node.origin.actor, node.origin.session, node.origin.host) == (
        marker,
        f"bot {marker}",
        marker,
        "laptop",
    )
    fake_brain.update(first, subtype=f"tag {TOKEN}")
    assert fake_brain.get(first).node.subtype == f"tag {marker}"
    assert warnings[-1] == "redacted 1 secret before storing (github-token); --allow-secret keeps it on purpose"
    replacement = fake_brain.supersede(first, "a newer note", subtype=TOKEN, origin=origin)
    assert (fake_brain.get(replacement).node.subtype, fake_brain.get(replacement).node.origin.session) == (marker,) * 2
    (batch,) = fake_brain.add_many([{"content": "plain", "subtype": TOKEN, "origin": origin}])
    assert (fake_brain.get(batch).node.subtype, fake_brain.get(batch).node.origin.session) == (marker, marker)
    candidate = fake_brain.inbox_get(fake_brain.inbox_add("a candidate", subtype=TOKEN, origin=origin))
    assert (candidate.subtype, candidate.origin.session) == (marker, marker)
    fake_brain.close()
    assert TOKEN.encode() not in file_bytes(fake_brain_path)


def test_import_redacts_the_labels_of_memories_and_archived_ones(
    fake_brain: Brain, tmp_path: Path, warnings: list[str]
) -> None:
    node = {"id": "a1b2c3d4-0000-4000-8000-000000000001", "type": "concept", "content": "plain", "subtype": TOKEN}
    node["origin_session"] = f"session {TOKEN}"
    archived = {"id": "a1b2c3d4-0000-4000-8000-000000000002", "type": "concept", "content": "old", "subtype": TOKEN}
    archived |= {"status": "active", "archive_reason": "decayed", "archived_at": "2026-01-02T00:00:00Z"}
    lines = [json.dumps({"kind": "node", **node}), json.dumps({"kind": "archive", **archived})]
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = fake_brain.import_file(path)
    assert report["secrets_redacted"] == 3, report
    stored = fake_brain.get(node["id"]).node
    assert (stored.subtype, stored.origin.session) == ("[secret:github-token]", "session [secret:github-token]")
    assert TOKEN not in json.dumps(fake_brain.export("json"))


def test_a_links_warning_does_not_offer_an_option_a_link_lacks(fake_brain: Brain, warnings: list[str]) -> None:
    a, b = fake_brain.add("one"), fake_brain.add("two")
    fake_brain.add_edge(a, b, "supports", metadata={"why": f"key {AWS}"})
    assert warnings == ["redacted 1 secret before storing (aws-access-key)"]  # add_edge has no allow_secret


def test_allow_secret_and_the_setting_keep_a_secret_on_purpose(fake_brain: Brain, warnings: list[str]) -> None:
    kept = fake_brain.add(TEXT, allow_secret=True, subtype=f"tag {AWS}")
    assert fake_brain.get(kept).node.content == TEXT and warnings == []
    assert fake_brain.get(kept).node.subtype == f"tag {AWS}"  # labels as the content: kept on purpose
    fake_brain.config_set("redact_secrets", "false")
    assert fake_brain.get(fake_brain.add(TEXT)).node.content == TEXT
    fake_brain.config_set("redact_secrets", "true")
    assert fake_brain.get(fake_brain.add(TEXT)).node.content == CLEAN
    with pytest.raises(InvalidInput, match="allow_secret must be true or false"):
        fake_brain.add(TEXT, allow_secret="yes")  # type: ignore[arg-type]


def test_a_secret_is_not_found_by_keyword_search(fake_brain: Brain) -> None:
    node_id = fake_brain.add(f"the deploy token is {AWS}")
    assert keyword_hits(fake_brain, AWS) == []
    assert node_id in keyword_hits(fake_brain, "deploy")


def test_import_redacts_and_cannot_turn_redaction_off(fake_brain: Brain, tmp_path: Path, warnings: list[str]) -> None:
    bundle = {
        "version": "1",
        "meta": {"config.redact_secrets": "false"},
        "nodes": [
            {"id": "a0000001-0000-4000-8000-000000000001", "type": "concept", "content": TEXT, "metadata": {"n": AWS}}
        ],
        "edges": [],
    }
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    report = fake_brain.import_file(path)
    assert report["secrets_redacted"] == 3
    assert report["config_refused"] == ["config.redact_secrets"]
    node = fake_brain.get("a0000001-0000-4000-8000-000000000001").node
    assert node.content == CLEAN and node.metadata == {"n": "[secret:aws-access-key]"}
    assert fake_brain.config_get("redact_secrets").value == "true"
    assert warnings[-1] == "redacted 3 secrets before storing (aws-access-key ×2, password)"


def test_import_redacts_edge_metadata_too_and_warns_once(
    fake_brain: Brain, tmp_path: Path, warnings: list[str]
) -> None:
    ids = ("a0000001-0000-4000-8000-000000000001", "a0000001-0000-4000-8000-000000000002")
    bundle = {
        "version": "1",
        "nodes": [{"id": i, "type": "concept", "content": f"plain {n}"} for n, i in enumerate(ids)],
        "edges": [{"source_id": ids[0], "target_id": ids[1], "relation": "supports", "metadata": {"n": AWS}}],
    }
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    report = fake_brain.import_file(path)
    assert report["secrets_redacted"] == 1 and warnings == ["redacted 1 secret before storing (aws-access-key)"]
    (edge,) = fake_brain.get(ids[0]).edges
    assert edge.metadata == {"n": "[secret:aws-access-key]"}
    fake_brain.close()
    assert AWS.encode() not in file_bytes(fake_brain.path)


@pytest.mark.parametrize("rule", ["skip", "newer", "replace"])
def test_an_import_run_again_reports_only_the_secrets_it_stores(
    fake_brain: Brain, tmp_path: Path, warnings: list[str], rule: str
) -> None:
    """A team push (rule "newer") sends the same shared memories every time: "redacted 2 secrets" came back on every
    push for memories it left as they were. Only what a run writes counts (replace writes every record again)."""
    ids = ("a0000001-0000-4000-8000-000000000001", "a0000001-0000-4000-8000-000000000002")
    bundle = {
        "version": "1",
        "nodes": [
            {"id": ids[0], "type": "concept", "content": f"key {AWS}", "updated_at": "2026-01-01T00:00:00Z"},
            {"id": ids[1], "type": "concept", "content": "plain", "updated_at": "2026-01-01T00:00:00Z"},
        ],
        "edges": [{"source_id": ids[0], "target_id": ids[1], "relation": "supports", "metadata": {"n": AWS}}],
    }
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle))
    assert fake_brain.import_file(path, on_conflict=rule)["secrets_redacted"] == 2
    assert len(warnings) == 1
    again = fake_brain.import_file(path, on_conflict=rule)
    assert again["secrets_redacted"] == (2 if rule == "replace" else 0)
    assert len(warnings) == (2 if rule == "replace" else 1)
    bundle["nodes"][0]["updated_at"] = "2026-02-01T00:00:00Z"  # a later version of the memory with the secret
    path.write_text(json.dumps(bundle))
    later = fake_brain.import_file(path, on_conflict=rule)
    assert later["secrets_redacted"] == {"skip": 0, "newer": 1, "replace": 2}[rule]
    assert fake_brain.get(ids[0]).node.content == "key [secret:aws-access-key]"


def test_an_archived_memory_imported_again_counts_its_secret_once(
    fake_brain: Brain, tmp_path: Path, warnings: list[str]
) -> None:
    """An export's archived memories, read back under "newer" (team sync's rule) a second time: the same archiving
    again is not a new write of its secret."""
    Brain.init(tmp_path / "other.sqlite", embed_provider="fake")
    with Brain.open(tmp_path / "other.sqlite") as other:
        other.config_set("redact_secrets", "false")
        other.add(f"the old key was {AWS}")
        other.forget("the old key was", apply=True)
        path = tmp_path / "export.jsonl"
        path.write_text("\n".join(other.export("jsonl")) + "\n")
    assert fake_brain.import_file(path, on_conflict="newer")["secrets_redacted"] == 1
    assert fake_brain.import_file(path, on_conflict="newer")["secrets_redacted"] == 0
    assert warnings == ["redacted 1 secret before storing (aws-access-key)"]


def _bundle(tmp_path: Path, *nodes: dict) -> Path:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps({"version": "1", "nodes": list(nodes), "edges": []}))
    return path


def _node(n: int, content: str, **extra: object) -> dict:
    return {"id": f"a0000001-0000-4000-8000-00000000000{n}", "type": "concept", "content": content, **extra}


def test_import_counts_every_records_secrets_and_warns_once(
    fake_brain: Brain, tmp_path: Path, warnings: list[str]
) -> None:
    path = _bundle(tmp_path, _node(1, f"first {AWS}"), _node(2, f"then DB_PASSWORD={PASSWORD}"), _node(3, "clean"))
    report = fake_brain.import_file(path)
    assert report["secrets_redacted"] == 2
    assert warnings == ["redacted 2 secrets before storing (aws-access-key, password)"]  # one, for the whole file
    raw = connect_brain(fake_brain.path)  # the product's SQLite: the brain is open in this process
    try:  # a record redacted for its text alone keeps its metadata NULL, not the JSON text 'null'
        assert raw.execute("SELECT metadata FROM nodes WHERE id = ?", (_node(1, "")["id"],)).fetchone() == (None,)
    finally:
        raw.close()


def test_import_into_a_brain_that_keeps_secrets_keeps_them_and_counts_none(
    fake_brain: Brain, tmp_path: Path, warnings: list[str]
) -> None:
    fake_brain.config_set("redact_secrets", "false")
    report = fake_brain.import_file(_bundle(tmp_path, _node(1, TEXT)))
    assert report["secrets_redacted"] == 0 and warnings == []
    assert fake_brain.get(_node(1, "")["id"]).node.content == TEXT


def test_an_oversized_imported_record_is_refused_naming_the_file_and_the_record(
    fake_brain: Brain, tmp_path: Path
) -> None:
    fake_brain.config_set("max_content_bytes", "1024")
    path = _bundle(tmp_path, _node(1, "x" * 2000))
    with pytest.raises(InvalidInput, match=rf"^{path}: record a0000001: "):
        fake_brain.import_file(path)


def test_exports_never_carry_the_setting(fake_brain: Brain) -> None:
    fake_brain.config_set("redact_secrets", "false")
    assert "config.redact_secrets" not in fake_brain.export("json")["meta"]
    assert not any("redact_secrets" in line for line in fake_brain.export("jsonl"))
    assert not any("redact_secrets" in line for line in fake_brain.export("sql"))


def _plant(fake_brain: Brain) -> dict[str, str]:
    """Secrets stored in clear the ways a brain gets them: before redaction existed (here: with it off), on purpose,
    in an archived memory, in metadata only, in an inbox candidate, and in a link's metadata."""
    fake_brain.config_set("redact_secrets", "false")
    ids = {
        "active": fake_brain.add(TEXT, importance=0.9),
        "metadata": fake_brain.add("plain text", metadata={"password": PASSWORD}, importance=0.9),
        "archived": fake_brain.add(f"old {AWS}", importance=0.01),
        "clean": fake_brain.add("nothing to hide", importance=0.9),
        "candidate": fake_brain.inbox_add(f"maybe {AWS}"),
    }
    ids["edge"] = str(fake_brain.add_edge(ids["clean"], ids["metadata"], "supports", metadata={"token": AWS}).edge.id)
    fake_brain.config_set("redact_secrets", "true")
    clock.set_now(clock.now() + timedelta(days=365))  # a year on, the unimportant episode has decayed
    report = fake_brain.gc(threshold=0.4)
    assert [e["id"] for e in report.evicted] == [ids["archived"]]
    return ids


def test_scan_lists_records_and_kinds_never_values(fake_brain: Brain) -> None:
    ids = _plant(fake_brain)
    scan = fake_brain.scan_secrets()
    assert scan.scanned == 6
    assert sorted((f.where, f.id, f.content_kinds, f.metadata_kinds) for f in scan.findings) == sorted(
        [
            ("memory", ids["active"], ("aws-access-key", "password"), ()),
            ("memory", ids["metadata"], (), ("password",)),
            ("archive", ids["archived"], ("aws-access-key",), ()),
            ("inbox", ids["candidate"], ("aws-access-key",), ()),
            ("edge", ids["edge"], (), ("aws-access-key",)),
        ]
    )
    assert AWS not in json.dumps(scan.to_dict()) and PASSWORD not in json.dumps(scan.to_dict())


def test_redact_backs_up_replaces_everywhere_and_leaves_no_copy_in_the_file(
    fake_brain: Brain, fake_brain_path: Path
) -> None:
    ids = _plant(fake_brain)
    assert ids["active"] in keyword_hits(fake_brain, AWS)  # before: the secret itself is a keyword
    dry = fake_brain.redact_secrets(dry_run=True)
    assert dry.redacted is False and dry.backup is None and len(dry.findings) == 5
    assert fake_brain.get(ids["active"]).node.content == TEXT  # a dry run changes nothing

    done = fake_brain.redact_secrets()
    assert done.redacted is True and done.log_purged is True and len(done.findings) == 5
    assert fake_brain.get(ids["active"]).node.content == CLEAN
    assert fake_brain.get(ids["metadata"]).node.metadata == {"password": "[secret:password]"}
    assert fake_brain.inbox_get(ids["candidate"]).content == "maybe [secret:aws-access-key]"
    assert [e.metadata for e in fake_brain.get(ids["clean"]).edges] == [{"token": "[secret:aws-access-key]"}]
    assert stored_vector(fake_brain_path, ids["active"]) == pytest.approx(as_stored(hashed_vector(CLEAN)))
    assert keyword_hits(fake_brain, AWS) == [] and ids["active"] in keyword_hits(fake_brain, "deploy")
    assert fake_brain.scan_secrets().findings == []
    assert fake_brain.redact_secrets().findings == []  # nothing left: no second backup either

    backup = Path(done.backup or "")
    assert AWS.encode() in backup.read_bytes()  # the backup is the way back (the user deletes it)
    with sqlite3.connect(backup) as conn:  # a plain copy: the stdlib reads it
        assert conn.execute("SELECT content FROM nodes WHERE id = ?", (ids["active"],)).fetchone()[0] == TEXT
    fake_brain.close()
    data = file_bytes(fake_brain_path)
    assert AWS.encode() not in data and PASSWORD.encode() not in data  # not in free pages, old index segments, WAL


def test_a_metadata_only_secret_keeps_the_vector(fake_brain: Brain, fake_brain_path: Path) -> None:
    fake_brain.config_set("redact_secrets", "false")
    node_id = fake_brain.add("plain text", metadata={"password": PASSWORD})
    fake_brain.config_set("redact_secrets", "true")
    before = stored_vector(fake_brain_path, node_id)
    fake_brain.redact_secrets()
    assert stored_vector(fake_brain_path, node_id) == before
    assert fake_brain.get(node_id).node.metadata == {"password": "[secret:password]"}


def test_redact_also_clears_text_deleted_before_it_from_the_file(fake_brain: Brain, fake_brain_path: Path) -> None:
    """A brain written by an older cerebro (or upstream) left deleted memories readable in its free pages: the
    redaction rebuilds the file, so what was deleted before is gone too."""
    _plant(fake_brain)
    gone = fake_brain.add("temporary", importance=0.9)
    from cerebro.db.engine import connect_raw

    conn = connect_raw(fake_brain_path)
    conn.execute("PRAGMA secure_delete = OFF")  # a writer without it, as older versions were
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE nodes SET content = ? WHERE id = ?", (f"scratch {PASSWORD} " * 300, gone))
    conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM vec_nodes WHERE rowid = (SELECT rowid FROM nodes WHERE id = ?)", (gone,))
    conn.execute("DELETE FROM nodes WHERE id = ?", (gone,))
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    assert PASSWORD.encode() in file_bytes(fake_brain_path)
    fake_brain.redact_secrets()
    fake_brain.close()
    assert PASSWORD.encode() not in file_bytes(fake_brain_path)


def test_content_larger_than_the_brains_limit_is_refused_with_the_fix(fake_brain: Brain, tmp_path: Path) -> None:
    """A memory is a note: a 1 MB add took minutes and gigabytes on the local model (issue 17). Every write path
    refuses content past ``max_content_bytes`` (default 1 MiB) and changes nothing."""
    fake_brain.config_set("max_content_bytes", "2048")
    big = "x" * 2049
    ok = fake_brain.add("é" * 1024)  # 2,048 bytes of UTF-8: at the limit
    for write in (
        lambda: fake_brain.add(big),
        lambda: fake_brain.add_many([{"content": "fine"}, {"content": big}]),
        lambda: fake_brain.update(ok, content=big),
        lambda: fake_brain.supersede(ok, big),
        lambda: fake_brain.inbox_add(big),
    ):
        with pytest.raises(InvalidInput, match=r"content is 2,049 bytes, more than this brain's max_content_bytes"):
            write()
    bundle = tmp_path / "big.jsonl"
    bundle.write_text(json.dumps({"kind": "node", "id": "a0000001-0000-4000-8000-000000000009", "type": "episode",
                                  "content": big}) + "\n")  # fmt: skip
    with pytest.raises(InvalidInput, match=r"record a0000001: content is 2,049 bytes"):
        fake_brain.import_file(bundle)
    assert [n.id for n in fake_brain.list()] == [ok] and fake_brain.inbox_list() == []


def test_metadata_larger_than_the_brains_limit_is_refused_too(fake_brain: Brain, tmp_path: Path) -> None:
    """Every read that returns a memory carries its metadata: a 20 MB value was accepted, then sent with every
    `list` and `recall`. The same limit as content, on its JSON, on every write path; nothing changed."""
    fake_brain.config_set("max_content_bytes", "2048")
    big = {"blob": "x" * 2100}
    ok = fake_brain.add("fine", metadata={"small": "é" * 100})
    other = fake_brain.add("other")
    for write in (
        lambda: fake_brain.add("note", metadata=big),
        lambda: fake_brain.add_many([{"content": "fine"}, {"content": "note", "metadata": big}]),
        lambda: fake_brain.update(ok, metadata=big),
        lambda: fake_brain.add_edge(ok, other, "supports", metadata=big),
    ):
        with pytest.raises(InvalidInput, match=r"metadata is 2,\d{3} bytes, more than this brain's max_content_bytes"):
            write()
    bundle = tmp_path / "big.jsonl"
    bundle.write_text(json.dumps({"kind": "node", "id": "a0000001-0000-4000-8000-000000000009", "type": "episode",
                                  "content": "note", "metadata": big}) + "\n")  # fmt: skip
    with pytest.raises(InvalidInput, match=r"record a0000001: metadata is more than"):
        fake_brain.import_file(bundle)
    assert sorted(n.id for n in fake_brain.list()) == sorted([ok, other]) and fake_brain.get(ok).edges == []
    assert fake_brain.get(ok).node.metadata == {"small": "é" * 100}


def test_redact_leaves_a_record_another_writer_changed_meanwhile(
    fake_brain: Brain, fake_brain_path: Path, warnings: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between the scan and the write (the backup, the embedding), an agent may update a memory: its new text is
    kept — it was redacted on its own write — never overwritten with the redaction of the old one."""
    from cerebro.brain import exports

    fake_brain.config_set("redact_secrets", "false")
    node_id = fake_brain.add(TEXT)
    other = fake_brain.add(f"old {AWS}")
    edge = fake_brain.add_edge(node_id, other, "supports", metadata={"token": AWS}).edge
    fake_brain.config_set("redact_secrets", "true")
    backup = exports.backup

    def backup_while_an_agent_writes(h, target=None):
        with Brain.open(fake_brain_path) as agent:
            agent.update(node_id, content="rewritten meanwhile")
        conn = connect_brain(fake_brain_path)  # a link's metadata rewritten by hand meanwhile
        conn.execute("UPDATE edges SET metadata = ? WHERE id = ?", (json.dumps({"note": "rewritten"}), edge.id))
        conn.commit()
        conn.close()
        return backup(h, target)

    monkeypatch.setattr(exports, "backup", backup_while_an_agent_writes)
    fake_brain.redact_secrets()
    assert fake_brain.get(node_id).node.content == "rewritten meanwhile"
    assert fake_brain.get(other).node.content == "old [secret:aws-access-key]"
    assert [e.metadata for e in fake_brain.get(other).edges] == [{"note": "rewritten"}]
    assert warnings[-1] == "2 of 3 records changed while this ran: left as now stored"


def test_import_into_a_brain_without_embeddings_embeds_nothing_and_leaves_nothing_pending(
    tmp_path: Path, warnings: list[str]
) -> None:
    path = tmp_path / "plain.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        report = brain.import_file(_bundle(tmp_path, _node(1, "keyword and graph recall only")))
        assert (report["nodes_imported"], report["pending_embeddings"]) == (1, 0)
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT 1 FROM schema_meta WHERE key = 'has_pending_embeddings'").fetchone() is None
    finally:
        raw.close()


def test_a_failed_write_never_prints_the_text_it_was_writing(fake_brain_path: Path) -> None:
    """SQLAlchemy's errors carried the statement's parameters — a memory's text, an old secret a `secrets redact`
    was rewriting — into "internal error" messages, MCP error results and the session-end worker's log."""
    from cerebro.db.engine import connect_raw

    with Brain.open(fake_brain_path) as brain:
        node_id = brain.add("a plain memory")
    raw = connect_raw(fake_brain_path)
    try:  # a write that fails as a full disk would
        raw.execute("CREATE TRIGGER refuse BEFORE UPDATE ON nodes BEGIN SELECT RAISE(ABORT, 'disk is full'); END")
    finally:
        raw.close()
    with Brain.open(fake_brain_path) as brain, pytest.raises(Exception, match="disk is full") as caught:
        brain.update(node_id, content="private memory text: the contract price is 41234")
    assert "41234" not in str(caught.value)


def test_a_redaction_committed_while_another_writer_holds_the_brain_still_reports_success(
    fake_brain: Brain, monkeypatch: pytest.MonkeyPatch, warnings: list[str]
) -> None:
    """The compaction after the redaction's commit met another process's write lock: "database is locked" came out as
    an internal error although every secret was gone, and a second run, finding none, never compacted (a review)."""
    import threading

    from cerebro.db.engine import connect_raw
    from cerebro.store import texts

    fake_brain.add(f"deploy key {AWS}", allow_secret=True)
    real, holding, release = texts.compact, threading.Event(), threading.Event()

    def another_writer() -> None:
        other = connect_raw(fake_brain.path)
        other.execute("BEGIN IMMEDIATE")
        holding.set()
        release.wait(30)
        other.execute("ROLLBACK")
        other.close()

    def compact_while_held(conn):  # the store's own compaction, under another's lock
        threading.Thread(target=another_writer, daemon=True).start()
        holding.wait(30)
        try:
            return real(conn)
        finally:
            release.set()

    monkeypatch.setattr(texts, "compact", compact_while_held)
    done = fake_brain.redact_secrets()
    assert done.redacted and done.log_purged is False
    assert fake_brain.scan_secrets().findings == []
    assert any("not compacted" in w for w in warnings)
