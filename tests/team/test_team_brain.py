"""A project's brain in a team database, through the library and the command line (issue 20, ADR 0030).

The server is real (PostgreSQL 18 + pgvector, ``tests/postgres.py``); each test has a database of its own
(``team_url``), reached as an ordinary role.
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from pathlib import Path

import pytest

from cerebro import Brain, paths, team
from cerebro.db import postgres
from cerebro.db.postgres import pg_sql
from cerebro.errors import BrainNotFound, BrainUnreadable, InvalidInput, NotFound
from tests.helpers import assert_one_line_error

# --------------------------------------------------------------------------- SQLite's SQL on PostgreSQL


@pytest.mark.parametrize(
    ("sqlite", "postgresql"),
    [
        # planner hints go; the column stays
        (
            "SELECT id FROM nodes WHERE id IN (?) AND +status = 'active'",
            "SELECT id FROM nodes WHERE id IN (%s) AND status = 'active'",
        ),
        ("SELECT 1 FROM edges WHERE +relation = ? AND x", "SELECT 1 FROM edges WHERE relation = %s AND x"),
        ("SELECT a+status FROM t", "SELECT a+status FROM t"),  # arithmetic, not a hint
        # functions by their PostgreSQL names
        ("key < ? || char(1114111)", "key < %s || chr(1114111)"),
        ("instr(CAST(metadata AS TEXT), 'x') > 0", "strpos(CAST(metadata AS TEXT), 'x') > 0"),
        # a stored time read as an instant: a team brain holds the storage layout only (cerebro's own writes)
        ("coalesce(datetime(valid_at), valid_at) <= ?", "coalesce((valid_at), valid_at) <= %s"),
        # byte order, whatever the database's own collation (under en_US no id prefix resolved, no setting was read)
        ("WHERE id COLLATE BINARY >= :lo", 'WHERE id COLLATE "C" >= %(lo)s'),
        ('ORDER BY relations.name COLLATE "BINARY"', 'ORDER BY relations.name COLLATE "C"'),
        ("WHERE metadata IS :wm", "WHERE metadata IS NOT DISTINCT FROM %(wm)s"),
        ("WHERE metadata IS NULL", "WHERE metadata IS NULL"),
        # a conflict target is unique per project
        (
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            "ON CONFLICT (project, key) DO UPDATE SET value = excluded.value",
        ),
        ("on conflict (source_id, target_id) DO NOTHING", "ON CONFLICT (project, source_id, target_id) DO NOTHING"),
        # placeholders, and a literal % escaped for psycopg
        ("VALUES (:k, :v)", "VALUES (%(k)s, %(v)s)"),
        ("LIKE 'a%' AND x = ?", "LIKE 'a%%' AND x = %s"),
        # quoted text, quoted names and casts are left alone
        (
            "SELECT '?', ':k', '+status', 'char(' FROM t WHERE x = ?",
            "SELECT '?', ':k', '+status', 'char(' FROM t WHERE x = %s",
        ),
        ('SELECT "a?b" FROM t', 'SELECT "a?b" FROM t'),
        ("CAST(? AS vector) <=> v, x::text", "CAST(%s AS vector) <=> v, x::text"),
        ("SELECT 'it''s ?' , ?", "SELECT 'it''s ?' , %s"),
    ],
)
def test_sqlite_spellings_become_postgresql_ones(sqlite: str, postgresql: str) -> None:
    assert pg_sql(sqlite, placeholders=True) == postgresql


def test_without_placeholders_only_the_spellings_change() -> None:
    """SQLAlchemy's statements already carry psycopg's placeholders (and escaped %)."""
    statement = "SELECT id FROM nodes WHERE +status = %(s)s AND key LIKE 'a%%' ON CONFLICT(id) DO NOTHING"
    assert pg_sql(statement, placeholders=False) == (
        "SELECT id FROM nodes WHERE status = %(s)s AND key LIKE 'a%%' ON CONFLICT (project, id) DO NOTHING"
    )


# --------------------------------------------------------------------------- the library


def test_init_creates_a_projects_brain_once_and_opens_it(team_url) -> None:
    first = Brain.init(team_url, embed_provider="fake", team_project="alpha")
    again = Brain.init(team_url, embed_provider="fake", team_project="alpha")
    assert (first.created, again.created) == (True, False)
    assert first.path.endswith("(project alpha)") and "postgresql+psycopg://cerebro@" in first.path
    with Brain.open(team_url, team_project="alpha") as brain:
        assert brain.path is None and brain.location == first.path
        node = brain.add("the deploy script needs VPN access", type="procedure")
        assert brain.get(node).node.content == "the deploy script needs VPN access"
        assert [r.node.id for r in brain.recall("deploy script vpn")] == [node]
        assert {r.name for r in brain.relations()} >= {"derived_from", "supports", "contradicts", "supersedes"}


def test_a_project_without_a_brain_is_not_found(team_url) -> None:
    Brain.init(team_url, embed_provider="fake", team_project="alpha")
    with pytest.raises(BrainNotFound, match="no brain for project 'beta'"):
        Brain.open(team_url, team_project="beta")
    with pytest.raises(InvalidInput, match="name this one"):
        Brain.open(team_url)


def test_a_database_without_cerebros_schema_is_not_found_and_left_alone(team_url) -> None:
    with pytest.raises(BrainNotFound, match="no team brain"):
        Brain.open(team_url, team_project="alpha")
    with postgres.connect(team_url, "alpha") as conn:
        assert postgres.revision(conn) is None  # nothing was built by the failed open


def test_stats_count_one_project_of_the_database(team_url) -> None:
    """A team brain's counts are its project's: memories by status and type, edges, vectors, the pending ones."""
    from cerebro.db.migrate import HEAD_REVISION
    from cerebro.store.sql import text

    for key in ("alpha", "beta"):
        Brain.init(team_url, embed_provider="fake", team_project=key)
    with Brain.open(team_url, team_project="alpha") as alpha, Brain.open(team_url, team_project="beta") as beta:
        kept = alpha.add("alpha's database password rotates monthly", type="concept")
        alpha.add_edge(kept, alpha.add("alpha's rotation runbook", type="procedure"), "supports")
        unembedded = alpha.add("a memory whose vector went missing")
        alpha.handle.write(lambda s: s.execute(text("DELETE FROM node_vectors WHERE node_id = :i"), {"i": unembedded}))
        beta.add("beta's only memory")
        counts = alpha.stats()
        assert (counts.total_nodes, counts.active_nodes, counts.total_edges) == (3, 3, 1)
        assert counts.nodes_by_type == {"episode": 1, "concept": 1, "procedure": 1, "reflection": 0}
        assert (counts.embedded_nodes, counts.pending_embeddings) == (3, 1)  # its model is still recorded
        assert counts.revision == HEAD_REVISION
        assert (beta.stats().total_nodes, beta.stats().pending_embeddings) == (1, 0)


def test_an_unreachable_server_is_one_clear_error_without_the_password(postgres_server) -> None:
    url = f"postgresql+psycopg://cerebro:s3cret@127.0.0.1:{postgres_server.port + 1}/nowhere"
    with pytest.raises(BrainUnreadable, match="cannot reach the team brain") as raised:
        Brain.open(url, team_project="alpha")
    assert "s3cret" not in str(raised.value) and ":***@" in str(raised.value)


def test_two_projects_in_one_database_never_meet(team_url) -> None:
    for key in ("alpha", "beta"):
        Brain.init(team_url, embed_provider="fake", team_project=key)
    with Brain.open(team_url, team_project="alpha") as alpha, Brain.open(team_url, team_project="beta") as beta:
        mine = alpha.add("alpha's database password rotates monthly")
        theirs = beta.add("beta's database password rotates weekly")
        alpha.add_edge(mine, alpha.add("alpha's rotation runbook"), "supports")
        assert alpha.recall("database password rotates").ids[0] == mine
        assert theirs not in alpha.recall("database password rotates").ids
        assert [n.id for n in beta.list()] == [theirs]
        assert beta.stats().total_edges == 0
        with pytest.raises(NotFound, match="no node found"):
            beta.get(mine)
        alpha.config_set("recall_threshold", "0.42")
        assert alpha.config_value("recall_threshold") == 0.42
        assert beta.config_value("recall_threshold") != 0.42


# --------------------------------------------------------------------------- the command line


def _bind(cli, url: str, key: str = "alpha"):
    return cli("init", "--store", url, "--team-project", key, "--skip-integration", "--embed-provider", "fake")


def test_init_store_binds_the_folder_and_every_command_uses_the_team_brain(cli, team_url, project) -> None:
    made = _bind(cli, team_url)
    assert made.exit_code == 0, made
    assert "(project alpha)" in made.stdout
    added = cli("--format", "json", "add", "--type", "concept", "access tokens last fifteen minutes")
    assert added.exit_code == 0, added
    node = added.json()["id"]
    recalled = cli("--format", "json", "recall", "access tokens")
    assert [r["id"] for r in recalled.json()["results"]] == [node]
    assert cli("--format", "json", "stats").json()["active_nodes"] == 1
    with Brain.open(team_url, team_project="alpha") as brain:  # it is really in the database
        assert [n.id for n in brain.list()] == [node]
    binding = team.binding_file(project)
    assert stat.S_IMODE(binding.stat().st_mode) == 0o600
    assert json.loads(binding.read_text()) == {"url": team_url, "project": "alpha"}


def test_the_password_given_to_init_is_written_nowhere(cli, team_url, project) -> None:
    with_password = team_url.replace("//cerebro@", "//cerebro:hunter2@", 1)  # trust auth: the password is ignored
    assert _bind(cli, with_password).exit_code == 0
    assert "hunter2" not in team.binding_file(project).read_text()
    assert cli("add", "a memory").exit_code == 0
    with Brain.open(team_url, team_project="alpha") as brain:
        exported = json.dumps(brain.export("json"))
        assert "hunter2" not in exported and "cerebro@" not in exported
    as_parameter = f"{team_url}?password=hunter3&application_name=cerebro-test"  # libpq's other spelling
    made = cli(
        "init", "--store", as_parameter, "--team-project", "beta", "--skip-integration", "--embed-provider", "fake"
    )
    assert made.exit_code == 0, made
    assert "hunter3" not in made.stdout + made.stderr
    written = team.binding_file(project).read_text()
    assert "hunter3" not in written and "application_name=cerebro-test" in written


def test_another_folder_bound_to_another_project_sees_nothing_of_the_first(cli, team_url, tmp_path) -> None:
    assert _bind(cli, team_url).exit_code == 0
    node = cli("add", "alpha only: the staging database is read-only on Fridays").stdout.strip()
    other = tmp_path / "other-project"
    other.mkdir()
    assert (
        cli("init", "--store", team_url, "--team-project", "beta", "--skip-integration", project_dir=other).exit_code
        == 0
    )
    assert cli("--format", "json", "recall", "staging database", project_dir=other).json()["results"] == []
    assert cli("--format", "json", "list", project_dir=other).json()["memories"] == []
    assert_one_line_error(cli("get", node, project_dir=other), node[:8], exit_code=3)
    assert (
        cli("--format", "json", "forget", "--subject", "staging", "--apply", project_dir=other).json()["matched"] == []
    )
    assert [r["id"] for r in cli("--format", "json", "recall", "staging database").json()["results"]] == [node]


def test_the_environment_binds_every_project(cli, team_url, monkeypatch) -> None:
    Brain.init(team_url, embed_provider="fake", team_project="ci-agents")
    monkeypatch.setenv(team.ENV_STORE_URL, team_url)
    monkeypatch.setenv(team.ENV_TEAM_PROJECT, "ci-agents")
    node = cli("add", "CI caches the wheel house between runs").stdout.strip()
    with Brain.open(team_url, team_project="ci-agents") as brain:
        assert [n.id for n in brain.list()] == [node]


def test_init_under_the_environment_makes_the_team_brain_it_binds(cli, team_url, project, monkeypatch) -> None:
    """A CI job's natural `cerebro init` step made a brain file nothing then used, and reported success; the next
    `add` found no brain for the project in the team database (from a review)."""
    monkeypatch.setenv(team.ENV_STORE_URL, team_url)
    monkeypatch.setenv(team.ENV_TEAM_PROJECT, "ciproj")
    made = cli("init", "--skip-integration", "--embed-provider", "fake", "--format", "json")
    assert made.exit_code == 0, made
    assert made.json()["team_project"] == "ciproj"
    assert not paths.project_brain_path(project).exists() and not team.binding_file(project).exists()
    node = cli("add", "hello from ci").stdout.strip()
    with Brain.open(team_url, team_project="ciproj") as brain:
        assert [n.id for n in brain.list()] == [node]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--team-project", "alpha"], "--team-project goes with --store"),
        (["--store", "mysql://db/team"], "--store takes a PostgreSQL URL"),
        (["--store", "postgresql+psycopg://u@h/db", "--global"], "--store does not go with"),
        (["--store", "postgresql+psycopg://u@h/db", "--team-project", "_bad"], "bad team project key"),
        (["--store", "postgresql+psycopg://u@h/db", "--team-project", "a\nb"], "bad team project key"),
    ],
)
def test_bad_store_options_are_refused_before_anything_is_written(cli, project, args, fragment) -> None:
    assert_one_line_error(cli("init", "--skip-integration", *args), fragment, exit_code=2)
    assert not team.binding_file(project).exists()


def test_what_only_a_file_has_is_refused_with_the_servers_way(cli, team_url) -> None:
    assert _bind(cli, team_url).exit_code == 0
    assert_one_line_error(cli("backup"), "team brain", "pg_dump", exit_code=2)


def test_a_role_that_bypasses_the_scope_cannot_open_a_brain(team_url) -> None:
    superuser = team_url.replace("//cerebro@", "//postgres@", 1)
    with pytest.raises(InvalidInput, match="bypasses row-level security"):
        Brain.init(superuser, embed_provider="fake", team_project=f"p{uuid.uuid4().hex[:6]}")


def test_a_new_team_database_gets_its_schema_from_the_first_init(team_url) -> None:
    Brain.init(team_url, embed_provider="fake", team_project="alpha")
    with postgres.connect(team_url, "alpha") as conn:
        from cerebro.db.migrate import HEAD_REVISION

        assert postgres.revision(conn) == HEAD_REVISION
    assert os.environ.get(team.ENV_STORE_URL) is None


def test_a_read_sees_one_snapshot_while_another_writer_commits(team_url) -> None:
    """Recall reads its lanes, rows and graph in one transaction: what another agent commits meanwhile shows up in
    the next read, never half-way through this one (REPEATABLE READ, as a SQLite read transaction)."""
    Brain.init(team_url, embed_provider="fake", team_project="alpha")
    with Brain.open(team_url, team_project="alpha") as reader, Brain.open(team_url, team_project="alpha") as writer:
        reader.add("first")
        reads = reader.handle.store.reads
        with reader.handle.snapshot() as conn:
            before = reads.count_active(conn)
            writer.add("second")
            assert reads.count_active(conn) == before == 1
        with reader.handle.snapshot() as conn:
            assert reads.count_active(conn) == 2


def test_a_write_that_loses_to_a_concurrent_one_is_run_again_whole(team_url) -> None:
    """PostgreSQL's serialization failure (another transaction changed the row first) is a retryable error: the
    retry layer runs the whole unit of work again, which then sees the other's write."""
    import psycopg

    from cerebro.retry import is_lock_error, run_with_retry

    Brain.init(team_url, embed_provider="fake", team_project="alpha")
    with Brain.open(team_url, team_project="alpha") as brain:
        node = brain.add("counted", importance=0.5)
    mine, theirs = postgres.connect(team_url, "alpha"), postgres.connect(team_url, "alpha")
    attempts: list[float] = []

    def work() -> None:
        mine.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        try:
            (importance,) = mine.execute("SELECT importance FROM nodes WHERE id = ?", (node,)).fetchone()
            attempts.append(importance)
            if len(attempts) == 1:  # another agent commits in between, the first time only
                theirs.execute("UPDATE nodes SET importance = 0.9 WHERE id = ?", (node,))
            mine.execute("UPDATE nodes SET importance = ? WHERE id = ?", (importance / 2, node))
            mine.execute("COMMIT")
        except BaseException:
            mine.rollback()
            raise

    try:
        with pytest.raises(psycopg.errors.SerializationFailure) as lost:
            work()
        assert is_lock_error(lost.value)
        attempts.clear()
        theirs.execute("UPDATE nodes SET importance = 0.5 WHERE id = ?", (node,))
        run_with_retry(work, sleep=lambda _: None)
        assert attempts == [0.5, 0.9]  # the second attempt read the other's write
        assert mine.execute("SELECT importance FROM nodes WHERE id = ?", (node,)).fetchone() == (0.45,)
    finally:
        mine.close()
        theirs.close()


def test_doctor_checks_the_team_brain_a_folder_is_bound_to(cli, team_url) -> None:
    assert _bind(cli, team_url).exit_code == 0
    cli("add", "one memory")
    report = cli("--format", "json", "doctor").json()
    (brain,) = [c for c in report["checks"] if c["name"] == "brain"]
    assert brain["status"] == "ok" and "team brain" in brain["detail"] and "1 active memories" in brain["detail"]
    # secrets kept in clear are found there too, as in a brain file (the team check read nothing inside)
    assert cli("add", "deploy key AKIAQX3NZ7VGLD5KPW2M", "--allow-secret").exit_code == 0
    (brain,) = [c for c in cli("--format", "json", "doctor").json()["checks"] if c["name"] == "brain"]
    assert brain["status"] == "warn" and brain["secrets_in_clear"] == 1 and "secrets in clear" in brain["detail"]
    assert brain["fix"].startswith("cerebro secrets redact")


def test_doctor_finds_missing_vectors_and_odd_metadata_on_a_team_brain(cli, team_url) -> None:
    """The team check read only counts and secrets: a memory without a vector (recall's vector lane cannot see it)
    or metadata another tool wrote as something other than an object went unreported (a review)."""
    assert _bind(cli, team_url).exit_code == 0
    kept = cli("--format", "json", "add", "a memory with its vector").json()["id"]
    bare = cli("--format", "json", "add", "a memory whose vector is lost").json()["id"]
    with postgres.connect(team_url, "alpha") as conn:
        conn.execute("DELETE FROM node_vectors WHERE node_id = ?", (bare,))
        conn.execute("UPDATE nodes SET metadata = '[1, 2]' WHERE id = ?", (kept,))
        conn.commit()
    (brain,) = [c for c in cli("--format", "json", "doctor").json()["checks"] if c["name"] == "brain"]
    assert brain["status"] == "warn", brain
    assert (brain["vectors_missing"], brain["metadata_not_object"]) == (1, 1)
    assert brain["fixes"] == [brain["fix"]]
    assert "1 active memory has no vector" in brain["detail"] and "not a JSON object" in brain["detail"]
    assert brain["fix"].startswith("cerebro embed --pending")
    assert cli("embed", "--pending").exit_code == 0
    (brain,) = [c for c in cli("--format", "json", "doctor").json()["checks"] if c["name"] == "brain"]
    assert brain["vectors_missing"] == 0 and brain["fix"] is None and brain["status"] == "warn"


def test_doctor_never_upgrades_a_team_database(cli, team_url) -> None:
    """Doctor writes nothing: it opened the team brain, which upgraded the shared database in place — and the
    teammates still on the older cerebro were refused from then on (from a review)."""
    assert _bind(cli, team_url).exit_code == 0
    with postgres.connect(team_url, "alpha") as conn:
        conn.execute("UPDATE alembic_version SET version_num = 'py0004'")
    report = cli("--format", "json", "doctor").json()
    (brain,) = [c for c in report["checks"] if c["name"] == "brain"]
    assert brain["status"] == "warn" and "an upgrade is pending" in brain["detail"]
    with postgres.connect(team_url, "alpha") as conn:
        assert postgres.revision(conn) == "py0004"
        conn.execute("UPDATE alembic_version SET version_num = 'zz9999'")
    (brain,) = [c for c in cli("--format", "json", "doctor").json()["checks"] if c["name"] == "brain"]
    assert brain["status"] == "fail" and "written by a newer cerebro" in brain["detail"]


def test_every_writing_command_on_one_project_leaves_the_other_exactly_as_it_was(cli, team_url, tmp_path) -> None:
    """Isolation through the command line: a second project in the same database runs every kind of write — add,
    edge, update, supersede, relation, config, inbox, gc, forget, consolidate, import — and the first project's rows
    are unchanged, row for row."""
    from tests.conftest import snapshot
    from tests.postgres import TeamBrainRef

    assert _bind(cli, team_url, "alpha").exit_code == 0
    kept = [cli("--format", "json", "add", f"alpha memory {i} about the deploy").json()["id"] for i in range(3)]
    cli("edge", kept[0], kept[1], "supports")
    alpha = TeamBrainRef(team_url, "alpha")
    before = snapshot(alpha)
    other = tmp_path / "beta-project"
    other.mkdir()

    def beta(*args: str):
        result = cli(*args, project_dir=other)
        assert result.exit_code == 0, result
        return result

    beta("init", "--store", team_url, "--team-project", "beta", "--skip-integration", "--embed-provider", "fake")
    ids = [beta("--format", "json", "add", f"beta episode {i} about the deploy").json()["id"] for i in range(4)]
    beta("edge", ids[0], ids[1], "supports")
    beta("update", ids[2], "--importance", "0.9")
    beta("supersede", ids[3], "beta's newer note about the deploy")
    beta("relation", "add", "blocks")
    beta("config", "set", "recall_threshold", "0.5")
    beta("inbox", "add", "maybe the deploy is flaky")
    beta("consolidate", ids[0], ids[1], "--into", ids[2])
    beta("gc", "--threshold", "0.9")
    beta("forget", "--subject", "deploy", "--apply")
    dump = tmp_path / "alpha.jsonl"
    dump.write_text(cli("export", "--format", "jsonl").stdout)  # alpha's own export, imported into beta
    beta("import", str(dump), "--on-conflict", "replace")
    assert snapshot(alpha) == before


def test_an_unreadable_binding_is_one_clear_error_naming_the_fix(cli, project) -> None:
    team.binding_file(project).parent.mkdir(parents=True, exist_ok=True)
    team.binding_file(project).write_text("{not json")
    assert_one_line_error(cli("list"), "does not say which team brain", "cerebro init --store URL", exit_code=9)
    team.binding_file(project).unlink()
    assert cli("init", "--skip-integration", "--embed-provider", "none").exit_code == 0
    team.remote_file(project).write_text('{"url": "postgresql://h/db"}')  # no project key
    assert_one_line_error(cli("recall", "--team", "x"), "cerebro team connect URL", exit_code=9)


def test_the_raw_connection_plans_each_statement_with_its_values(team_url) -> None:
    """No server-side prepared statements: a generic plan, reused for every value, scanned where a search's own
    plan reads the index (cerebro/db/postgres.py)."""
    Brain.init(team_url, embed_provider="fake", team_project="p")
    with Brain.open(team_url, team_project="p") as brain:
        brain.add("the deploy needs the VPN")
        for _ in range(8):  # psycopg prepares a statement from its fifth run on
            assert brain.recall("deploy VPN").results
        conn = brain.handle.raw
        assert conn.execute("SELECT COUNT(*) FROM pg_prepared_statements").fetchone()[0] == 0


@pytest.mark.parametrize("another_project_first", [False, True], ids=["new database", "another project analysed"])
def test_a_foreign_key_check_finds_the_memory_by_its_key_however_the_project_grew(
    team_url, another_project_first: bool
) -> None:
    """A new project's first bulk write (an import, a push: one transaction) checks each new vector's memory. That
    check read every memory of the project so far — writes slowing with the size — when its plan was made while
    the project was empty and kept (a new database), or when statistics gathered while another project filled the
    table said this one has no rows. It reads the one memory it checks."""
    node = "INSERT INTO nodes (id, type, content, decay_rate) VALUES (?, 'concept', 'x', 0.1)"
    vector = "INSERT INTO node_vectors (node_id, embedding) VALUES (?, CAST(? AS vector))"

    def add(conn: postgres.RawConnection, ids: range) -> None:
        for start in range(ids.start, ids.stop, 50):  # a memory's vector is written soon after the memory
            batch = range(start, min(start + 50, ids.stop))
            conn.executemany(node, [(f"n{i}",) for i in batch])
            conn.executemany(vector, [(f"n{i}", "[1,0,0]") for i in batch])

    if another_project_first:
        Brain.init(team_url, embed_provider="fake", team_project="other")
        with Brain.open(team_url, team_project="other") as other:
            other.handle.raw.execute("BEGIN")
            add(other.handle.raw, range(1_000))
            other.handle.raw.execute("COMMIT")
            other.handle.raw.execute("ANALYZE nodes")  # as autovacuum would
    Brain.init(team_url, embed_provider="fake", team_project="p")
    with Brain.open(team_url, team_project="p") as brain:
        conn = brain.handle.raw

        def memories_read() -> int:
            sql = "SELECT idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relname = 'nodes'"
            return int(conn.execute(sql).fetchone()[0])

        conn.execute("BEGIN")
        try:
            add(conn, range(2_000))
            before = memories_read()
            add(conn, range(2_000, 2_100))
            assert memories_read() - before <= 100 * 5  # one memory a check (the bad plans read ~2,050 each)
        finally:
            conn.execute("ROLLBACK")


def test_a_folder_bound_to_a_missing_team_project_gets_no_moved_brain_hint(cli, team_url, tmp_path) -> None:
    """A bound folder's brain is the team's: a file brain recorded for its git repository elsewhere is no hint
    for it (the moved-repository hint is for folders whose brain is a file)."""
    import subprocess

    old, new = tmp_path / "before", tmp_path / "after"
    old.mkdir()
    git = ["git", "-C", str(old), "-c", "user.email=a@example.com", "-c", "user.name=a"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "first"], check=True)
    assert cli("init", "--skip-integration", "--embed-provider", "none", project_dir=old).exit_code == 0
    old.rename(new)  # its file brain now serves a folder that is gone: the hint a file-brain folder would get
    team.binding_file(new).parent.mkdir(parents=True, exist_ok=True)
    team.binding_file(new).write_text(json.dumps({"url": team_url, "project": "never-made"}))
    missing = cli("list", project_dir=new)
    assert_one_line_error(missing, "cerebro init --store", exit_code=4)
    assert "relink" not in missing.stderr


def test_secrets_in_a_links_metadata_are_found_and_redacted_in_a_team_brain(team_url) -> None:
    """The secret scan reads links' metadata too (a link's id is a number there). ``secrets redact`` needs a backup,
    which a team brain leaves to the server's tools: the store's replacement is driven directly."""
    token = "AKIAQX3NZ7VGLD5KPW2M"
    Brain.init(team_url, embed_provider="fake", team_project="alpha")
    with Brain.open(team_url, team_project="alpha") as brain:
        brain.config_set("redact_secrets", "false")
        a, b = brain.add("deploy runbook"), brain.add("staging credentials rotate monthly")
        edge = brain.add_edge(a, b, "supports", metadata={"token": token}).edge
        brain.config_set("redact_secrets", "true")
        found = brain.scan_secrets().findings
        assert [(f.where, f.id, f.metadata_kinds) for f in found] == [("edge", str(edge.id), ("aws-access-key",))]
        h = brain.handle
        stored = {(w, i): (c, m) for w, i, c, m in h.store.texts.all_texts(h.raw) if w == "edge"}
        was = stored[("edge", str(edge.id))]
        clean = json.dumps({"token": "[secret:aws-access-key]"})
        assert h.write(lambda s: h.store.texts.replace(s, "edge", str(edge.id), "", clean, was=was)) is True
        assert h.write(lambda s: h.store.texts.replace(s, "edge", str(edge.id), "", clean, was=was)) is False  # changed
        assert brain.scan_secrets().findings == []
        assert [e.metadata for e in brain.get(a).edges] == [{"token": "[secret:aws-access-key]"}]


def test_a_query_of_thousands_of_words_is_answered(team_url) -> None:
    """A pasted document as the query: ~5,000 distinct words overflowed PostgreSQL's stack and ~11,000 its
    parameters, where a brain file answered (a review)."""
    Brain.init(team_url, embed_provider="none", team_project="long")
    with Brain.open(team_url, team_project="long") as brain:
        kept = brain.add("the zebra crossing near the office")
        query = "zebra " + " ".join(f"word{n}" for n in range(6000))
        assert brain.recall(query).ids == [kept]


def test_secrets_redact_works_on_a_team_brain_keeping_an_export_aside(team_url) -> None:
    """It stopped at "a backup is made from a brain file": no team brain could be redacted. The project's jsonl
    export, in the backups folder, is what was there before."""
    token = "AKIAQX3NZ7VGLD5KPW2M"
    Brain.init(team_url, embed_provider="fake", team_project="alpha")
    with Brain.open(team_url, team_project="alpha") as brain:
        kept = brain.add(f"deploy key {token}", allow_secret=True)
        from cerebro import paths as cerebro_paths

        cerebro_paths.ensure_private_dir(cerebro_paths.backups_dir())
        theirs = cerebro_paths.backups_dir() / "alpha-beta-20260101T000000Z.jsonl"  # another project's export
        theirs.write_text("")
        done = brain.redact_secrets()
        assert done.older_backups == ()  # "alpha" does not take project "alpha-beta"'s for its own
        assert done.redacted and done.backup is not None and done.backup.endswith(".jsonl")
        aside = Path(done.backup)
        assert token in aside.read_text() and aside.stat().st_mode & 0o777 == 0o600
        assert brain.get(kept).node.content == "deploy key [secret:aws-access-key]"
        assert brain.scan_secrets().findings == []
