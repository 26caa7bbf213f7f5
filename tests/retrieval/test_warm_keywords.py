"""The in-memory keyword copy (ADR 0044) ranks exactly as FTS5's bm25() does, and steps aside whenever it cannot."""

from __future__ import annotations

import random
import threading

import pytest

from cerebro import process
from cerebro.store import fts, warm_keywords
from tests.helpers import watch_collector

# The copy is of a brain file's FTS5 index; a team brain ranks in PostgreSQL (ADR 0030).
pytestmark = pytest.mark.file_only

# Stems of one word ("deploy", "deploys", "deployed" are one token to the porter tokenizer), names, and words that
# also name subtypes (a subtype's tokens count in bm25 too).
WORDS = [
    "deploy",
    "deploys",
    "deployed",
    "deploying",
    "database",
    "databases",
    "migration",
    "migrations",
    "Ada",
    "kafka",
    "cache",
    "cached",
    "latency",
    "retry",
    "retries",
    "vector",
    "index",
    "decision",
    "gotcha",
]
SUBTYPES = [None, "decision", "gotcha", "cache"]


def corpus(seed: int, count: int) -> list[dict[str, object]]:
    """Memories of a few query words among filler: repeated words, different lengths, and groups of memories of the
    same length and the same query words (ties in bm25, which only rowid order breaks)."""
    rng = random.Random(seed)
    items: list[dict[str, object]] = []
    for i in range(count):
        if i % 10 == 0:  # a tie group: "kafka latency" in a memory of four tokens, three of them
            for j in range(3):
                items.append({"content": f"kafka latency filler{i} tie{j}", "subtype": None})
            continue
        words = [rng.choice(WORDS) for _ in range(rng.randint(1, 6))]
        words += [f"filler{rng.randint(0, 40)}" for _ in range(rng.randint(0, 12))]
        words += ["common"] * (rng.random() < 0.7)  # in most memories: FTS5 floors its idf at 1e-6
        rng.shuffle(words)
        items.append({"content": " ".join(words) + f" note{i}", "subtype": rng.choice(SUBTYPES)})
    return items


def fts5_ranking(conn, terms: list[str], k: int) -> list[tuple[int, float]]:
    match = fts.build_match_query(terms)
    return [tuple(row) for row in conn.execute(fts.RANKING, (match, k)).fetchall()]


def copy_ranking(conn, copy, tokenizer, terms: list[str], k: int) -> list[tuple[int, float]]:
    tokens = [tokenizer.tokens(term) for term in terms]
    assert all(len(found) == 1 for found in tokens), tokens
    return copy.ranked([found[0] for found in tokens], k)


def queries(seed: int, count: int) -> list[list[str]]:
    rng = random.Random(seed)
    pool = [*WORDS, "DEPLOY", "Databases", "absent", "nowhere", "filler3", "note7", "common"]
    return [list(dict.fromkeys(rng.choice(pool) for _ in range(rng.randint(1, 5)))) for _ in range(count)]


@pytest.fixture
def small_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies of small brains, built at the second ask (whatever FTS5 spent: its time is the clock's)."""
    monkeypatch.setattr(warm_keywords, "KEYWORDS_FROM", 1)
    monkeypatch.setattr(warm_keywords, "BUILD_SHARE", 0.0)


@pytest.mark.parametrize("shape", ["short", "long", "sparse"])
def test_the_copy_ranks_every_query_as_fts5_does(fake_brain, small_copies, shape: str) -> None:
    fake_brain.add_many(corpus(1, 300))
    if shape == "long":  # memories of more than 127 tokens: row lengths of two-byte varints
        fake_brain.add_many([{"content": " ".join(["deploy", "cache"] * 70 + [f"long{i}"] * 40)} for i in range(3)])
    # Consolidated memories leave the index: rowids with gaps, and row and token totals that went down — most of them
    # for "sparse" (rowids far apart, looked up by search rather than by table).
    listed = fake_brain.list(limit=1000)
    fake_brain.mark_consolidated([node.id for node in (listed[40:] if shape == "sparse" else listed[:40:4])])
    with fake_brain.handle.snapshot() as conn:
        copy = warm_keywords.read_copy(conn, warm_keywords.current_stamp(conn))
        assert copy is not None
        tokenizer = warm_keywords.Tokenizer(copy.tokenize)
        ties = 0
        for terms in queries(2, 200):
            for k in (1, 5, 50):
                expected = fts5_ranking(conn, terms, k)
                assert copy_ranking(conn, copy, tokenizer, terms, k) == expected, (terms, k)
                ranks = [rank for _, rank in expected]
                ties += len(ranks) - len(set(ranks))
    assert ties > 0  # equal ranks were among the answers, so their order was compared too


def test_the_tokenizer_is_the_index_s_own(fake_brain, small_copies) -> None:
    with fake_brain.handle.snapshot() as conn:
        option = warm_keywords._LAYOUT.fullmatch(
            conn.execute("SELECT sql FROM sqlite_master WHERE name = 'nodes_fts'").fetchone()[0]
        ).group(1)
    tokenizer = warm_keywords.Tokenizer(option)
    assert tokenizer.tokens("Deploying") == ["deploi"]  # porter, folded to lower case
    assert tokenizer.tokens("HS-049") == ["hs", "049"]  # a phrase of two tokens
    assert tokenizer.tokens("—") == []


def wait_for_builds() -> None:
    for thread in threading.enumerate():
        if thread.name == "cerebro-keywords":
            thread.join()


def answers(brain, query: str) -> list[tuple[str, float]]:
    return [(r.node.id, r.score) for r in brain.recall(query, limit=10).results]


def test_recall_ranks_from_the_copy_and_answers_as_without_it(
    fake_brain, fake_brain_path, small_copies, pinned_clock, monkeypatch
) -> None:
    from cerebro import Brain

    fake_brain.add_many(corpus(3, 200))
    asked = ("deploy database", "kafka latency", "gotcha retries Ada", "migrations cached")

    def run(brain) -> dict[str, list[tuple[str, float]]]:
        brain.recall("deploy database")
        brain.recall("deploy database")  # asked again: a copy is built on its own thread
        wait_for_builds()
        return {q: answers(brain, q) for q in asked}

    used = []
    copy = fake_brain.handle.keyword_copy()
    original = copy.ranked

    def counted(*args: object) -> object:
        ranked = original(*args)
        used.append(ranked is not None)
        return ranked

    copy.ranked = counted
    got = run(fake_brain)
    assert copy.builds == 1
    assert used[-len(asked) :] == [True] * len(asked)
    monkeypatch.setattr(warm_keywords, "KEYWORDS_FROM", 10**9)  # the same process, no copy: FTS5 ranks
    with Brain.open(fake_brain_path) as plain:
        assert run(plain) == got
        assert plain.handle.keyword_copy()._copy is None
    assert all(got.values())
    process.ONE_SHOT = True  # a one-shot process keeps no copy at all
    try:
        with Brain.open(fake_brain_path) as once:
            assert once.handle.keyword_copy() is None
    finally:
        process.ONE_SHOT = False


def test_a_build_reads_the_index_with_the_collector_off(fake_brain, small_copies, monkeypatch, request) -> None:
    """As a rows copy's build (``cerebro.process.collector_paused``): off while the postings are read."""
    fake_brain.add_many(corpus(3, 50))
    events = watch_collector(monkeypatch, request, warm_keywords, "cerebro-keywords")
    fake_brain.recall("deploy database")
    fake_brain.recall("deploy database")
    wait_for_builds()
    assert [what for what, _ in events] == ["paused", "read", "resumed"]
    assert events[1] == ("read", False)


def keyword_hits(brain, query: str) -> list[str]:
    return [r.node.id for r in brain.recall(query, limit=10).results if "keyword" in r.lanes]


def test_a_write_makes_the_copy_stale_until_it_is_rebuilt(fake_brain, fake_brain_path, small_copies) -> None:
    from cerebro import Brain

    fake_brain.add_many(corpus(4, 120))
    copy = fake_brain.handle.keyword_copy()
    fake_brain.recall("deploy")
    wait_for_builds()
    assert copy.builds == 0  # asked once: a process that recalls once never pays for a copy
    fake_brain.recall("deploy")
    wait_for_builds()
    assert keyword_hits(fake_brain, "zanzibar") == []
    assert copy._copy is not None  # the copy answered that
    # This brain's own write, then another connection's: each changes the index under the copy.
    mine = fake_brain.add("zanzibar deploy")
    assert keyword_hits(fake_brain, "zanzibar") == [mine]
    assert copy._copy is None
    fake_brain.recall("zanzibar")
    wait_for_builds()
    assert keyword_hits(fake_brain, "zanzibar") == [mine]
    assert copy._copy is not None and copy.builds == 2  # rebuilt at the second ask, current again
    with Brain.open(fake_brain_path) as other:
        theirs = other.add("zanzibar latency")
    assert sorted(keyword_hits(fake_brain, "zanzibar")) == sorted([mine, theirs])
    assert copy._copy is None
    # A rewrite of as many tokens leaves the index's totals as they were: its structure record still tells.
    fake_brain.recall("zanzibar")
    wait_for_builds()
    assert sorted(keyword_hits(fake_brain, "zanzibar")) == sorted([mine, theirs])
    assert copy._copy is not None  # the new copy answered that
    fake_brain.update(mine, content="zanzibar quokka")
    assert keyword_hits(fake_brain, "quokka") == [mine]


def test_a_small_brain_gets_no_copy_and_no_more_builds(fake_brain) -> None:
    fake_brain.add_many(corpus(6, 30))
    copy = fake_brain.handle.keyword_copy()
    for _ in range(5):
        fake_brain.recall("deploy")
        wait_for_builds()
    # Refused from the index's own row count, without a build (nor its thread, nor NumPy), once at this state.
    assert copy.builds == 0 and copy._copy is None and copy._tried is not None


def test_a_copy_built_before_a_write_is_not_adopted(fake_brain, small_copies) -> None:
    fake_brain.add_many(corpus(7, 80))
    copy = fake_brain.handle.keyword_copy()
    fake_brain.recall("deploy")
    fake_brain.recall("deploy")
    wait_for_builds()  # built, to be adopted by the next query it is current for
    walrus = fake_brain.add("walrus deploy")
    assert keyword_hits(fake_brain, "walrus") == [walrus]
    assert copy._copy is None


def test_a_brain_written_between_every_two_recalls_builds_no_copy(fake_brain, small_copies) -> None:
    fake_brain.add_many(corpus(8, 80))
    copy = fake_brain.handle.keyword_copy()
    for turn in range(6):  # an agent's turns: remember, then recall
        fake_brain.add(f"turn {turn} deploy")
        fake_brain.recall("deploy")
        wait_for_builds()
    assert copy.builds == 0  # each state of the index was asked once: a copy of it would have served nothing


def test_one_recall_is_one_ask_however_deep_a_subtype_filter_pages(fake_brain, small_copies) -> None:
    # Three "gotcha" memories among 260 deploy ones: the lane's first page (4 × 50 hits) holds too few, it reads on.
    fake_brain.add_many([{"content": f"deploy step {i}"} for i in range(260)])
    fake_brain.add_many([{"content": f"deploy gotcha {i}", "subtype": "gotcha"} for i in range(3)])
    copy = fake_brain.handle.keyword_copy()
    fake_brain.recall("deploy", subtype="gotcha")
    wait_for_builds()
    assert copy.builds == 0 and copy._asked[1] == 1


def test_a_build_never_creates_a_removed_brain_file(fake_brain, fake_brain_path, small_copies) -> None:
    fake_brain.add_many(corpus(10, 60))
    copy = fake_brain.handle.keyword_copy()
    fake_brain.recall("deploy")  # the raw connection is open: recall goes on reading the removed file
    fake_brain_path.unlink()
    for _ in range(4):
        fake_brain.recall("deploy")
        wait_for_builds()
    assert not fake_brain_path.exists()
    assert copy.builds == 1  # tried once at that state, refused


def test_terms_the_copy_cannot_answer_for_go_to_fts5_and_empty_ones_change_nothing(fake_brain, small_copies) -> None:
    fake_brain.add_many(corpus(11, 60))
    wanted = fake_brain.add("ticket HS-049 is the flaky deploy")
    copy = fake_brain.handle.keyword_copy()
    for _ in range(2):
        fake_brain.recall("deploy")
    wait_for_builds()
    with fake_brain.handle.snapshot() as conn:
        assert copy.ranked(conn, ["deploy"], 5) is not None
        assert copy.ranked(conn, ["HS-049"], 5) is None  # a phrase of two tokens: where each stands decides
        assert copy.ranked(conn, ["kafka\x00"], 5) is None  # FTS5 fails on a NUL: the lane is empty, as in the CLI
        assert copy.ranked(conn, ["deploy", "—"], 50) == fts5_ranking(conn, ["deploy", "—"], 50)
        assert copy.ranked(conn, ["—"], 5) == [] == fts5_ranking(conn, ["—"], 5)
    assert keyword_hits(fake_brain, "HS-049") == [wanted]


def test_a_copy_that_ranks_otherwise_than_fts5_is_refused(fake_brain, small_copies) -> None:
    fake_brain.add_many(corpus(12, 200))
    with fake_brain.handle.snapshot() as conn:
        copy = warm_keywords.read_copy(conn, warm_keywords.current_stamp(conn))
        assert copy.agrees(conn)
        copy._weights *= 1 + 2**-50  # an ulp or so off: what fused multiply-adds in FTS5's build would give
        assert not copy.agrees(conn)


def test_a_copy_is_built_once_fts5_has_spent_a_share_of_what_it_costs(fake_brain, monkeypatch) -> None:
    """Ski rental: FTS5's ranking time at one state is counted (told by the keyword lane), and a build starts only
    once it reaches BUILD_SHARE of a build's estimated cost. The seconds are told here, not measured: no clock."""
    monkeypatch.setattr(warm_keywords, "KEYWORDS_FROM", 1)
    monkeypatch.setattr(warm_keywords, "BUILD_SECONDS_FIXED", 10.0)  # no three small rankings cost a quarter of that
    fake_brain.add_many(corpus(13, 60))
    copy = fake_brain.handle.keyword_copy()
    for _ in range(3):
        fake_brain.recall("deploy")
        wait_for_builds()
    assert copy.builds == 0 and copy._asked[1] == 3 and copy._asked[2] > 0  # FTS5's time, told by the lane
    with fake_brain.handle.snapshot() as conn:
        rows = warm_keywords._rows(warm_keywords.current_stamp(conn))
    cost = warm_keywords.BUILD_SECONDS_FIXED + warm_keywords.BUILD_SECONDS_PER_ROW * rows
    copy._asked = (copy._asked[0], copy._asked[1], 0.0)
    copy.spent(warm_keywords.BUILD_SHARE * cost * 0.99)
    fake_brain.recall("deploy")
    wait_for_builds()
    assert copy.builds == 0  # just short of the share
    copy.spent(warm_keywords.BUILD_SHARE * cost * 0.02)
    fake_brain.recall("deploy")
    wait_for_builds()
    assert copy.builds == 1
    assert keyword_hits(fake_brain, "deploy") and copy._copy is not None
    fake_brain.add("deploy again")  # a new state: its own count, from nothing
    fake_brain.recall("deploy")
    assert copy._asked[1] == 1 and copy._asked[2] > 0


def test_a_copy_that_disagrees_with_fts5_stops_the_builds_of_the_process(fake_brain, small_copies, monkeypatch) -> None:
    monkeypatch.setattr(warm_keywords.KeywordCopy, "agrees", lambda self, conn: False)  # as an FMA build of SQLite
    fake_brain.add_many(corpus(14, 60))
    copy = fake_brain.handle.keyword_copy()
    for turn in range(3):  # three states of the index, each asked enough to build
        for _ in range(3):
            fake_brain.recall("deploy")
            wait_for_builds()
        fake_brain.add(f"turn {turn} deploy")
    assert copy.builds == 1 and copy._copy is None


def test_a_failed_build_start_leaves_later_states_free_to_build(fake_brain, small_copies, monkeypatch) -> None:
    fake_brain.add_many(corpus(15, 60))
    copy = fake_brain.handle.keyword_copy()
    with monkeypatch.context() as patched:
        patched.setattr(warm_keywords.threading.Thread, "start", lambda self: (_ for _ in ()).throw(RuntimeError))
        for _ in range(2):
            fake_brain.recall("deploy")
    assert copy.builds == 0 and not copy._building
    fake_brain.add("deploy later")
    for _ in range(2):
        fake_brain.recall("deploy")
    wait_for_builds()
    assert copy.builds == 1


def test_the_check_asks_tokens_that_are_their_own_query_terms(small_copies, monkeypatch) -> None:
    """Porter stores "databases" as "databas", which a query term cuts to "databa": a check asking FTS5 for such a token
    would read other postings. The check picks among the tokens that are their own query terms."""
    from cerebro.db.engine import driver

    monkeypatch.setattr(warm_keywords, "CHECKED_ROWS", 50)
    conn = driver().connect(":memory:", isolation_level=None)
    conn.execute(
        "CREATE VIRTUAL TABLE nodes_fts USING fts5(node_id UNINDEXED, content, subtype, tokenize = 'porter unicode61')"
    )
    rows = []
    for i in range(200):
        words = ["common"]
        if i < 160:
            words.append(["databases", "agreed", "zebrases", "xyloses"][i % 4])  # 40 rows each, none its own term
        words += ["alpha"] * (i % 10 == 0) + ["beta"] * (i % 10 == 5)
        if i in (1, 2, 3, 4):
            words.append(["zealouses", "zeroeses", "zestfules", "zoninges"][i - 1])  # the rarest: none their own either
        rows.append((f"n{i}", " ".join(words), ""))
    conn.executemany("INSERT INTO nodes_fts (node_id, content, subtype) VALUES (?, ?, ?)", rows)
    copy = warm_keywords.read_copy(conn, warm_keywords.current_stamp(conn))
    assert copy is not None and copy.agrees(conn)
    tokenizer = warm_keywords.Tokenizer(copy.tokenize)
    assert tokenizer.cut(["Databases", "alpha", "HS-049", "—", "alpha"]) == [
        ["databas"],
        ["alpha"],
        ["hs", "049"],
        [],
        ["alpha"],
    ]
    # The next query's new words are cut alone: nothing of the last batch is left in the scratch table.
    assert tokenizer.cut(["zebra", "Running"]) == [["zebra"], ["run"]]
    assert tokenizer._conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_a_failed_cut_leaves_the_tokenizer_usable() -> None:
    tokenizer = warm_keywords.Tokenizer("porter unicode61")
    with pytest.raises(UnicodeEncodeError):
        tokenizer.cut(["\ud800"])  # a lone surrogate: SQLite cannot take it
    assert not tokenizer._conn.in_transaction
    assert tokenizer.cut(["zebras"]) == [["zebra"]]
