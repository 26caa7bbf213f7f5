"""The team brain's schema on a real PostgreSQL: built by the same Alembic history, scoped by project.

Each test gets an empty database on the session's server (``tests/postgres.py``), as an ordinary role.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from cerebro import team
from cerebro.db import pg_schema, postgres
from cerebro.errors import InvalidInput

REPO = Path(__file__).resolve().parents[2]


def _node(conn, node_id: str, content: str = "text") -> None:
    conn.execute("INSERT INTO nodes (id, type, content, decay_rate) VALUES (?, 'concept', ?, 0.01)", (node_id, content))


def _tables(url: str) -> set[str]:
    import psycopg

    with psycopg.connect(postgres.libpq_url(url)) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {r[0] for r in rows}


def test_alembic_upgrade_head_builds_the_team_schema_and_downgrade_removes_it(team_url):
    """``alembic -x brain=<URL> upgrade head`` — the command that upgrades a brain file — builds a team database."""
    alembic = [sys.executable, "-m", "alembic", "-x", f"brain={team_url}"]
    subprocess.run([*alembic, "upgrade", "head"], cwd=REPO, check=True, capture_output=True)
    assert _tables(team_url) == {*pg_schema.TABLES, "alembic_version"}
    current = subprocess.run([*alembic, "current"], cwd=REPO, check=True, capture_output=True, text=True).stdout
    assert "(head)" in current
    subprocess.run([*alembic, "downgrade", "base"], cwd=REPO, check=True, capture_output=True)
    assert _tables(team_url) == {"alembic_version"}


def test_upgrade_is_idempotent(team_url):
    postgres.upgrade(team_url)
    postgres.upgrade(team_url)
    assert set(pg_schema.TABLES) <= _tables(team_url)


def test_each_project_sees_and_writes_only_its_own_rows(team_url):
    postgres.upgrade(team_url)
    alpha, beta = postgres.connect(team_url, "alpha"), postgres.connect(team_url, "beta")
    try:
        _node(alpha, "a1", "alpha's secret")  # the raw connection commits each statement outside BEGIN … COMMIT
        _node(beta, "b1")
        beta.execute("INSERT INTO schema_meta (key, value) VALUES ('embedding_model', 'beta-model')")
        # No WHERE clause anywhere: the scope is the database's, not the query's.
        assert alpha.execute("SELECT id, project FROM nodes").fetchall() == [("a1", "alpha")]
        assert beta.execute("SELECT id FROM nodes").fetchall() == [("b1",)]
        assert alpha.execute("SELECT count(*) FROM schema_meta").fetchone() == (0,)
        assert beta.execute("UPDATE nodes SET content = 'x' WHERE id = 'a1'").rowcount == 0
        assert beta.execute("DELETE FROM nodes").rowcount == 1  # its own row only
        assert alpha.execute("SELECT content FROM nodes").fetchall() == [("alpha's secret",)]
        # Naming another project outright is refused, not quietly written there.
        import psycopg

        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"):
            beta.execute(
                "INSERT INTO nodes (project, id, type, content, decay_rate) VALUES ('alpha', 'x', 'concept', 'c', 0)"
            )
    finally:
        alpha.close()
        beta.close()


def test_a_connection_without_a_project_fails_closed(team_url):
    import psycopg

    postgres.upgrade(team_url)
    with (
        psycopg.connect(postgres.libpq_url(team_url)) as conn,
        pytest.raises(psycopg.errors.UndefinedObject, match=r"cerebro\.project"),
    ):
        conn.execute("SELECT count(*) FROM nodes")


def test_a_role_that_may_not_create_tables_is_told_what_to_ask_for(postgres_server):
    """It was "internal error: ProgrammingError … permission denied for schema public" (exit 1)."""
    import psycopg

    from cerebro import Brain
    from cerebro.errors import MigrationFailed

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = 'limited'").fetchone() is None:
            admin.execute("CREATE ROLE limited LOGIN")
        admin.execute(f"CREATE DATABASE {name}")  # owned by the administrator
    with psycopg.connect(postgres_server.database_url(name, user="postgres", driver=""), autocommit=True) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS vector")
        admin.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")
    try:
        with pytest.raises(MigrationFailed, match="may not create cerebro's tables") as refused:
            Brain.init(postgres_server.database_url(name, user="limited"), embed_provider="fake", team_project="a")
        assert "GRANT CREATE ON SCHEMA public" in str(refused.value)
    finally:
        postgres_server.drop_database(postgres_server.database_url(name))


def test_a_role_that_bypasses_the_scope_is_refused(postgres_server, team_url):
    superuser_url = team_url.replace("//cerebro@", "//postgres@", 1)
    with pytest.raises(InvalidInput, match="bypasses row-level security"):
        postgres.connect(superuser_url, "alpha")


def test_the_sqlmodel_entities_work_unchanged_on_a_project(team_url):
    """The ORM's classes know nothing of projects: the column default and the policy do the scoping."""
    from sqlmodel import Session, select

    from cerebro.models import Edge, Node

    postgres.upgrade(team_url)
    for project in ("alpha", "beta"):
        engine = postgres.create_engine(team_url, project)
        try:
            with Session(engine) as session, session.begin():
                session.add(Node(id=f"{project}-1", type="concept", content=f"{project} one", decay_rate=0.01))
                session.add(Node(id=f"{project}-2", type="episode", content=f"{project} two", decay_rate=0.1))
                session.flush()
                session.add(Edge(source_id=f"{project}-1", target_id=f"{project}-2", relation="supports"))
            with Session(engine) as session:
                assert sorted(n.id for n in session.exec(select(Node))) == [f"{project}-1", f"{project}-2"]
                edge = session.exec(select(Edge)).one()
                assert (edge.source_id, edge.target_id, edge.weight) == (f"{project}-1", f"{project}-2", 1.0)
        finally:
            engine.dispose()


@pytest.mark.parametrize("key", ["", " alpha", "a" * 201, "al\npha", "-alpha", 7])
def test_a_bad_project_key_is_refused(team_url, key):
    with pytest.raises(InvalidInput, match="bad team project key"):
        postgres.connect(team_url, key)


def test_a_url_the_driver_cannot_parse_is_named_without_its_password():
    """libpq's own message echoes the URL it could not parse, password and all."""
    from cerebro import Brain
    from cerebro.errors import BrainUnreadable

    with pytest.raises(BrainUnreadable) as refused:
        Brain.open("postgresql+psycopg://cerebro:hunter2@[::1/x", team_project="alpha")
    assert "hunter2" not in str(refused.value) and "IPv6" in str(refused.value)


def test_messages_never_show_a_password():
    assert postgres.redact("postgresql+psycopg://ann:s3cret@db.example:5432/team") == (
        "postgresql+psycopg://ann:***@db.example:5432/team"
    )
    with pytest.raises(InvalidInput) as raised:
        postgres.libpq_url("mysql://ann:s3cret@db/team")
    assert "s3cret" not in str(raised.value)
    # libpq takes a password as a parameter too (from a review: written to .team.json and printed as given).
    given = "postgresql+psycopg://ann@db:5432/team?password=s3cr%26t&sslmode=prefer&SSLPassword=k3y"
    assert postgres.redact(given) == "postgresql+psycopg://ann@db:5432/team?password=***&sslmode=prefer&SSLPassword=***"
    assert team.without_password(given) == "postgresql+psycopg://ann@db:5432/team?sslmode=prefer"
    assert team.without_password("postgresql+psycopg://ann:pw@db/team?application_name=x") == (
        "postgresql+psycopg://ann@db/team?application_name=x"
    )
    # A driver's message that echoes a URL it could not parse, password and all.
    unparseable = "postgresql+psycopg://ann:hunter2@[::1/x?password=s3cr%26t"
    echoed = 'invalid URI query parameter: "postgresql://ann:hunter2@[::1/x?password=s3cr&t"'
    assert "hunter2" not in postgres.scrubbed(echoed, unparseable) and "s3cr" not in postgres.scrubbed(
        echoed, unparseable
    )


# --------------------------------------------------------------------------- the keyword lane's index


def _terms(conn, node_id: str) -> set[str]:
    return {r[0] for r in conn.execute("SELECT lexeme FROM node_terms WHERE node_id = ?", (node_id,)).fetchall()}


def test_a_memorys_words_are_indexed_as_it_is_written_rewritten_and_removed(team_url):
    postgres.upgrade(team_url)
    conn = postgres.connect(team_url, "alpha")
    try:
        _node(conn, "a1", "Deploys need the VPN")
        assert _terms(conn, "a1") == {"deploy", "deploys", "need", "the", "vpn"}  # stemmed and as written
        conn.execute("UPDATE nodes SET importance = 0.9 WHERE id = 'a1'")  # not the text: left as it was
        assert _terms(conn, "a1") == {"deploy", "deploys", "need", "the", "vpn"}
        conn.execute("UPDATE nodes SET content = 'Staging runs on Fridays' WHERE id = 'a1'")
        assert _terms(conn, "a1") == {"stage", "staging", "run", "runs", "on", "friday", "fridays"}
        conn.execute("DELETE FROM nodes WHERE id = 'a1'")
        assert _terms(conn, "a1") == set()
    finally:
        conn.close()


def test_another_projects_words_are_out_of_sight(team_url):
    postgres.upgrade(team_url)
    alpha, beta = postgres.connect(team_url, "alpha"), postgres.connect(team_url, "beta")
    try:
        _node(alpha, "a1", "alpha's secret codename")
        assert beta.execute("SELECT count(*) FROM node_terms").fetchone() == (0,)
        assert beta.execute("DELETE FROM node_terms").rowcount == 0
        assert _terms(alpha, "a1") >= {"secret", "codename"}
    finally:
        alpha.close()
        beta.close()


def test_the_keyword_search_reads_the_index_not_the_projects_rows(team_url):
    """Row-level security keeps a GIN index from `@@` (not leakproof); the lexeme B-tree is reachable: the plan
    looks each word up and reads the memories it names by their key (scans made dear: on a small table a scan is
    cheaper, and the planner knows it)."""
    from cerebro.store.postgres import fts

    postgres.upgrade(team_url)
    conn = postgres.connect(team_url, "alpha")
    try:
        insert = "INSERT INTO nodes (id, type, content, decay_rate) VALUES (?, 'concept', ?, 0.01)"
        conn.executemany(insert, [(f"n{i}", f"note {i} about topic{i % 500}") for i in range(2_000)])
        conn.execute("ANALYZE nodes")  # as autovacuum would
        conn.execute("ANALYZE node_terms")
        statements: list[str] = []

        class Recording:
            def execute(self, sql, params=None):
                statements.append(sql)
                return conn.execute(sql, params)

        assert [node_id for node_id, _ in fts.search(Recording(), "topic3", 10)] == ["n3", "n503", "n1003", "n1503"]
        conn.execute("BEGIN")
        conn.execute("SET LOCAL enable_seqscan = off")
        sql = statements[0]
        params = (*("topic3",) * 4, *("topic3",) * 2, 10)
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params).fetchall())
        conn.execute("ROLLBACK")
        assert "Index Only Scan using node_terms_pkey" in plan  # each word looked up
        assert "Index Cond: ((project = current_setting('cerebro.project'::text)) AND (id = named.node_id))" in plan
        assert "Seq Scan on nodes" not in plan
    finally:
        conn.close()


def test_the_writing_order_seeks_of_adjacency_use_an_index(team_url):
    """Recall's adjacency step (ADR 0033) asks for the memory written just before and after each top result; without
    revision py0003's index each seek read the whole project (~50 ms a recall at 10,000 memories)."""
    from cerebro.store import reads

    postgres.upgrade(team_url)
    conn, other = postgres.connect(team_url, "alpha"), postgres.connect(team_url, "beta")
    try:
        insert = "INSERT INTO nodes (id, type, content, decay_rate) VALUES (?, 'concept', ?, 0.01)"
        for i in range(2_000):  # another project's memories written in between: out of sight
            conn.execute(insert, (f"w{i}", f"note {i}"))
            other.execute(insert, (f"x{i}", f"note {i}"))
        conn.execute("ANALYZE nodes")  # as autovacuum would
        statements: list[str] = []

        class Recording:
            def execute(self, sql, params=None):
                statements.append(sql)
                return conn.execute(sql, params)

        beside = reads.written_beside(Recording(), ["w500"])
        assert [n.id for n in beside["w500"] if n] == ["w499", "w501"]
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + statements[0], ("w500",)).fetchall())
        assert plan.count("idx_nodes_writing_order") == 4
        assert "Seq Scan on nodes" not in plan and "Bitmap Heap Scan on nodes" not in plan
        near = reads.written_near(Recording(), ["w500", "x501"], 2)  # x501: another project's, out of sight
        assert near == {"w500": {"w498", "w499", "w501", "w502"}}
        plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + statements[-2], ("w500", "x501")).fetchall())
        assert plan.count("idx_nodes_writing_order") == 10  # as on a brain file (tests/unit/test_store.py)
        assert "Seq Scan on nodes" not in plan and "Bitmap Heap Scan on nodes" not in plan
    finally:
        conn.close()
        other.close()


def test_prime_pools_walk_an_index_on_a_team_brain(team_url):
    """Session-start prime's pools (ADR 0037): seeks on py0004's (type, status, importance) index and walks back along
    the writing order — not a sort of every active memory of a type, as through the (type, status) index."""
    from datetime import timedelta

    from cerebro import clock
    from cerebro.store import reads

    postgres.upgrade(team_url)
    conn, other = postgres.connect(team_url, "alpha"), postgres.connect(team_url, "beta")
    try:
        insert = (
            "INSERT INTO nodes (id, type, content, decay_rate, importance, created_at) VALUES (?, ?, ?, 0.01, ?, ?)"
        )
        now = clock.now()
        types = ("concept", "procedure", "episode", "reflection")
        for i in range(4_000):  # a month of memories, another project's among them: out of sight
            written = clock.format_ts(now - timedelta(minutes=11 * (4_000 - i)))
            conn.execute(insert, (f"w{i}", types[i % 4], f"note {i}", (i % 9) / 10, written))
            other.execute(insert, (f"x{i}", types[i % 4], f"note {i}", (i % 9) / 10, written))
        conn.execute("ANALYZE nodes")  # as autovacuum would
        marks = {
            "week": clock.format_ts(now - timedelta(days=7)),
            "two_days": clock.format_ts(now - timedelta(hours=48)),
        }
        statements: list[str] = []

        class Recording:
            def execute(self, sql, params=None):
                statements.append(sql)
                return conn.execute(sql, params)

        def best(kind: str | None, by_importance: bool, within: timedelta) -> list[str]:
            mine = [
                i
                for i in range(4_000)
                if (kind is None or types[i % 4] == kind) and 11 * (4_000 - i) <= within / timedelta(minutes=1)
            ]
            return [
                f"w{i}" for i in sorted(mine, key=lambda i: ((i % 9) if by_importance else 0, i), reverse=True)[:10]
            ]

        expected = {
            "concept": best("concept", True, timedelta(days=365)),
            "procedure": best("procedure", True, timedelta(days=365)),
            "episode": best("episode", False, timedelta(days=7)),
            "reflection": best("reflection", True, timedelta(days=365)),
            "recent": best(None, False, timedelta(hours=48)),
        }
        for pool, ids in expected.items():
            assert [n.id for n in reads.prime_pool(Recording(), pool, 10, marks)] == ids, pool
            sql = statements[-1]
            params = {k: v for k, v in marks.items() if f":{k}" in sql}
            plan = "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params).fetchall())
            assert "Seq Scan on nodes" not in plan, plan
            if pool == "recent":
                assert "idx_nodes_updated_at" in plan and "idx_nodes_writing_order" in plan, plan
            elif pool == "episode":  # a week back along the writing order, not every active episode
                assert "idx_nodes_writing_order" in plan and "idx_nodes_type_status_importance" not in plan, plan
            else:
                assert "idx_nodes_type_status_importance" in plan, plan
    finally:
        conn.close()
        other.close()


def test_py0007_reindexes_every_projects_words_by_their_parts(team_url):
    """Revision py0007 folds what the keyword column indexes (paths, addresses and versions split into their words,
    accents folded) and rebuilds the lexeme lookup for every project — not only for one a connection is scoped to:
    the upgrade runs with no project, and row-level security hid every row from it. Downgrading restores the parser's
    whole tokens."""
    alembic = [sys.executable, "-m", "alembic", "-x", f"brain={team_url}"]
    subprocess.run([*alembic, "upgrade", "py0006"], cwd=REPO, check=True, capture_output=True)
    alpha, beta = postgres.connect(team_url, "alpha"), postgres.connect(team_url, "beta")
    try:
        _node(alpha, "a1", "see cerebro/store/fts.py")
        _node(beta, "b1", "the Café at docs.example.org")
        assert "cerebro/store/fts.py" in _terms(alpha, "a1") and "fts" not in _terms(alpha, "a1")
        assert "cafe" not in _terms(beta, "b1")
    finally:
        alpha.close()
        beta.close()
    subprocess.run([*alembic, "upgrade", "head"], cwd=REPO, check=True, capture_output=True)
    alpha, beta = postgres.connect(team_url, "alpha"), postgres.connect(team_url, "beta")
    try:
        assert {"cerebro", "store", "fts", "py"} <= _terms(alpha, "a1")
        assert "cerebro/store/fts.py" not in _terms(alpha, "a1")
        assert {"cafe", "docs", "example", "org"} <= _terms(beta, "b1")
        # The scope is forced again: another project's words stay out of sight.
        assert beta.execute("SELECT count(*) FROM node_terms WHERE node_id = 'a1'").fetchone() == (0,)
        assert beta.execute("SELECT count(*) FROM nodes").fetchone() == (1,)
    finally:
        alpha.close()
        beta.close()
    subprocess.run([*alembic, "downgrade", "py0006"], cwd=REPO, check=True, capture_output=True)
    alpha = postgres.connect(team_url, "alpha")
    try:
        assert "cerebro/store/fts.py" in _terms(alpha, "a1") and "fts" not in _terms(alpha, "a1")
    finally:
        alpha.close()
