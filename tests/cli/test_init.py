"""cerebro init: where the brain goes, its permissions, idempotence, --global, --force, bad providers."""

from __future__ import annotations

import sqlite3
import stat

from cerebro import Brain, paths

from .helpers import assert_one_line_error, ok

INIT_KEYS = {
    "path",
    "created",
    "embedding_provider",
    "embedding_model",
    "embedding_dimensions",
    "backup",
    "is_global",
    "integration",
}


def mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_init_creates_private_brain_at_project_path(cli, project, isolated_home):
    expected = paths.project_brain_path(project)
    assert not expected.exists()

    result = ok(cli("init"))

    assert expected.exists()
    assert expected.parent == isolated_home / "projects"
    assert mode(expected) == 0o600
    assert mode(isolated_home / "projects") == 0o700
    assert result.stdout.splitlines()[0] == f"Brain initialized at {expected}"
    assert "Embeddings: local (all-MiniLM-L6-v2-onnx-int8-dq7, 384 dims)" in result.stdout
    # The library opens what the CLI created.
    with Brain.open(expected) as brain:
        stats = brain.stats()
    assert stats.total_nodes == 0
    assert stats.schema_version == 7


def test_init_json_shape(cli, project):
    data = ok(cli("init", "--format", "json")).json()
    assert set(data) == INIT_KEYS
    assert data == {
        "path": str(paths.project_brain_path(project)),
        "created": True,
        "embedding_provider": "local",
        "embedding_model": "all-MiniLM-L6-v2-onnx-int8-dq7",
        "embedding_dimensions": 384,
        "backup": None,
        "is_global": False,
        "integration": {
            "settings": "created",
            "settings_file": ".claude/settings.json",
            "skills_written": 5,
            "skills_removed": 0,
            "claudemd": "created",
            "claudemd_file": "CLAUDE.md",
            "plugin": None,
            "warnings": [],
            "project": str(project),
            "marketplace": str(paths.home() / "claude-plugin"),
        },
    }


def test_second_init_is_idempotent(cli, project, brain_snapshot):
    ok(cli("init"))
    target = paths.project_brain_path(project)
    node_id = ok(cli("add", "survives a re-init")).stdout.strip()
    before = brain_snapshot(target)

    again = ok(cli("init"))
    assert again.stdout.splitlines()[0] == f"Brain already initialized at {target}"
    data = ok(cli("init", "--format", "json")).json()
    assert data["created"] is False
    assert data["backup"] is None

    assert brain_snapshot(target) == before
    with Brain.open(target) as brain:
        assert brain.get(node_id).node.content == "survives a re-init"


def test_init_global_creates_global_brain(cli, project, isolated_home):
    result = ok(cli("init", "--global", "--format", "json"))
    data = result.json()
    global_path = isolated_home / "global.sqlite"
    assert global_path.exists()
    assert mode(global_path) == 0o600
    assert data["path"] == str(global_path)
    assert data["is_global"] is True
    assert data["created"] is True
    # The project brain was not created.
    assert not paths.project_brain_path(project).exists()

    md = ok(cli("init", "--global"))
    assert md.stdout.startswith(f"Global brain already initialized at {global_path}")


def test_init_force_takes_backup(cli, project, isolated_home, brain_snapshot):
    ok(cli("init"))
    target = paths.project_brain_path(project)
    node_id = ok(cli("add", "kept through --force")).stdout.strip()

    data = ok(cli("init", "--force", "--format", "json")).json()

    backups = isolated_home / "backups"
    assert backups.is_dir()
    assert mode(backups) == 0o700
    files = sorted(backups.glob("*.sqlite"))
    assert len(files) == 1
    assert data["backup"] == str(files[0])
    assert mode(files[0]) == 0o600
    assert data["created"] is False
    # The backup is a consistent brain holding the memory; the memory survives in the brain too.
    assert brain_snapshot(files[0])["nodes"] == brain_snapshot(target)["nodes"]
    with Brain.open(target) as brain:
        assert brain.get(node_id).node.content == "kept through --force"

    md = ok(cli("init", "--force"))
    assert md.stdout.splitlines()[0].startswith(f"Brain re-initialized at {target} (backup: ")
    assert len(list(backups.glob("*.sqlite"))) == 2


def test_init_skip_integration_is_accepted(cli, project):
    ok(cli("init", "--skip-integration"))
    assert paths.project_brain_path(project).exists()
    assert not (project / ".claude").exists()


def test_init_unknown_provider_fails_without_creating_anything(cli, project, isolated_home):
    result = cli("init", "--embed-provider", "bogus")
    assert_one_line_error(result, "bogus", exit_code=2)
    assert not paths.project_brain_path(project).exists()
    assert not (isolated_home / "projects").exists() or not any((isolated_home / "projects").iterdir())


def test_init_provider_none_refuses_dimensions(cli, project):
    assert_one_line_error(cli("init", "--embed-dims", "8"), exit_code=2)
    assert not paths.project_brain_path(project).exists()


def test_init_force_without_existing_brain_creates_it(cli, project, isolated_home):
    data = ok(cli("init", "--force", "--format", "json")).json()
    assert data["created"] is True
    assert data["backup"] is None
    assert not (isolated_home / "backups").exists() or not any((isolated_home / "backups").glob("*.sqlite"))


def test_init_global_and_project_brains_are_separate(cli, project, isolated_home):
    ok(cli("init"))
    ok(cli("init", "--global"))
    node_id = ok(cli("add", "project only")).stdout.strip()
    with Brain.open(isolated_home / "global.sqlite") as brain:
        assert brain.stats().total_nodes == 0
    with Brain.open(paths.project_brain_path(project)) as brain:
        assert brain.get(node_id).node.content == "project only"


def test_init_creates_home_private_and_wal_is_private(cli, project, isolated_home):
    assert not isolated_home.exists()
    ok(cli("init"))
    assert mode(isolated_home) == 0o700
    target = paths.project_brain_path(project)
    with Brain.open(target) as brain:
        brain.add("makes the WAL exist")
        wal = target.with_name(target.name + "-wal")
        assert wal.exists()
        assert mode(wal) == 0o600


def test_init_tightens_projects_but_leaves_a_shared_home(cli, project, isolated_home):
    (isolated_home / "projects").mkdir(parents=True)
    isolated_home.chmod(0o755)
    (isolated_home / "projects").chmod(0o755)
    ok(cli("init"))
    assert mode(isolated_home / "projects") == 0o700
    assert mode(isolated_home) == 0o755


def test_init_for_a_folder_that_does_not_exist_fails_and_creates_nothing(cli, tmp_path, isolated_home):
    """Issue 16: `init -p /no/such/dir` used to succeed and leave an orphan brain nothing would ever find."""
    before = sorted(p.relative_to(isolated_home) for p in isolated_home.rglob("*")) if isolated_home.exists() else []
    result = cli("init", "--skip-integration", project_dir=tmp_path / "no" / "such" / "dir")
    assert result.exit_code == 2 and "does not exist" in result.stderr, result
    after = sorted(p.relative_to(isolated_home) for p in isolated_home.rglob("*")) if isolated_home.exists() else []
    assert after == before
    assert not (tmp_path / "no").exists()


def test_an_interrupted_init_is_finished_by_the_next_init_not_by_a_read(cli, project, isolated_home):
    """Issue 17: a file an init killed early (no tables) became a brain with provider none at the next read,
    and re-running init said "already initialized" with embeddings silently off."""
    import sqlean.dbapi2 as sqlean

    brain = paths.project_brain_path(project)
    paths.create_private_file(brain)
    conn = sqlean.connect(str(brain))
    conn.execute("PRAGMA journal_mode=wal")  # what the killed init got to: a database, not a table in it
    conn.close()
    result = cli("list")
    assert result.exit_code == 4 and "interrupted init" in result.stderr
    conn = sqlean.connect(str(brain))
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone() == (0,)  # the read wrote nothing
    conn.close()
    made = cli("init", "--skip-integration", "--embed-provider", "fake", "--format", "json")
    assert made.exit_code == 0 and made.json()["created"] is True
    assert cli("stats", "--format", "json").json()["embedding_provider"] == "fake"


def test_an_init_killed_before_its_settings_is_finished_with_the_provider_asked(cli, project):
    assert cli("init", "--skip-integration", "--embed-provider", "none").exit_code == 0
    conn = sqlite3.connect(paths.project_brain_path(project))
    conn.execute("DELETE FROM schema_meta WHERE key LIKE 'embedding_%'")
    conn.commit()
    conn.close()
    assert cli("init", "--skip-integration", "--embed-provider", "fake").exit_code == 0
    assert cli("stats", "--format", "json").json()["embedding_provider"] == "fake"


def test_too_many_dimensions_are_refused_before_anything_is_made(cli, project, isolated_home):
    result = cli("init", "--skip-integration", "--embed-provider", "ollama", "--embed-dims", "100000")
    assert result.exit_code == 2 and "8192" in result.stderr
    assert not paths.project_brain_path(project).exists()
