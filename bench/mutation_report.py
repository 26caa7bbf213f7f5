"""Summarise a mutmut run (``make mutate``) per module, the way docs/testing.md records it.

    python bench/mutation_report.py [MUTANTS_DIR] [--survivors]
    python bench/mutation_report.py [MUTANTS_DIR] --worth-running [--with-timeouts]   # names for `mutmut run NAME…`

Reads mutmut's result files (``mutants/**/*.py.meta``) and its rewritten sources, so it needs no mutmut
import. A survivor counts as *equivalent* (no test can kill it: the program behaves the same) when it is

- a change of letter case inside an SQL statement that leaves its quoted literals alone (SQL keywords and
  identifiers are case-insensitive), or
- listed in :data:`EQUIVALENT` with the reason.

Score = killed / (mutants − equivalent − not run); a timeout counts as killed (the mutant hung the tests).

A mutant not yet run that is equivalent by the same rules counts as equivalent: running it could only end in
"survived", after the whole of its covering tests — which, for SQL in the store, is most of the suite.
``--worth-running`` prints the names of the mutants not yet run that are not equivalent, so a run can be
resumed with only them (``make mutate`` does: the SQL letter-case mutants were most of a store run's time).
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

# (function as mutmut names it without the module — "" for any —, text only the mutant has) → why no test
# can tell.
EQUIVALENT: dict[tuple[str, str], str] = {
    ("x_apply_anchors", "if node is s.node and False else"): "replacing an unchanged node gives an equal result",
    ("x_apply_anchors", "demoted = None"): "None is as false as False",
    ("x_apply_anchors", "demoted = True"): "recall's results arrive ordered by rank value: a stable re-sort keeps them",
    (
        "x_apply_anchors",
        "if factor == 2.0:",
    ): "a factor of 1.0 through the demoting branch multiplies by 1 and re-sorts an ordered list: the same results",
    (
        "x_recall",
        "feedback_docs > 0 or options.feedback_weight > 0",
    ): "without keyword hits to feed back, feedback returns the query's own vector: the same ranking",
    (
        "x_recall",
        "if keyword_ids or (options.feedback_docs > 0",
    ): "with no documents to feed back, feedback returns the query's own vector: the same ranking",
    ("x_recall", "if options.centering >= 0:"): "centering by a weight of 0 leaves the query as it is",
    ("x_recall", "to_search.get(c.node.id) >="): "seeds come from a KNN over stored vectors: each has one here",
    ("x_recall", "to_search.get(c.node.id, +1.0) >="): "seeds come from a KNN over stored vectors: each has one here",
    ("x_for_node", "is null or edges."): "SQL keywords are case-insensitive",
    ("x__node_rowid", "if row is None and False else"): "the rowid is read after the node was written: it is there",
    ("x_upsert", "rowid = None"): "the vector goes to a new rowid, which every lookup finds by node id (slower)",
    ("x_upsert", "rowid = _node_rowid(db, None)"): "the vector goes to a new rowid, found by node id (slower)",
    ("x_upsert", "taken = None"): "a free rowid is free: the insert at it succeeds as before",
    ("x_upsert", "if taken is None and rowid is None:"): "the vector goes to a new rowid, found by node id (slower)",
    (
        "x_node",
        "values.DECAY_RATES.get(type, None)",
    ): "a memory's type is checked before the insert: every type has its rate",
    ("x_node", "values.DECAY_RATES.get(type)"): "a memory's type is checked before the insert: every type has its rate",
    ("x_ensure_table", "if dimensions <= 1 or"): "no model makes vectors of one dimension",
    ("x_to_blob", "default=None)"): "an empty vector is never stored: a brain's width is positive",
    ("x_to_blob", "max(map(abs, vector))"): "an empty vector is never stored: a brain's width is positive",
    ("x_to_blob", "default=1.0)"): "an empty vector is never stored: a brain's width is positive",
    ("x_to_blob", "if largest > 0 else 1.0"): "an all-zero vector quantises to zeros at any scale",
    ("", "cast(None, "): "typing.cast does nothing at run time",
    ("", "cast('XX"): "typing.cast does nothing at run time",
    ("x_execute", "cast('rows', "): "typing.cast does nothing at run time",
    ("x_execute", "cast('ROWS', "): "typing.cast does nothing at run time",
    ("x_execute", "cast('session', "): "typing.cast does nothing at run time",
    ("x_execute", "cast('SESSION', "): "typing.cast does nothing at run time",
    ("x_execute", "cast('connection', "): "typing.cast does nothing at run time",
    ("x_execute", "cast('CONNECTION', "): "typing.cast does nothing at run time",
    ("x__shape", "row[0] or 'XXXX'"): "a vec0 table's SQL is never empty: the fallback is never read",
    ("x__time", "(value[10] != ' ')"): "the general parser reads the storage layout as the fast path does (slower)",
    ("x__time", "value + 'XX+00:00XX'"): "the fast path fails and the general parser reads the same time (slower)",
    ("x_search", "k *= 5"): "a deeper next pass reaches the same hits: the loop runs until enough or none are left",
    ("x_dialect", "cast('XXSessionXX', db)"): "typing.cast does nothing at run time",
    ("x_dialect", "cast('session', db)"): "typing.cast does nothing at run time",
    ("x_dialect", "cast('SESSION', db)"): "typing.cast does nothing at run time",
    ("x_dialect", "cast(None, db)"): "typing.cast does nothing at run time",
    ("x_upsert", "weight is None and False"): "edges.weight has the server default 1.0: a NULL given is stored as 1.0",
    ("x_changed", "'XXCursorResult[object]XX'"): "typing.cast does nothing at run time",
    ("x_keyword_index_problem", "conn.execute('rollback')"): "SQL keywords are case-insensitive",
    ("x_alembic_config", "'SCRIPT_LOCATION'"): "configparser option names are case-insensitive",
    ("x_adopt_for_alembic_cli", "version >= 2"): "a v1 brain replayed from v1 is a v1 brain: revision v1 is idempotent",
    ("x_reusable_backup", "-*.sqlite'))"): "every candidate that matches holds the same state: any one is the backup",
    ("x_reusable_backup", "reverse=False"): "every candidate that matches holds the same state: any one is the backup",
    ("x_indegree_structural", "citations < 0"): "0 citations: log1p(0) = 0 either way",
    ("x_should_skip_expansion", "spread >= 0"): "a spread of 0 cannot have max − min < 0",
    (
        "x_upsert",
        "weight=1.0 if weight is None and False else weight",
    ): "the Edge model's default is 1.0: a None weight is stored as 1.0 too",
    ("x_delete", "rowid = None"): "the fallback deletes the same row by node id (only slower)",
    ("x_delete", "_node_rowid(session, None)"): "the fallback deletes the same row by node id (only slower)",
    ("x_delete", "_node_rowid(db, None)"): "the fallback deletes the same row by node id (only slower)",
    ("x_list_rows", "text('nodes.rowid desc')"): "SQL keywords are case-insensitive",
    ("x_list_rows", "text('NODES.ROWID DESC')"): "SQL keywords and identifiers are case-insensitive",
    (
        "x__shadow_rows",
        "if row is None and row[0] != ids[index]",
    ): "a None row still falls back (TypeError, caught); an id read from vec0's own metadata table cannot differ",
    ("x_delete", "at_rowid = None"): "the fallback deletes the same row by node id (only slower)",
    ("x__busy_timeout_ms", "'CEREBRO_BUSY_TIMEOUT_MS', 'XXXX'"): "int('XXXX') fails as int('') does: the default",
    ("x_edges_touching", "chunks(list(ids))"): "any chunk size under SQLite's variable limit reads the same edges",
    ("x_edges_touching", "chunks(list(ids), 401)"): "any chunk size under SQLite's variable limit reads the same edges",
    ("x_knn", "if k < 0:"): "k = 0 asks sqlite-vec for nothing: no rows either way",
    ("x__rewrite_attempts", "encoding=None"): "job files are json.dumps output: ASCII, the same in any encoding",
    ("x__rewrite_attempts", ".read_text())"): "job files are json.dumps output: ASCII, the same in any encoding",
    ("x__rewrite_attempts", "json.dumps(data))"): "job files are json.dumps output: ASCII, the same in any encoding",
    ("x_try_write", "conn.execute('rollback')"): "SQL keywords are case-insensitive",
    ("x_optimize", "VALUES ('OPTIMIZE')"): "FTS5 command names are case-insensitive ('optimize' = 'OPTIMIZE')",
    ("x_optimize", "VALUES ('optimize')"): "FTS5 command names are case-insensitive ('optimize' = 'OPTIMIZE')",
    ("x__time", "len(value) == 20"): "skips the fast parser: the general one reads the storage layout the same",
    ("x__time", "value[11] == ' '"): "skips the fast parser: the general one reads the storage layout the same",
    ("x__time", "value[10] == 'XX XX'"): "skips the fast parser: the general one reads the storage layout the same",
    ("x_keyword_index_problem", "VALUES ('INTEGRITY-CHECK')"): "FTS5 reads its commands case-insensitively",
    ("x_nodes_by_id", "\" and +status = 'active'\""): "SQL keywords are case-insensitive",
    ("x__collect_garbage", "ensure_ascii=True"): "the gc log is read as JSON: escaped or not, the same values",
    ("x__collect_garbage", "clock.now())))"): "the gc log is read as JSON: escaped or not, the same values",
    ("x__scrub_records", "secrets.scrub(None,"): "scrub reads the handle only to warn, and this call does not warn",
    ("x__scrub_records", "hint=None"): "None is as false as False",
    ("x__scrub_records", "warn=None)"): "None is as false as False",
    ("x_spawn_worker", "os._exit(1)"): "nobody reads the intermediate process's status",
    ("x_spawn_worker", "os.waitpid(pid, 1)"): "the intermediate exits at once, the hook right after",
    ("x_read_payload", "or 'XX{}XX')"): "empty stdin: the garbled JSON is caught and read as {} all the same",
    ("x_done_dir", "/ 'XXdoneXX')"): "only done_dir() names the folder",
    ("x_done_dir", "/ 'DONE')"): "only done_dir() names the folder",
    ("x_enqueue", "tmp.unlink(missing_ok=False)"): "the temporary file always exists here (made above)",
    ("x_enqueue", "tmp.unlink(missing_ok=None)"): "the temporary file always exists here (made above)",
    ("", "wal=None"): "connect_raw tests `if wal`: None is as false as False",
    ("x_settle", "'XX-walXX'"): "a connection that has a WAL brain open keeps both -wal and -shm: either name sees it",
    ("x_settle", "'-WAL'"): "a connection that has a WAL brain open keeps both -wal and -shm: either name sees it",
    ("x_settle", "'XX-shmXX'"): "a connection that has a WAL brain open keeps both -wal and -shm: either name sees it",
    ("x_settle", "'-SHM'"): "a connection that has a WAL brain open keeps both -wal and -shm: either name sees it",
    ("", "encoding='UTF-8'"): "Python's codec names are case-insensitive",
    ("", "ensure_ascii=None"): "None is as false as False",
    ("", "encode('UTF-8')"): "Python's codec names are case-insensitive",
    ("x__claim_path", ".hexdigest()[:33]"): "any prefix of the digest names the claim as uniquely",
    ("x_sweep", "st_mtime <= cutoff"): "a claim exactly 7 days old to the float: wall-clock times never meet it",
    ("x_sweep", "unlink(missing_ok="): "a file listed a moment ago: missing only when another hook swept it",
    ("", "follow_symlinks=None"): "None is as false as False",
    ("x_run_job", "failed = None"): "None is as false as False",
    ("x__sweep_done", "st_mtime <= cutoff"): "a file exactly 7 days old to the float: wall-clock times never meet it",
    (
        "x__sweep_done",
        "entry.stat(follow_symlinks=None)",
    ): "is_file(follow_symlinks=False) let only regular files through",
    (
        "x__sweep_done",
        "entry.stat(follow_symlinks=True)",
    ): "is_file(follow_symlinks=False) let only regular files through",
    ("x__sweep_done", "unlink(missing_ok="): "a file listed a moment ago: missing only when another worker swept it",
    ("x_prime", "delivered = None"): "None is as false as False",
    ("x_prime", "claim(sid, None)"): "any name other than session_start's claims the notice once per session",
    ("x_prime", "claim(sid, 'XXno_brain_noticeXX')"): "any name other than session_start's claims the notice once",
    ("x_prime", "claim(sid, 'NO_BRAIN_NOTICE')"): "any name other than session_start's claims the notice once",
    ("x_prime", "json.dumps(NO_BRAIN_NOTICE"): "the notice is ASCII: escaping changes nothing",
    ("x_post_compact", "age > REARM_GRACE_SECONDS"): "a claim exactly 5.000… s old: wall-clock floats never meet it",
    ("x_mean_vector", "max(2, minimum)"): "the one caller asks for at least CENTERING_MIN (50) vectors",
    # The warm index (store/warm.py): float32 and the side matrix's growth are about memory and speed, not answers.
    ("x__unit_rows", ".astype(None, copy=False)"): "the quotient of float32 arrays is float32 already",
    ("x__unit_rows", "copy=None"): "astype's copy flag changes memory use only",
    ("x__unit_rows", "copy=True"): "astype's copy flag changes memory use only",
    ("x__unit_rows", ".astype(np.float32)"): "astype's copy flag changes memory use only",
    ("apply", "dtype=None"): "float64 rows are cast into the float32 matrix on assignment",
    ("apply", "np.asarray([vector]))"): "float64 rows are cast into the float32 matrix on assignment",
    ("apply", "self._matrix.shape[1]))"): "float64 rows are cast into the float32 matrix on assignment",
    ("apply", "max(17, 2 * extra)"): "the side matrix's initial capacity: growth policy only",
    ("apply", "max(16, 3 * extra)"): "the side matrix's growth factor: growth policy only",
    ("apply", "extra != len(self._extra)"): "growing on every add instead of when full: the same rows, more copying",
    ("__init__", "self._version: int | None = ''"): "read only once _matrix is set, and load sets both",
    ("__init__", "self._ids: list[str] = None"): "load sets it before any read",
    ("__init__", "self._extra_ids: list[str] = None"): "load sets it before any read",
    ("__init__", "self._extra: Any = ''"): "load sets it before any read",
    ("__init__", "self._int8 = None"): "load sets it before any read (and None is as false as False)",
    ("x__active", "cast(None, ())"): "typing.cast does nothing at run time",
    ("x_search", "subtype is ... and False else 4)"): "the first page's size: deeper pages follow until enough hits",
    ("x_search", "subtype is ... or True else 4)"): "the first page's size: deeper pages follow until enough hits",
    ("x_search", "(2 if subtype is ... else 4)"): "the first page's size: deeper pages follow until enough hits",
    ("x_search", "subtype is not ... else 4)"): "the first page's size: deeper pages follow until enough hits",
    ("x_search", "subtype is ... else 5)"): "the first page's size: deeper pages follow until enough hits",
    (
        "x_normalise_timestamps",
        "+            break",  # the tables' continue only (the others are indented deeper)
    ): "the history adds these tables in this order: a missing one is never followed by one that exists",
    (
        "x_normalise_timestamps",
        "+                break",  # the columns' continue (the unparseable value's is deeper still)
    ): "every column exists by the time py0001 runs (it follows v7): the check only guards a hand-made file",
    ("load", "stored = None"): "the virtual-table read gives the same vectors (only slower)",
    ("load", "stored = _shadow_rows(None)"): "the fast read fails and the virtual-table read gives the same vectors",
    ("load", ".reshape(len(rows), -2)"): "numpy takes any negative size as 'the rest'",
    ("x__shadow_rows", ".reshape(size, -2)"): "numpy takes any negative size as 'the rest'",
    ("knn", "dtype=np.int64)] = None"): "NaN, like -inf, sorts after every real similarity: removed rows never rank",
    ("dots", "strict=None"): "found and rows are built together: equal lengths by construction",
    ("dots", "strict=False"): "found and rows are built together: equal lengths by construction",
    ("dots", ".tolist()))"): "found and rows are built together: equal lengths by construction",
    ("dots", "np.asarray(vector, dtype=None)"): "a float64 query gives the same dot products to 1e-7",
    ("dots", "np.asarray(vector)"): "a float64 query gives the same dot products to 1e-7",
    ("knn", "np.asarray(vector, dtype=None)"): "a float64 query gives the same similarities to 1e-7",
    ("knn", "np.asarray(vector)"): "a float64 query gives the same similarities to 1e-7",
    ("knn", "if k < 0:"): "k is never negative here; for k = 0 the slice [:0] is empty either way",
    ("load", "matrix.astype(None, copy=False)"): "_unit_rows casts to float32 at the end: this cast only saves memory",
    ("load", "copy=None))"): "astype's copy flag changes memory use only",
    ("load", "matrix.astype(np.float32))"): "astype's copy flag changes memory use only",
    ("load", "copy=True))"): "astype's copy flag changes memory use only",
    ("_as_stored", "np.asarray(vector, dtype=None)"): "a float64 query gives the same similarities to 1e-7",
    ("_as_stored", "np.asarray(vector)"): "a float64 query gives the same similarities to 1e-7",
    (
        "load",
        "stored = _shadow_rows(None, dtype)",
    ): "the fast read fails and the virtual-table read gives the same vectors",
    (
        "x__unit_rows",
        "1.000000000001",
    ): "rows are int8 values (norm ≥ 1), unit vectors or zero: a floor of 1 + 1e-12 moves none by a float32 step",
    # Export (portability.py): table and column names handed to the SQL-building helper.
    ("", "'NODES'"): "table names are case-insensitive in SQL",
    ("", "'EDGES'"): "table names are case-insensitive in SQL",
    ("", "'NODES_ARCHIVE'"): "table names are case-insensitive in SQL",
    ("", "'SOURCE_ID, TARGET_ID, RELATION'"): "column names are case-insensitive in SQL",
    ("x_jsonl_lines", "'ID')"): "column names are case-insensitive in SQL",
    ("x_sql_statements", "'ID')"): "column names are case-insensitive in SQL",
    ("x__literal", "return 'null'"): "SQL keywords are case-insensitive",
    ("x_sql_statements", "strict=None"): "the rows are read with exactly these columns: equal lengths by construction",
    ("x_sql_statements", "strict=False"): "the rows are read with exactly these columns: equal lengths by construction",
    (
        "x_sql_statements",
        "zip(columns, row)",
    ): "the rows are read with exactly these columns: equal lengths by construction",
    ("", "'CREATED_AT, ID'"): "column names are case-insensitive in SQL",
    ("x_bundle", "'ID')"): "column names are case-insensitive in SQL",
    # (Run of 2026-12-01 at cddea06: these were methods of LifecycleMixin; the code has since been simplified.)
    ("record_outcome", "outcomes.get(key, None) or 0"): "a missing count is None either way, and `or 0` follows",
    ("record_outcome", "outcomes.get(key) or 0"): "a missing count is None either way, and `or 0` follows",
    (
        "forget",
        "if apply and False else self._read",
    ): "a deferred transaction that writes takes the lock at its first write (a refused upgrade is retried whole)",
    (
        "x_forget",
        "if apply and False else h.read",
    ): "a deferred transaction that writes takes the lock at its first write (a refused upgrade is retried whole)",
    ("x__record", "strict=None"): "the rows are read with exactly these columns: equal lengths by construction",
    ("x__record", "strict=False"): "the rows are read with exactly these columns: equal lengths by construction",
    ("x__record", "zip(columns, row)"): "the rows are read with exactly these columns: equal lengths by construction",
    ("x_import_file", "strict=None"): "h.embed returns one vector per text or raises: equal lengths",
    ("x_import_file", "strict=False"): "h.embed returns one vector per text or raises: equal lengths",
    ("x_import_file", "h.embed([n['content'] for n in batch])):"): "h.embed returns one vector per text or raises",
    (
        "x_import_file",
        "fresh = None",
    ): "fresh only skips a lookup: upsert without it deletes nothing and inserts the same",
    (
        "x_import_file",
        "vectors[node['id']])",
    ): "fresh only skips a lookup: upsert without it deletes nothing and inserts the same",
    (
        "x_import_file",
        "fresh=None)",
    ): "fresh only skips a lookup: upsert without it deletes nothing and inserts the same",
    ("x_read", "document = ''"): "only a dict is read as a bundle: '' and None both fall through to records",
    ("x_read", "stripped.split('\\n')[0]"): "the first line is the first piece however many pieces are split",
    ("x_read", "stripped.split('\\n', 2)[0]"): "the first line is the first piece however many pieces are split",
    ("x_read", "encoding=None"): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    # Text files cerebro writes for itself name UTF-8; leaving it to the locale differs only under a non-UTF-8 locale,
    # which Python's C-locale coercion (PEP 538) rules out unless one is installed and chosen; the test machines
    # have none to choose.
    ("x__log", "encoding=None"): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    ("x__log", "os.fdopen(fd, 'a') as handle"): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    ("x__read_job", "encoding=None"): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    ("x_enqueue", "encoding=None"): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    ("x_enqueue", "os.fdopen(fd, 'w') as handle"): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    ("x_export_session_env", "encoding=None"): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    (
        "x_export_session_env",
        "open(target, 'a') as handle",
    ): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    ("x_gc_tail", "encoding=None"): "only a non-UTF-8 locale would show it; tests run under UTF-8",
    (
        "x__root",
        "'XXaftercareXX'",
    ): "the jobs folder's name is private to one cerebro: everything reaches it through _root",
    ("x__root", "'AFTERCARE'"): "the jobs folder's name is private to one cerebro: everything reaches it through _root",
    # setup_connection switches a brain to WAL only when it is not: one that already is would take the PRAGMA as a
    # no-op (no write), so asking more often than needed changes nothing a test or a user can see.
    ("x_setup_connection", "mode = None"): "setting WAL on a brain already in WAL is a no-op",
    ("x_setup_connection", "str(mode).upper() != 'wal'"): "setting WAL on a brain already in WAL is a no-op",
    ("x_setup_connection", "str(None).lower() != 'wal'"): "setting WAL on a brain already in WAL is a no-op",
    ("x_setup_connection", "!= 'XXwalXX'"): "setting WAL on a brain already in WAL is a no-op",
    ("x_setup_connection", "!= 'WAL'"): "setting WAL on a brain already in WAL is a no-op",
    # framing._fields over the items it is given (ScoredNode, Node, InboxCandidate, dict):
    ("x__fields", "hasattr(item, 'node') or hasattr(item, 'score')"): "only a ScoredNode has either attribute",
    ("x__fields", "getattr(item, 'store'), item.node"): "a ScoredNode always has its store",
    (
        "x__fields",
        "getattr(item, key, None)",
    ): "the defaults asked of objects are for attributes Node and InboxCandidate "
    "always have (id, content); the others default to None anyway",
    ("x__fields", "not hasattr(None, 'status')"): "a status is None only on an inbox candidate, which has no status",
    (
        "x__fields",
        "not hasattr(item, 'XXstatusXX')",
    ): "a status is None only on an inbox candidate, which has no status",
    ("x__fields", "not hasattr(item, 'STATUS')"): "a status is None only on an inbox candidate, which has no status",
    # After a cut the budget is full (the cut is sized to it): no later block, at 20+ tokens, fits whatever this
    # last cost's rounding. (The same text on the line before the cut is killed by test_the_budget_boundary_is_exact.)
    ("x_frame_memories", "cost = len(text) // CHARS_PER_TOKEN - 1"): "after a cut nothing else fits the budget",
    ("x_frame_memories", "cost = len(text) / CHARS_PER_TOKEN + 1"): "after a cut nothing else fits the budget",
    ("", "dims > 1"): "dims is 0 (no provider) or a model's width (32 and up): never 1",
    ("", "'do nothing'"): "SQL keywords are case-insensitive",
    (
        "",
        "'id', [f for f in fields if f != 'XXidXX']",
    ): "updating id to excluded.id on its own conflict changes nothing",
    ("", "'id', [f for f in fields if f != 'ID']"): "updating id to excluded.id on its own conflict changes nothing",
    ("", "_upsert('nodes', fields, 'ID'"): "column names are case-insensitive in SQL",
    ("", "_upsert('nodes_archive', fields, 'ID'"): "column names are case-insensitive in SQL",
    (
        "x__id",
        "_ID.match(value or 'XXXX')",
    ): "a missing id was refused just before; '' and 'XXXX' both fail the pattern",
    (
        "x_copy",
        "target.unlink(missing_ok=",
    ): "the file was created just before: it exists when a failed copy removes it",
    (
        "x_copy",
        "os.O_WRONLY)",
    ): "the copy is chmod 0600 as soon as it is written; the mode at creation only narrows a window no test sees",
    (
        "x_adopt_for_alembic_cli",
        "version > 1",
    ): "a v1 brain replayed from base ends the same: v1's revision creates only what is missing",
    # recall.py: every vector of a brain has the model's width (the store refuses another), so zip's
    # strictness never decides anything; the lane assigns ``usable`` on its first pass before any read.
    ("x__shift", "strict=None"): "vectors of one model: equal lengths by construction",
    ("x__shift", "strict=False"): "vectors of one model: equal lengths by construction",
    ("x__shift", "zip(vector, direction)"): "vectors of one model: equal lengths by construction",
    ("x_feedback", "strict=None"): "vectors of one model: equal lengths by construction",
    ("x_feedback", "strict=False"): "vectors of one model: equal lengths by construction",
    ("x_feedback", "zip(*vectors)"): "vectors of one model: equal lengths by construction",
    ("x_vector_lane", "usable: list[tuple[str, float]] = None"): "the first pass (there always is one) assigns it",
    ("x_recall", "replace(options, threshold=-2.0)"): "a cosine is never below -1: both let every candidate through",
    ("x_recall", "to_search.get(c.node.id, None)"): "every seed came from the vector index: its vector is there",
    ("x_recall", "to_search.get(c.node.id, -2.0)"): "every seed came from the vector index: the default is never used",
    ("x_recall", "mean is not None) or seeds:"): "uncentered and unexpanded, the raw similarity is the similarity",
    ("x_recall", "keyword_ids[:width], active_only=None)"): "the keyword lane returns active memories only",
    ("x_recall", "keyword_ids[:width], active_only=False)"): "the keyword lane returns active memories only",
    ("x_recall", "nodes_by_id(conn, keyword_ids[:width])"): "the keyword lane returns active memories only",
    ("x_recall", "if i not in by_id], active_only=None)"): "the keyword lane returns active memories only",
    ("x_recall", "if i not in by_id], active_only=False)"): "the keyword lane returns active memories only",
    ("x_recall", "[i for i in keyword_ids if i not in by_id])"): "the keyword lane returns active memories only",
    ("x__limit", "options.limit > 0 or True"): "the API refuses a limit below 1 before the pipeline runs",
    ("x__limit", "options.limit >= 0"): "the API refuses a limit below 1 before the pipeline runs",
    ("x__limit", "else 21"): "the API refuses a limit below 1 before the pipeline runs",
    ("x_recall", "k=options.rrf_k)"): "no setting changes the lane weights: (1, 1), rrf's default",
    ("x_recall", "k=options.rrf_k, weights=None)"): "no setting changes the lane weights: (1, 1), rrf's default",
    ("x_recall", "], weights=options.lane_weights)"): "no setting changes rrf_k: the options carry scoring.RRF_K",
    ("x_recall", "options.feedback_docs >= 0"): "0 documents read no vectors: feedback() returns the query as is",
    ("x_recall", "options.feedback_weight >= 0"): "a weight of 0 moves a unit query by nothing",
    ("x_search", "limit < 0"): "LIMIT 0 returns no rows: the early return only saves the query",
    ("x_search", "match is None and limit <= 0"): "MATCH NULL and LIMIT 0 both return no rows",
    ("x_search", "cast(None, ())"): "typing.cast does nothing at run time",
}

# SQL text: a statement, or a fragment appended to one (" AND …", " LIMIT …"), written in upper case — the
# code's messages start in lower case, so a message is never taken for SQL.
# SQL text: a statement, or a clause appended to one. A bare " OR " is not SQL: FTS5's MATCH operators are
# case-sensitive (`"a" or "b"` searches for the word "or"), so its case is never equivalent.
_SQL = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|PRAGMA|ALTER|WITH|BEGIN|COMMIT|WHERE|FROM|JOIN|LIMIT"
    r"|ORDER BY|GROUP BY)\b"
    r"|^\s*(AND|OR)\s+\(?[\w.]+\s*(=|<|>|IS\b|IN\b|LIKE\b)"
)
_QUOTED = re.compile(r"'[^']*'")
# mutmut's exit codes (mutmut/stats.py: status_by_exit_code); anything else it calls "suspicious".
STATUS = {
    0: "survived",
    1: "killed",
    3: "killed",
    5: "no tests",
    33: "no tests",
    34: "skipped",
    35: "suspicious",
    36: "timeout",
    37: "type error",
    -24: "timeout",
    24: "timeout",
    152: "timeout",
    255: "timeout",
    -11: "segfault",
    -9: "segfault",
}


def _functions(source: str) -> dict[str, ast.AST]:
    tree = ast.parse(source)
    return {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}


def _strings(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _sql_case_only(original: ast.AST, mutant: ast.AST) -> bool:
    """True when the two functions differ only in the letter case of SQL text outside quoted literals."""
    if ast.dump(_blank_strings(original)) != ast.dump(_blank_strings(mutant)):
        return False
    changed = [(a, b) for a, b in zip(_strings(original), _strings(mutant), strict=True) if a != b]
    return bool(changed) and all(
        a.lower() == b.lower() and _SQL.search(a) and _QUOTED.findall(a) == _QUOTED.findall(b) for a, b in changed
    )


def _blank_strings(node: ast.AST) -> ast.AST:
    copy = ast.parse(ast.unparse(node))
    for n in ast.walk(copy):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            n.value = ""
    for n in ast.walk(copy):
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef):
            n.name = ""
            break
    return copy


def _diff(original: ast.AST, mutant: ast.AST) -> list[str]:
    a, b = ast.unparse(original).splitlines()[1:], ast.unparse(mutant).splitlines()[1:]
    return [
        line
        for line in difflib.unified_diff(a, b, lineterm="", n=0)
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]


def report(mutants: Path) -> tuple[dict[str, Counter], dict[str, list[tuple[str, list[str], str]]]]:
    counts, survivors, _pending = _read(mutants)
    return counts, survivors


def worth_running(mutants: Path, *, timeouts: bool = False) -> list[str]:
    """Mutants not yet run that are not equivalent: what a resumed run needs to run. ``timeouts``: those that
    timed out too (to run them again under a larger time limit)."""
    pending = _read(mutants)[2]
    if timeouts:
        pending += [key for key, code in _results(mutants) if code is not None and STATUS.get(code) == "timeout"]
    return pending


def _results(mutants: Path) -> list[tuple[str, int | None]]:
    found: list[tuple[str, int | None]] = []
    for meta_file in sorted(mutants.rglob("*.py.meta")):
        try:
            found += json.loads(meta_file.read_text())["exit_code_by_key"].items()
        except (ValueError, KeyError):
            continue
    return found


def _read(mutants: Path) -> tuple[dict[str, Counter], dict[str, list[tuple[str, list[str], str]]], list[str]]:
    pending: list[str] = []
    counts: dict[str, Counter] = defaultdict(Counter)
    survivors: dict[str, list[tuple[str, list[str], str]]] = defaultdict(list)
    for meta_file in sorted(mutants.rglob("*.py.meta")):
        source_file = meta_file.with_suffix("")
        module = ".".join(source_file.relative_to(mutants).with_suffix("").parts)
        try:
            results = json.loads(meta_file.read_text())["exit_code_by_key"]
        except (ValueError, KeyError):  # a run stopped while mutmut was writing this file
            print(f"skipped {meta_file}: unreadable (a stopped run?)", file=sys.stderr)
            continue
        functions = _functions(source_file.read_text())
        for key, code in sorted(results.items()):
            name = key[len(module) + 1 :]
            base = name.rsplit("__mutmut_", 1)[0]
            status = "not run" if code is None else STATUS.get(code, "suspicious")
            if status in ("survived", "not run"):
                original, mutant = functions[f"{base}__mutmut_orig"], functions[name]
                diff = _diff(original, mutant)
                reason = next(
                    (
                        why
                        for (fn, text), why in EQUIVALENT.items()
                        if fn in ("", base.split("ǁ")[-1]) and any(text in line for line in diff if line[0] == "+")
                    ),
                    None,
                )
                if reason is None and _sql_case_only(original, mutant):
                    reason = "letter case inside SQL (keywords and identifiers are case-insensitive)"
                if reason is not None:
                    status = "equivalent"
                elif status == "not run":
                    pending.append(key)
                if status != "not run":
                    survivors[module].append((name, diff, reason or ""))
            counts[module][status] += 1
    return counts, survivors, pending


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    mutants = Path(args[0] if args else "mutants")
    if "--worth-running" in argv:
        print("\n".join(worth_running(mutants, timeouts="--with-timeouts" in argv)))
        return 0
    counts, survivors = report(mutants)
    if "--survivor-keys" in argv:  # to run them again, after tests were written for them
        keys = [f"{m}.{name}" for m, items in sorted(survivors.items()) for name, _, why in items if not why]
        print("\n".join(keys))
        return 0
    total: Counter = Counter()
    print(
        "| module | mutants | killed | of them by timeout | survived | equivalent | no tests | not run | "
        "killed of non-equivalent |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for module, c in sorted(counts.items()):
        total.update(c)
        print(_row(module, c))
    print(_row("**all**", total))
    if "--survivors" in argv:
        for _module, items in sorted(survivors.items()):
            for name, diff, reason in items:
                print(f"\n{name}" + (f"  [equivalent: {reason}]" if reason else ""))
                for line in diff:
                    print("    " + line)
    return 0


def _row(module: str, c: Counter) -> str:
    killed = c["killed"] + c["timeout"]
    scored = sum(c.values()) - c["equivalent"] - c["not run"]
    score = f"{100 * killed / scored:.1f} %" if scored else "—"
    name = module if module.startswith("*") else f"`{module}`"
    return (
        f"| {name} | {sum(c.values())} | {killed} | {c['timeout']} | {c['survived']} | {c['equivalent']} | "
        f"{c['no tests']} | {c['not run']} | {score} |"
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
