"""The FTS5 keyword lane (upstream search_bm25_test, keyword_test): exact identifiers, hostile input,
stop words, active nodes only."""

from __future__ import annotations

import pytest

from cerebro import scoring
from cerebro.store import fts
from tests.fakes import hashed_vector

TARGET = (
    "Decision log entry HS-049 records why we pinned the payment gateway client library to the older "
    "minor release until the vendor fixes retries and idempotency keys under load"
)
DISTRACTORS = [
    "HS-050 billing export drops rows",
    "dark-mode toggle lives in settings",
    "user: alice prefers tabs over spaces",
    "it's fine to skip the migration on fresh brains",
    "the deploy pipeline caches wheels between runs",
    "café naïve 日本語 notes about unicode handling 🚀",
]


@pytest.fixture
def seeded(fake_brain):
    ids = {"target": fake_brain.add(TARGET)}
    for i, text in enumerate(DISTRACTORS):
        ids[i] = fake_brain.add(text)
    return fake_brain, ids


def test_exact_identifier_found_by_keyword_lane(seeded):
    brain, ids = seeded
    # Precondition: the fake vectors do not bring the target within the vector lane's threshold.
    assert scoring.cosine(hashed_vector("HS-049"), hashed_vector(TARGET)) < 0.3
    for text in DISTRACTORS:
        assert scoring.cosine(hashed_vector("HS-049"), hashed_vector(text)) < 0.3
    result = brain.recall("HS-049")
    # Only the keyword lane can see it; the phrase match is exact, so HS-050 is not a hit.
    assert result.ids == [ids["target"]]
    (hit,) = result.results
    # Found by the keyword lane; relevance feedback may then bring it into the vector lane too.
    assert hit.lanes["keyword"] == 1
    assert hit.similarity < 0.3  # its cosine to the query as asked stays below the threshold
    assert hit.fused is not None and hit.fused > 0


def test_exact_identifier_not_found_with_bm25_disabled(seeded):
    brain, ids = seeded
    brain.config_set("bm25_enabled", "false")
    result = brain.recall("HS-049")
    assert result.ids == []  # the vector lane alone cannot find it
    # Turning it back on restores it.
    brain.config_set("bm25_enabled", "true")
    assert ids["target"] in brain.recall("HS-049").ids


def test_exact_identifier_via_cli(cli, fake_brain_path, seeded):
    _, ids = seeded
    result = cli("recall", "HS-049", "--format", "json")
    assert result.exit_code == 0, result
    assert ids["target"] in [r["id"] for r in result.json()["results"]]


HOSTILE = [
    "dark-mode",
    "user:",
    "it's",
    '"',
    "NEAR(",
    "*",
    "a AND",
    "col:x",
    "^x",
    "(((",
    "café naïve 日本語 🚀",
    "x" * 10_000,
    " ".join(f"tok{i}" for i in range(1500))[:10_000],
    '"unbalanced',
    'a"b',
    "NOT x",
    "x OR",
    "content:HS",
    "{near}",
    "a + b",
    "\\",
    "'; DROP TABLE nodes; --",
    "NEAR(a b, 2)",
    "hs* OR 049",
    "\u200b\u202e",
]


def _label(query: str) -> str:
    return repr(query[:20]) + (f"…({len(query)} chars)" if len(query) > 20 else "")


def test_hostile_queries_never_error_via_api(seeded):
    brain, _ = seeded
    failures = []
    for query in HOSTILE:
        try:
            result = brain.recall(query)
            assert isinstance(result.ids, list)
            assert result.mode == "hybrid"
            with brain.handle.snapshot() as conn:
                assert isinstance(fts.search(conn, query, 20), list)  # the lane itself never raises
        except Exception as exc:  # noqa: BLE001 - collect every failing query
            failures.append(f"{_label(query)}: {type(exc).__name__}: {exc}")
    assert failures == []


def test_hostile_queries_never_error_via_cli(cli, seeded):
    failures = []
    for query in HOSTILE:
        result = cli("recall", query, "--format", "json")
        if result.exit_code != 0 or "error" in result.stderr or not isinstance(result.json()["results"], list):
            failures.append(f"{_label(query)}: {result}")
    assert failures == []


@pytest.mark.parametrize(
    ("query", "which"),
    [("dark-mode", 1), ("user:", 2), ("it's", 3), ("日本語", 5), ("café", 5)],
)
def test_punctuated_queries_still_find_their_memory(seeded, query, which):
    brain, ids = seeded
    result = brain.recall(query, lanes=("keyword",))
    assert ids[which] in result.ids
    assert next(r for r in result if r.node.id == ids[which]).lanes["keyword"] >= 1


@pytest.mark.parametrize(
    ("query", "which"),
    [
        ("fts.py", "path"),
        ("store/fts.py", "path"),
        ("example.org", "url"),
        ("docs.example.org", "url"),
        ("ops@example.org", "mail"),
        ("ops", "mail"),
        ("cafe", "accent"),
        ("CAFÉ", "accent"),
        ("creme brulee", "accent"),
        ("v1.2", "version"),
    ],
)
def test_paths_addresses_and_accents_are_found_by_their_parts_on_either_engine(fake_brain, query, which):
    """FTS5 splits a path, a URL, an address or a version into its words and folds accents; PostgreSQL's parser kept
    each whole and has no accent folding, so "fts.py" or "cafe" found nothing on a team brain that a brain file
    finds (a review; team schema revision py0007)."""
    ids = {
        "path": fake_brain.add("the keyword lane's writes live in cerebro/store/fts.py"),
        "url": fake_brain.add("the staging docs are served from https://docs.example.org/guide?page=2"),
        "mail": fake_brain.add("page the on-call at ops@example.org when the queue backs up"),
        "accent": fake_brain.add("the Café on the corner serves a crème brûlée on Fridays"),
        "version": fake_brain.add("pin the client to v1.2.3 until the retries are fixed"),
        "other": fake_brain.add("an unrelated memory about gardening and tomatoes"),
    }
    found = fake_brain.recall(query, lanes=("keyword",)).ids
    assert ids[which] in found, (query, found)
    assert ids["other"] not in found


def test_build_match_query_quotes_every_term():
    assert fts.build_match_query(["HS-049"]) == '"HS-049"'
    assert fts.build_match_query(["a", "NEAR(", "col:x"]) == '"a" OR "NEAR(" OR "col:x"'
    assert fts.build_match_query(['a"b']) == '"a""b"'
    assert fts.build_match_query([]) is None


def test_query_terms_drop_stop_words_and_dedupe():
    assert fts.query_terms("what is the HS-049") == ["HS-049"]
    assert fts.query_terms("Walrus walrus WALRUS tusk") == ["Walrus", "tusk"]
    assert fts.query_terms('" ( ) ,') == []  # punctuation-only tokens are dropped
    # Nothing but stop words: they are kept, so the query still searches.
    assert fts.query_terms("the of and") == ["the", "of", "and"]
    assert fts.query_terms("It's") == ["It"]  # the possessive/contraction 's is cut; "it" alone is kept
    assert fts.query_terms("Ada's greyhound?") == ["Ada", "greyhound"]
    assert fts.query_terms("the walrus", drop_stop_words=False) == ["the", "walrus"]


def test_stop_words_do_not_pull_in_matches(fake_brain):
    walrus = fake_brain.add("walrus colony counts")
    noisy = fake_brain.add("the the the of the and the is the")
    result = fake_brain.recall("what is the walrus", lanes=("keyword",))
    assert result.ids == [walrus]
    assert noisy not in result.ids


def test_all_stop_word_query_still_searches(fake_brain):
    noisy = fake_brain.add("the the the of the and the is the")
    other = fake_brain.add("walrus colony counts")
    result = fake_brain.recall("the of and", lanes=("keyword",))
    assert noisy in result.ids
    assert other not in result.ids
    # And through the full pipeline.
    assert noisy in fake_brain.recall("the of and").ids


def test_superseded_text_is_not_found_by_keyword_lane(fake_brain):
    old = fake_brain.add("the quokka service owns session tokens")
    new = fake_brain.supersede(old, "the auth service owns session tokens")
    result = fake_brain.recall("quokka", lanes=("keyword",))
    assert result.ids == []
    assert new in fake_brain.recall("auth", lanes=("keyword",)).ids


@pytest.mark.file_only  # FTS5's rows (a team brain's keyword column follows its content)
def test_an_update_re_indexes_the_new_text_and_subtype_once(fake_brain, fake_brain_path):
    import sqlean.dbapi2 as sqlean

    node_id = fake_brain.add("the wombat cache warms at boot", subtype="note")
    other = fake_brain.add("a memory that must keep its own row")
    fake_brain.update(node_id, content="the echidna cache warms lazily", subtype="decision")
    assert fake_brain.recall("wombat", lanes=("keyword",)).ids == []
    assert fake_brain.recall("echidna", lanes=("keyword",)).ids == [node_id]
    assert fake_brain.recall("echidna", lanes=("keyword",), subtype="decision").ids == [node_id]
    assert fake_brain.recall("echidna", lanes=("keyword",), subtype="note").ids == []
    conn = sqlean.connect(str(fake_brain_path))
    try:
        rows = sorted(conn.execute("SELECT node_id, content, subtype FROM nodes_fts").fetchall())
    finally:
        conn.close()
    assert rows == sorted(
        [(node_id, "the echidna cache warms lazily", "decision"), (other, "a memory that must keep its own row", "")]
    )


@pytest.mark.file_only  # FTS5 rows left behind by an old brain
def test_keyword_search_keeps_non_active_nodes_out(fake_brain, fake_brain_path):
    """Even if a non-active node is still in the FTS index, the lane keeps it out."""
    import sqlean.dbapi2 as sqlean

    node_id = fake_brain.add("numbat migration notes")
    conn = sqlean.connect(str(fake_brain_path))
    try:
        assert [r[0] for r in conn.execute("SELECT node_id FROM nodes_fts WHERE nodes_fts MATCH 'numbat'")] == [node_id]
        assert [i for i, _ in fts.search(conn, "numbat", 10)] == [node_id]
        conn.execute("UPDATE nodes SET status = 'consolidated' WHERE id = ?", (node_id,))
        conn.commit()
        assert fts.search(conn, "numbat", 10) == []
    finally:
        conn.close()
    assert fake_brain.recall("numbat", lanes=("keyword",)).ids == []


def _stray(path, *ids):
    """Non-active nodes whose FTS rows stayed (as an old brain's may): the filter must drop them."""
    import sqlean.dbapi2 as sqlean

    conn = sqlean.connect(str(path))
    conn.executemany("UPDATE nodes SET status = 'consolidated' WHERE id = ?", [(i,) for i in ids])
    conn.commit()
    conn.close()


@pytest.mark.file_only  # FTS5 rows left behind by an old brain
def test_hits_dropped_by_the_filter_are_made_up_from_deeper_matches(fake_brain, fake_brain_path):
    """Issue 18: the lane takes FTS5's best page, then filters it; when stray rows or another subtype fill the
    page, it reads deeper, so the active match of the wanted subtype is still found."""
    strays = [fake_brain.add("numbat numbat numbat burrow") for _ in range(3)]
    others = [fake_brain.add("numbat numbat numbat den", subtype="a") for _ in range(5)]
    active = fake_brain.add("one numbat among many other words in a long memory", subtype="b")
    _stray(fake_brain_path, *strays)
    with fake_brain.handle.snapshot() as conn:
        assert [i for i, _ in fts.search(conn, "numbat", 1, subtype="b")] == [active]  # past 3 strays and 5 of "a"
        assert [i for i, _ in fts.search(conn, "numbat", 6)] == [*others, active]  # 3 strays, then all the rest
        assert [i for i, _ in fts.search(conn, "numbat", 2)] == others[:2]


@pytest.mark.file_only  # SQLite's plan; PostgreSQL searches its GIN index over the nodes table itself
@pytest.mark.parametrize("subtype", [..., "sighting", None], ids=["any", "one", "none"])
def test_keyword_search_reads_nodes_by_primary_key_only(fake_brain, subtype):
    """Issue 18: joining every FTS match to ``nodes`` cost 14 ms a recall at 100k memories. The MATCH statement
    reads the FTS table alone; one more statement reads the best hits' node ids by FTS rowid — a seek on FTS5's own
    content table, not a lookup through the virtual table — and their nodes' statuses (and subtypes) by primary key."""
    for n in range(30):
        fake_brain.add(f"quoll sighting {n}", subtype="sighting" if n % 2 else None)
    with fake_brain.handle.snapshot() as conn:
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        hits = fts.search(conn, "quoll", 10, subtype=subtype)
        assert len(hits) == 10
        conn.set_trace_callback(None)
        plans = {
            sql: " ".join(row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}"))
            for sql in statements
            if sql.startswith("SELECT")
        }
    (match,) = [sql for sql in plans if "MATCH" in sql]
    (status,) = [sql for sql in plans if "JOIN nodes n" in sql]
    assert "nodes n" not in match and "SEARCH" not in plans[match], plans[match]  # no join
    assert "SEARCH n USING INDEX sqlite_autoindex_nodes_1 (id=?)" in plans[status], plans[status]
    assert "SEARCH f USING INTEGER PRIMARY KEY (rowid=?)" in plans[status], plans[status]  # nodes_fts_content
    assert "VIRTUAL TABLE" not in plans[status], plans[status]
    assert len(plans) == 2, plans  # the ranking, then the ids and statuses together


def test_keyword_search_orders_by_bm25_and_respects_limit(fake_brain):
    many = fake_brain.add("kiwi kiwi kiwi kiwi orchard")
    once = fake_brain.add("kiwi plus a lot of other unrelated words about orchards and weather and soil")
    keywords = fake_brain.handle.store.keywords  # BM25 in a brain file, cover density in a team brain
    with fake_brain.handle.snapshot() as conn:
        hits = keywords.search(conn, "kiwi", 10)
        assert [i for i, _ in hits] == [many, once]
        assert hits[0][1] <= hits[1][1]  # lower is better
        assert [i for i, _ in keywords.search(conn, "kiwi", 1)] == [many]
        assert keywords.search(conn, "kiwi", 0) == []
        assert keywords.search(conn, "", 10) == []


@pytest.mark.file_only  # a brain file without its FTS5 table
def test_keyword_search_without_fts_table_is_empty(fake_brain, fake_brain_path):
    import sqlean.dbapi2 as sqlean

    fake_brain.add("numbat migration notes")
    conn = sqlean.connect(str(fake_brain_path))
    try:
        conn.execute("DROP TABLE nodes_fts")
        conn.commit()
        assert fts.search(conn, "numbat", 10) == []
    finally:
        conn.close()


@pytest.mark.file_only  # FTS5's own tables
def test_keyword_search_reads_the_stored_text_of_the_best_hits_only(fake_brain):
    """Issue 18: ranking asked FTS5 for each hit's node id, so it read the stored row of every hit that entered
    its top-k heap on the way (a cost that grows with the matches: ~1 ms a recall at 10k memories). The ranking
    reads rowids; only the best page's node ids are read."""
    for n in range(60):
        fake_brain.add(f"quoll sighting {n} " + "near the creek " * (n % 7))  # different lengths: BM25 differs
    with fake_brain.handle.snapshot() as conn:
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        hits = fts.search(conn, "quoll", 5)
        conn.set_trace_callback(None)
    assert len(hits) == 5
    content_reads = [sql for sql in statements if "nodes_fts_content" in sql]
    assert len(content_reads) <= 5, len(content_reads)


@pytest.mark.file_only  # a brain file reads each hit's row to check its status; a team brain's lane reads none
def test_the_lane_hands_over_the_nodes_it_read_and_recall_does_not_read_them_again(fake_brain):
    """Issue 18: the keyword lane reads every hit's row (its status) and recall read the same rows again by id for
    the hits the vector lane did not bring (~0.25 ms at 10,000 memories); the lane now hands its nodes over."""
    from cerebro.store import reads

    ids = [fake_brain.add(f"quokka island note {n}", subtype="x" if n % 2 else None) for n in range(8)]
    with fake_brain.handle.snapshot() as conn:
        nodes: dict = {}
        hits = fts.search(conn, "quokka", 20, nodes=nodes)
        assert sorted(nodes) == sorted(i for i, _ in hits) == sorted(ids)
        assert nodes == reads.nodes_by_id(conn, ids)  # the same values a read by id gives
        only_x: dict = {}
        fts.search(conn, "quokka", 20, subtype="x", nodes=only_x)
        assert sorted(only_x) == sorted(ids[1::2])
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
    result = fake_brain.recall("quokka", lanes=("keyword",))
    conn.set_trace_callback(None)
    assert sorted(r.node.id for r in result.results) == sorted(ids)
    by_id_reads = [sql for sql in statements if sql.startswith("SELECT") and "FROM nodes WHERE id IN" in sql]
    assert not any(node_id in sql for sql in by_id_reads for node_id in ids), by_id_reads


def _keep_text_elsewhere(path, order: str = "rowid") -> None:
    """Remake the brain's keyword index with external content: its text in a table of its own (``keyword_text``,
    filled in ``order``), so FTS5 keeps no content table (``nodes_fts_content``)."""
    import sqlean.dbapi2 as sqlean

    conn = sqlean.connect(str(path))
    try:
        conn.executescript(
            "DROP TABLE nodes_fts;"
            "CREATE TABLE keyword_text(node_id TEXT, content TEXT, subtype TEXT);"
            f"INSERT INTO keyword_text SELECT id, content, subtype FROM nodes WHERE status = 'active' ORDER BY {order};"
            "CREATE VIRTUAL TABLE nodes_fts USING fts5(node_id UNINDEXED, content, subtype, content='keyword_text');"
            "INSERT INTO nodes_fts(nodes_fts) VALUES ('rebuild');"
        )
        conn.commit()
    finally:
        conn.close()


@pytest.mark.file_only  # an FTS5 layout only a brain file can have
def test_a_keyword_index_keeping_its_text_elsewhere_is_searched_through_the_virtual_table(fake_brain, fake_brain_path):
    """The hits' node ids come from FTS5's own content table; an index made with external content has none, and the
    lane reads them through the virtual table instead (the same hits, the same nodes)."""
    from cerebro import Brain
    from cerebro.store import reads

    found = fake_brain.add("numbat burrow survey")
    fake_brain.add("quoll sighting")
    _keep_text_elsewhere(fake_brain_path)
    with Brain.open(fake_brain_path) as brain, brain.handle.snapshot() as snapshot:
        assert not reads.table_exists(snapshot, "nodes_fts_content")  # precondition: no content table of its own
        nodes: dict = {}
        assert [i for i, _ in fts.search(snapshot, "numbat", 10, nodes=nodes)] == [found]
        assert nodes == reads.nodes_by_id(snapshot, [found])


@pytest.mark.file_only  # FTS5's layouts
def test_a_keyword_index_keeping_its_text_elsewhere_still_takes_changes_and_upgrades(fake_brain, fake_brain_path):
    """A keyword index made with external content has no content table of its own: the delete that looks for a row
    by id (ADR 0066) read that table and failed every update; doctor's count of rows apart failed the check; py0006
    rebuilt such an index at the memories' rowids while its text stayed where it was (hits credited to the wrong
    memories). Its rows are found through the virtual table, and py0006 leaves it as it is (a review)."""
    from cerebro import Brain
    from cerebro.db.engine import connect_raw
    from cerebro.store import checks

    numbat = fake_brain.add("numbat burrow survey")
    fake_brain.add("quoll sighting")
    _keep_text_elsewhere(fake_brain_path, order="rowid DESC")  # its rowids are not the memories'
    with Brain.open(fake_brain_path) as brain:
        brain.update(numbat, content="numbat burrow survey, second visit")  # failed: no such table
        with brain.handle.snapshot() as snapshot:
            assert checks.keyword_rows_apart(snapshot) >= 1  # failed: no such table
    raw = connect_raw(fake_brain_path)
    try:
        raw.execute("UPDATE alembic_version SET version_num = 'py0005'")
        raw.commit()
    finally:
        raw.close()
    with Brain.open(fake_brain_path) as brain:  # py0006 and py0007 again
        assert brain.recall("quoll", lanes=("keyword",)).ids != [numbat]
        assert (
            "keyword_text"
            in brain.handle.raw.execute("SELECT sql FROM sqlite_master WHERE name = 'nodes_fts'").fetchone()[0]
        )
