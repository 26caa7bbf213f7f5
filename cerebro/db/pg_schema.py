"""The team brain's schema on PostgreSQL: the brain's entities, a project column on each, row-level security.

Built whole by the first revision (``alembic/versions/v1_upstream_base.py``) when Alembic runs on PostgreSQL; the
revisions after it replay SQLite's history (Go cerebro's v2…v7 and the adoption fixes) and have nothing to do
here, because a team database has no legacy (ADR 0030). Revisions from here on are written for both engines.

The tables and columns are those of ``cerebro/models.py`` — the same SQLModel entities work on either engine —
with these differences:

- ``project`` on every table, defaulting to the connection's ``cerebro.project`` setting, first in every primary
  key; a row-level security policy (forced on the tables' owner too) lets a statement see and write only the rows
  of that project (``cerebro/db/postgres.py``).
- Times stay ``YYYY-MM-DD HH:MM:SS`` text, as in a brain file: the same ``StorageTime`` column type reads them,
  they sort as times, and an export is the same whichever engine wrote it. Metadata is ``json`` (kept as written).
- ``REAL`` is ``double precision``: SQLite's REAL is a double, and scores must not change with the engine.
- ``nodes`` and ``inbox_candidates`` have a ``rowid`` (an identity column): the insertion order SQLite gives every
  row, by which the store breaks ties between memories written in the same second.
- The keyword lane is a generated ``tsvector`` column, with ``node_terms`` (lexeme → memory, kept by triggers) as its
  index; the vector lane is ``node_vectors``, a pgvector column a memory, deleted with its memory.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cerebro.values import ARCHIVE_REASONS, NODE_STATUSES, NODE_TYPES

if TYPE_CHECKING:
    from cerebro.db.types import SAConnection

# Every table that holds a project's rows (the row-level security policy goes on each).
TABLES = (
    "schema_meta",
    "nodes",
    "node_terms",
    "edges",
    "nodes_archive",
    "relations",
    "inbox_candidates",
    "node_vectors",
    "node_vectors_next",
)

# What a text search configuration turns content into (stemmed English, like the brain file's porter tokenizer).
TEXT_SEARCH_CONFIG = "english"

_PROJECT = "project TEXT NOT NULL DEFAULT current_setting('cerebro.project')"
_NOW = "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')"

STATEMENTS = [
    f"""CREATE TABLE schema_meta (
        {_PROJECT},
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (project, key))""",
    f"""CREATE TABLE nodes (
        {_PROJECT},
        id TEXT NOT NULL,
        type TEXT NOT NULL CONSTRAINT ck_nodes_type CHECK (type IN {NODE_TYPES}),
        subtype TEXT,
        content TEXT NOT NULL,
        metadata JSON,
        importance DOUBLE PRECISION DEFAULT 0.5 CONSTRAINT ck_nodes_importance CHECK (importance BETWEEN 0.0 AND 1.0),
        decay_rate DOUBLE PRECISION NOT NULL,
        access_count INTEGER DEFAULT 0,
        times_reinforced INTEGER DEFAULT 0,
        status TEXT DEFAULT 'active' CONSTRAINT ck_nodes_status CHECK (status IN {NODE_STATUSES}),
        embedding_model TEXT NOT NULL DEFAULT '',
        created_at TEXT DEFAULT {_NOW},
        last_accessed TEXT DEFAULT {_NOW},
        last_reinforced TEXT,
        updated_at TEXT,
        last_surfaced TEXT,
        provenance_root INTEGER NOT NULL DEFAULT 0,
        origin_actor TEXT,
        origin_channel TEXT,
        origin_session TEXT,
        origin_host TEXT,
        rowid BIGINT GENERATED ALWAYS AS IDENTITY,
        keywords TSVECTOR GENERATED ALWAYS AS (
            to_tsvector('{TEXT_SEARCH_CONFIG}', content) || to_tsvector('simple', content)) STORED,
        PRIMARY KEY (project, id))""",
    "CREATE INDEX idx_nodes_status ON nodes (project, status)",
    "CREATE INDEX idx_nodes_type_status ON nodes (project, type, status)",
    "CREATE INDEX idx_nodes_last_accessed ON nodes (project, last_accessed)",
    "CREATE INDEX idx_nodes_updated_at ON nodes (project, updated_at)",
    "CREATE INDEX idx_nodes_importance ON nodes (project, importance DESC)",
    # The keyword lane's way in under row-level security: which memories hold a lexeme. A policy's condition runs
    # before any other that is not leakproof, an index condition runs first, and no full-text operator is leakproof
    # — so `keywords @@ query` could never use a GIN index here, and read every row of the project (~70 ms at 100k).
    # Text equality is leakproof: this B-tree serves the lookup, and `@@` then tests only the memories it names.
    # Kept by triggers on `nodes`, in the writing transaction, as the generated column is.
    f"""CREATE TABLE node_terms (
        {_PROJECT},
        lexeme TEXT NOT NULL,
        node_id TEXT NOT NULL,
        PRIMARY KEY (project, lexeme, node_id))""",
    "CREATE INDEX idx_node_terms_node ON node_terms (project, node_id)",
    """CREATE FUNCTION cerebro_node_terms() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP <> 'INSERT' THEN
            DELETE FROM node_terms WHERE node_id = OLD.id;
        END IF;
        IF TG_OP <> 'DELETE' THEN
            INSERT INTO node_terms (lexeme, node_id) SELECT unnest(tsvector_to_array(NEW.keywords)), NEW.id;
        END IF;
        RETURN NULL;
    END $$""",
    "CREATE TRIGGER node_terms_written AFTER INSERT OR DELETE ON nodes FOR EACH ROW "
    "EXECUTE FUNCTION cerebro_node_terms()",
    "CREATE TRIGGER node_terms_rewritten AFTER UPDATE OF content ON nodes FOR EACH ROW "
    "WHEN (OLD.keywords IS DISTINCT FROM NEW.keywords) EXECUTE FUNCTION cerebro_node_terms()",
    f"""CREATE TABLE edges (
        {_PROJECT},
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        source_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        relation TEXT NOT NULL,
        weight DOUBLE PRECISION DEFAULT 1.0,
        metadata JSON,
        created_at TEXT DEFAULT {_NOW},
        valid_at TEXT,
        invalid_at TEXT,
        FOREIGN KEY (project, source_id) REFERENCES nodes (project, id) ON DELETE CASCADE,
        FOREIGN KEY (project, target_id) REFERENCES nodes (project, id) ON DELETE CASCADE,
        UNIQUE (project, source_id, target_id, relation))""",
    "CREATE INDEX idx_edges_target ON edges (project, target_id)",
    "CREATE INDEX idx_edges_relation ON edges (project, relation)",
    f"""CREATE TABLE nodes_archive (
        {_PROJECT},
        id TEXT NOT NULL,
        type TEXT NOT NULL,
        subtype TEXT,
        content TEXT NOT NULL,
        metadata JSON,
        importance DOUBLE PRECISION,
        status TEXT,
        archive_reason TEXT CONSTRAINT ck_nodes_archive_reason CHECK (archive_reason IN {ARCHIVE_REASONS}),
        original_created_at TEXT,
        archived_at TEXT DEFAULT {_NOW},
        PRIMARY KEY (project, id))""",
    f"""CREATE TABLE relations (
        {_PROJECT},
        name TEXT NOT NULL,
        traversal_class TEXT,
        created_at TEXT DEFAULT {_NOW},
        PRIMARY KEY (project, name))""",
    f"""CREATE TABLE inbox_candidates (
        {_PROJECT},
        id TEXT NOT NULL,
        type TEXT NOT NULL CONSTRAINT ck_inbox_type CHECK (type IN {NODE_TYPES}),
        subtype TEXT,
        content TEXT NOT NULL,
        metadata JSON,
        importance DOUBLE PRECISION DEFAULT 0.5,
        created_at TEXT DEFAULT {_NOW},
        origin_actor TEXT,
        origin_channel TEXT,
        origin_session TEXT,
        origin_host TEXT,
        rowid BIGINT GENERATED ALWAYS AS IDENTITY,
        PRIMARY KEY (project, id))""",
    f"""CREATE TABLE node_vectors (
        {_PROJECT},
        node_id TEXT NOT NULL,
        embedding VECTOR NOT NULL,
        PRIMARY KEY (project, node_id),
        FOREIGN KEY (project, node_id) REFERENCES nodes (project, id) ON DELETE CASCADE)""",
    # A re-embed's vectors from the next model, until they replace node_vectors (cerebro reembed).
    f"""CREATE TABLE node_vectors_next (
        {_PROJECT},
        node_id TEXT NOT NULL,
        embedding VECTOR NOT NULL,
        PRIMARY KEY (project, node_id),
        FOREIGN KEY (project, node_id) REFERENCES nodes (project, id) ON DELETE CASCADE)""",
]

_POLICY = "project = current_setting('cerebro.project')"


def create(bind: SAConnection) -> None:
    """Build the schema in an empty database (pgvector must be there: creating it needs an administrator)."""
    has_vector = bind.exec_driver_sql("SELECT 1 FROM pg_extension WHERE extname = 'vector'").first() is not None
    if not has_vector:
        try:
            with bind.begin_nested():
                bind.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS vector")
        except Exception as exc:
            from cerebro.errors import MigrationFailed

            raise MigrationFailed(
                "the team database needs the pgvector extension, and this role may not create it: ask an "
                "administrator to run CREATE EXTENSION vector; in it (README, 'Team brain')"
            ) from exc
    for statement in STATEMENTS:
        bind.exec_driver_sql(statement)
    for table in TABLES:
        # No statistics on `project`: gathered while one project filled the table, they told the planner another
        # project has no rows, and a foreign-key check — `project = $1 AND id = $2` — then read a new project's
        # memories through any (project, …) index, all of them for each new vector (writes slowing with the size:
        # 545 → 427 a second over 3,000, and ever slower). Without them, the primary key is the one lookup.
        bind.exec_driver_sql(f"ALTER TABLE {table} ALTER COLUMN project SET STATISTICS 0")
        bind.exec_driver_sql(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
        bind.exec_driver_sql(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        bind.exec_driver_sql(f"CREATE POLICY project_scope ON {table} USING ({_POLICY}) WITH CHECK ({_POLICY})")


def drop(bind: SAConnection) -> None:
    for table in reversed(TABLES):
        bind.exec_driver_sql(f"DROP TABLE IF EXISTS {table} CASCADE")
    bind.exec_driver_sql("DROP FUNCTION IF EXISTS cerebro_node_terms()")
