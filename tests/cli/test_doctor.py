"""cerebro doctor: each check seen passing on a good setup and warning/failing on a setup built to break it.

Real CLI (in-process, or ``python -m cerebro`` where PATH itself is under test), real brains in temp folders.
No wall-clock thresholds: the latency check is forced to warn/fail through its budgets, never by timing.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cerebro import Brain, doctor, paths
from cerebro.integration.claude_code import templates

from .helpers import ok, raw_exec, raw_rows

SCRIPTS = str(Path(sys.executable).parent)  # this venv's bin/, holding the `cerebro` under test
UPSTREAM_GC = (  # what upstream Go cerebro's scaffold wired at SessionEnd
    'cerebro gc --threshold 0.01 --log "$CLAUDE_PROJECT_DIR/.cerebro-gc.log" -p "$CLAUDE_PROJECT_DIR" 2>/dev/null; true'
)


@pytest.fixture(autouse=True)
def user_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private HOME (~/.claude is read by the checks) and this venv's cerebro first on PATH."""
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{SCRIPTS}{os.pathsep}{os.environ.get('PATH', '')}")
    for name in ("CEREBRO_OLLAMA_URL", "OLLAMA_HOST"):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def wired(cli, project: Path) -> Path:
    """`cerebro init --embed-provider none`: brain, hooks, skills, CLAUDE.md."""
    result = cli("init", "--embed-provider", "none")
    assert result.exit_code == 0, result
    return project


def run_doctor(cli, *args: str):
    """`cerebro doctor --format json --no-latency` → (result, {name: check})."""
    result = cli("doctor", "--format", "json", "--no-latency", *args)
    data = json.loads(result.stdout)
    return result, {c["name"]: c for c in data["checks"]}


def settings_path(project: Path) -> Path:
    return project / ".claude" / "settings.json"


def edit_settings(project: Path, change) -> None:
    path = settings_path(project)
    data = json.loads(path.read_text()) if path.exists() else {}
    change(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2))


def add_memories(cli, *contents: str) -> list[str]:
    ids = []
    for content in contents:
        result = cli("add", content)
        assert result.exit_code == 0, result
        ids.append(result.stdout.strip())
    return ids


def listing(*roots: Path) -> dict[str, tuple]:
    """Every file and folder under the roots: type, size, mode, mtime and (files) a content digest."""
    seen: dict[str, tuple] = {}
    for root in roots:
        for path in [root, *sorted(root.rglob("*"))]:
            info = path.lstat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
            seen[str(path)] = (path.is_dir(), info.st_size, info.st_mode, info.st_mtime_ns, digest)
    return seen


def backdate(*roots: Path) -> None:
    """Every file and folder under the roots one hour into the past (symlinks themselves left alone)."""
    past = time.time() - 3600
    for root in roots:
        for path in [*sorted(root.rglob("*"), reverse=True), root]:  # children first: a folder's mtime last
            if not path.is_symlink():
                os.utime(path, (past, past))


# --------------------------------------------------------------------------- the whole report


def test_good_setup_passes_every_check_and_exits_0(cli, wired: Path) -> None:
    result, checks = run_doctor(cli)
    assert result.exit_code == 0, result
    assert result.stderr == ""
    assert list(checks) == list(doctor.CHECK_NAMES)
    statuses = {name: c["status"] for name, c in checks.items()}
    assert statuses == {**dict.fromkeys(doctor.CHECK_NAMES, "ok"), "hook-latency": "skip"}
    assert checks["cli-on-path"]["path"] == str(Path(SCRIPTS) / "cerebro")
    assert checks["hooks"]["routes"] == ["init (.claude/settings.json)"]
    assert checks["embedder"]["detail"] == "provider none: keyword + graph recall only"
    assert checks["brain"]["revision"] and checks["brain"]["fts_integrity"] == "ok"
    assert all(c["fix"] is None for c in checks.values())


def test_json_shape(cli, project: Path) -> None:
    result = cli("doctor", "--format", "json", "--no-latency")  # no brain, no hooks: a fail and a warning
    data = json.loads(result.stdout)
    assert set(data) == {"ok", "project", "checks"}
    assert data["ok"] is False and data["project"] == str(project)
    assert [c["name"] for c in data["checks"]] == list(doctor.CHECK_NAMES)
    for check in data["checks"]:
        assert {"name", "status", "detail", "fix"} <= set(check)
        assert check["status"] in ("ok", "warn", "fail", "skip")
        assert isinstance(check["detail"], str) and check["detail"] and "\n" not in check["detail"]
        if check["status"] in ("warn", "fail"):
            assert isinstance(check["fix"], str) and check["fix"], check
        else:
            assert check["fix"] is None, check


def test_markdown_report_one_line_per_check_then_fixes(cli, project: Path) -> None:
    result = cli("doctor", "--no-latency")
    assert result.exit_code == 12
    lines = result.stdout.splitlines()
    marks = {line.split()[1]: line.split()[0] for line in lines if line[:1] in "✓!✗-" and len(line.split()) > 1}
    assert list(marks) == list(doctor.CHECK_NAMES)
    assert marks["brain"] == "✗" and marks["hooks"] == "!" and marks["hook-latency"] == "-"
    assert marks["cli-on-path"] == "✓"
    brain_at = next(i for i, line in enumerate(lines) if line.startswith("✗ brain"))
    assert lines[brain_at + 1].split() == ["fix:", "cerebro", "init", "-p", str(project)]
    assert lines[-1] == "1 failing, 1 with warnings."


def test_a_failing_check_exits_12_with_one_stderr_line(cli, project: Path) -> None:
    result, checks = run_doctor(cli)
    assert checks["brain"]["status"] == "fail"
    assert result.exit_code == 12
    error = {"code": 12, "name": "checks_failed", "message": "doctor: 1 check failed (brain)"}
    assert [json.loads(line) for line in result.stderr.splitlines()] == [{"error": error}]  # --format json


def test_warnings_alone_exit_0(cli, project: Path) -> None:
    assert cli("init", "--skip-integration", "--embed-provider", "none").exit_code == 0
    result, checks = run_doctor(cli)
    assert checks["hooks"]["status"] == "warn"
    assert {c["status"] for c in checks.values()} == {"ok", "warn", "skip"}
    assert result.exit_code == 0 and result.stderr == ""


def test_doctor_writes_nothing(cli, project: Path, isolated_home: Path, user_env: Path) -> None:
    """Default provider (local), memories, a transcript and a queued job: the full run, latency included,
    leaves CEREBRO_HOME, the project and HOME as they were — down to directory mtimes."""
    from cerebro.integration.claude_code import aftercare
    from cerebro.metrics.ingest import session_dir_candidates

    assert cli("init").exit_code == 0
    add_memories(cli, "the deploy script lives in ops/deploy.sh", "we chose SQLite for the brain")
    transcripts = session_dir_candidates(project)[0]
    transcripts.mkdir(parents=True)
    (transcripts / "s.jsonl").write_text("{}\n")
    aftercare.enqueue(project, "a-session", None)
    backdate(isolated_home, project, user_env)  # a write by doctor now moves an mtime, even within one clock tick
    before = listing(isolated_home, project, user_env)
    result = cli("doctor", "--format", "json")
    assert [c["name"] for c in json.loads(result.stdout)["checks"]] == list(doctor.CHECK_NAMES)
    assert listing(isolated_home, project, user_env) == before
    assert not (isolated_home / "session-state").exists()  # the hooks timed claimed sessions elsewhere


def test_doctor_leaves_a_crashed_writers_log_as_it_was_and_reads_what_it_holds(cli, wired: Path) -> None:
    """A writer killed with its -wal still holding memories: opening the original to copy it folded the log into
    the file and deleted it (no memory lost, but a doctor that writes). The log is copied as bytes and recovered in
    the copy, so its memories are counted too."""
    brain = paths.project_brain_path(wired)
    keeper = Brain.open(brain)
    keeper.handle.raw.execute("PRAGMA wal_autocheckpoint = 0")
    for n in range(5):
        keeper.add(f"written before the crash {n}")
    wal = Path(f"{brain}-wal")
    crashed = {suffix: Path(f"{brain}{suffix}").read_bytes() for suffix in ("", "-wal")}
    keeper.close()
    for suffix, data in crashed.items():  # as the files were when the writer died: memories still in the -wal
        Path(f"{brain}{suffix}").write_bytes(data)
    Path(f"{brain}-shm").unlink(missing_ok=True)
    before = listing(brain.parent)
    check = run_doctor(cli)[1]["brain"]
    assert listing(brain.parent) == before and wal.exists()
    assert check["active_nodes"] == 5


# --------------------------------------------------------------------------- 1. cli-on-path


def test_cerebro_missing_from_path_fails(project: Path, isolated_home: Path, user_env: Path) -> None:
    assert "cerebro" not in os.listdir("/usr/bin") + os.listdir("/bin")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(user_env), "CEREBRO_HOME": str(isolated_home)}
    ran = subprocess.run(
        [sys.executable, "-m", "cerebro", "doctor", "--format", "json", "-p", str(project)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    checks = {c["name"]: c for c in json.loads(ran.stdout)["checks"]}
    assert checks["cli-on-path"]["status"] == "fail", checks["cli-on-path"]
    assert checks["cli-on-path"]["path"] is None
    assert checks["cli-on-path"]["fix"] == f'export PATH={SCRIPTS}:"$PATH"'  # this install, put on PATH
    assert "uv tool install" in checks["cli-on-path"]["detail"]
    assert checks["hook-latency"]["status"] == "skip"  # nothing to time: hooks cannot run cerebro
    assert ran.returncode == 12
    assert json.loads(ran.stderr.splitlines()[-1])["error"]["message"].startswith("doctor: ")


def test_another_cerebro_version_on_path_warns(cli, wired: Path, tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "other-bin"
    other.mkdir()
    (other / "cerebro").write_text("#!/bin/sh\necho 0.0.1\n")
    (other / "cerebro").chmod(0o755)
    monkeypatch.setenv("PATH", f"{other}{os.pathsep}{os.environ['PATH']}")
    result, checks = run_doctor(cli)
    check = checks["cli-on-path"]
    assert (check["status"], check["version"], check["path"]) == ("warn", "0.0.1", str(other / "cerebro"))
    assert "not this cerebro" in check["detail"] and check["fix"]
    assert result.exit_code == 0


# --------------------------------------------------------------------------- 2. hooks


def test_no_hooks_warns_with_init_as_fix(cli, project: Path) -> None:
    assert cli("init", "--skip-integration", "--embed-provider", "none").exit_code == 0
    _, checks = run_doctor(cli)
    assert checks["hooks"]["status"] == "warn"
    assert checks["hooks"]["routes"] == []
    assert checks["hooks"]["fix"] == f"cerebro init -p {project}"


def test_plugin_beside_init_warns_and_init_force_fixes_it(cli, wired: Path) -> None:
    edit_settings(wired, lambda data: data.__setitem__("enabledPlugins", {"cerebro@cerebro": True}))
    _, checks = run_doctor(cli)
    hooks = checks["hooks"]
    assert hooks["status"] == "warn", hooks
    assert hooks["plugin"] == "cerebro@cerebro"
    assert hooks["routes"] == ["init (.claude/settings.json)", "plugin (cerebro@cerebro)"]
    assert "both the cerebro@cerebro plugin and init's hooks" in hooks["detail"]
    assert "skills doubled" in hooks["detail"] and hooks["init_skills"] == list(templates.SKILLS)
    assert hooks["fix"] == f"cerebro init --force -p {wired}"
    assert cli("init", "--force").exit_code == 0  # the fix, as printed
    _, checks = run_doctor(cli)
    assert (checks["hooks"]["status"], checks["hooks"]["routes"]) == ("ok", ["plugin (cerebro@cerebro)"])


def test_an_edited_skill_beside_the_plugin_is_named_for_removal(cli, wired: Path) -> None:
    edited = wired / ".claude" / "skills" / "recall" / "SKILL.md"
    edited.write_text(edited.read_text() + "\nMy own note.\n")
    edit_settings(wired, lambda data: data.__setitem__("enabledPlugins", {"cerebro@cerebro": True}))
    assert cli("init", "--force").exit_code == 0  # removes init's hooks and its unedited skills
    hooks = run_doctor(cli)[1]["hooks"]
    assert hooks["status"] == "warn"
    assert "skills doubled: .claude/skills/{recall}" in hooks["detail"] and "init keeps them" in hooks["detail"]
    assert hooks["fix"] == f"rm {edited}"


def test_plugin_alone_is_ok(cli, project: Path) -> None:
    assert cli("init", "--skip-integration", "--embed-provider", "none").exit_code == 0
    edit_settings(project, lambda data: data.__setitem__("enabledPlugins", {"cerebro@cerebro": True}))
    _, checks = run_doctor(cli)
    assert (checks["hooks"]["status"], checks["hooks"]["detail"]) == ("ok", "plugin (cerebro@cerebro)")


def test_local_install_beside_the_plugin_points_at_init_force_local(cli, project: Path) -> None:
    assert cli("init", "--local", "--embed-provider", "none").exit_code == 0
    _, checks = run_doctor(cli)
    assert (checks["hooks"]["status"], checks["hooks"]["detail"]) == (
        "ok",
        "init (.claude/settings.local.json): current",
    )
    edit_settings(project, lambda data: data.__setitem__("enabledPlugins", {"cerebro@cerebro": True}))
    hooks = run_doctor(cli)[1]["hooks"]
    assert hooks["status"] == "warn"
    assert hooks["fix"] == f"cerebro init --force --local -p {project}"
    assert cli("init", "--force", "--local").exit_code == 0
    assert run_doctor(cli)[1]["hooks"]["routes"] == ["plugin (cerebro@cerebro)"]


def test_cerebro_hooks_in_the_user_settings_warn(cli, wired: Path, user_env: Path) -> None:
    user_settings = user_env / ".claude" / "settings.json"
    user_settings.parent.mkdir()
    user_settings.write_text(json.dumps(templates.hooks_config()))
    hooks = run_doctor(cli)[1]["hooks"]
    assert hooks["status"] == "warn"
    assert "~/.claude/settings.json wires cerebro hooks into every project" in hooks["detail"]
    assert hooks["fix"] == f"${{EDITOR:-vi}} {user_settings}"


def test_upstream_leftover_hook_warns_stale_and_unguarded(cli, wired: Path) -> None:
    leftover = {"matcher": "", "hooks": [{"type": "command", "command": UPSTREAM_GC}]}
    edit_settings(wired, lambda data: data["hooks"]["SessionEnd"].append(leftover))
    _, checks = run_doctor(cli)
    hooks = checks["hooks"]
    assert hooks["status"] == "warn", hooks
    assert hooks["stale"] == [".claude/settings.json: SessionEnd"]
    assert hooks["unguarded"] == [".claude/settings.json: SessionEnd"]
    assert hooks["detail"].startswith(
        ".claude/settings.json: older or upstream cerebro hooks (SessionEnd); "
        "no `command -v cerebro` guard (SessionEnd)"
    )
    assert hooks["fix"] == f"cerebro init --force -p {wired}"
    assert cli("init", "--force").exit_code == 0
    assert run_doctor(cli)[1]["hooks"]["status"] == "ok"


def test_a_missing_hook_event_warns(cli, wired: Path) -> None:
    edit_settings(wired, lambda data: data["hooks"].pop("UserPromptSubmit"))
    _, checks = run_doctor(cli)
    assert checks["hooks"]["status"] == "warn"
    assert checks["hooks"]["missing"] == ["UserPromptSubmit"]


def test_unparseable_settings_fails(cli, wired: Path) -> None:
    settings_path(wired).write_text('{"hooks": {')
    result, checks = run_doctor(cli)
    assert checks["hooks"]["status"] == "fail"
    assert "not valid JSON" in checks["hooks"]["detail"]
    assert checks["hooks"]["fix"] == f"${{EDITOR:-vi}} {settings_path(wired)}"
    assert result.exit_code == 12


# --------------------------------------------------------------------------- 3. hook-latency


def test_latency_is_measured_and_reported(cli, wired: Path) -> None:
    add_memories(cli, "prime me at every prompt")
    result = cli("doctor", "--format", "json")  # the default: latency measured (its status is the machine's)
    check = {c["name"]: c for c in json.loads(result.stdout)["checks"]}["hook-latency"]
    assert check["status"] in ("ok", "warn", "fail")
    assert check["executable"] == str(Path(SCRIPTS) / "cerebro") and check["runs"] == 3
    for key in ("has_brain_ms", "prime_ms"):
        assert len(check[key]) == 3 and all(isinstance(v, float) and v > 0 for v in check[key])
    assert check["has_brain_median_ms"] == sorted(check["has_brain_ms"])[1]
    assert check["prime_median_ms"] == sorted(check["prime_ms"])[1]
    assert check["brain_copied"] is True
    assert check["prime_delivered"] == 3  # a session of its own per run: every run primed for real
    assert check["budgets_ms"]["SessionEnd"] == {"warn": 750.0, "fail": 1500.0}
    assert check["budgets_ms"]["UserPromptSubmit"] == {
        "warn": 1000.0,
        "fail": templates.TIMEOUTS["UserPromptSubmit"] * 1000.0,
    }
    assert f"has-brain {check['has_brain_median_ms']:.0f} ms" in check["detail"]


def test_latency_over_budget_warns_then_fails(wired: Path) -> None:
    roomy = dict.fromkeys(("SessionEnd", "SessionStart", "UserPromptSubmit"), (1000000000.0, 1000000000.0))
    assert doctor.check_hook_latency(wired, budgets=roomy, runs=1).status == "ok"

    over_warn = {**roomy, "SessionEnd": (0.0, 1e9)}
    warned = doctor.check_hook_latency(wired, budgets=over_warn, runs=1)
    assert warned.status == "warn"
    assert "has-brain takes" in warned.detail and "SessionEnd" in warned.detail
    assert warned.fix and warned.fix.startswith("uv tool install --reinstall --compile-bytecode ")

    over_fail = {**roomy, "UserPromptSubmit": (0.0, 0.0)}
    failed = doctor.check_hook_latency(wired, budgets=over_fail, runs=1)
    assert failed.status == "fail"
    assert (
        "prime takes" in failed.detail and "Claude Code gives UserPromptSubmit hooks before cancelling" in failed.detail
    )
    assert failed.fix == f"cerebro gc -p {wired}"
    assert len(failed.extra["prime_ms"]) == 1


# --------------------------------------------------------------------------- 4. brain


def test_missing_brain_fails(cli, project: Path) -> None:
    result, checks = run_doctor(cli)
    assert checks["brain"]["status"] == "fail"
    assert "does not exist" in checks["brain"]["detail"]
    assert checks["brain"]["fix"] == f"cerebro init -p {project}"
    assert checks["embedder"]["status"] == "skip"
    assert result.exit_code == 12


def misdeclare_an_index(brain: Path) -> None:
    """An index that disagrees with its table: every read still works, integrity_check does not."""
    import sqlean.dbapi2 as sqlean

    conn = sqlean.connect(str(brain))
    try:
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = 'CREATE INDEX idx_nodes_importance ON nodes(content)' "
            "WHERE name = 'idx_nodes_importance'"
        )
        conn.commit()
    finally:
        conn.close()


@pytest.mark.parametrize("damage", ["pages", "index", "not-sqlite"])
def test_corrupted_brain_fails_with_a_restore(cli, wired: Path, damage: str) -> None:
    add_memories(cli, *(f"memory number {i} about the build" * 20 for i in range(30)))
    brain = paths.project_brain_path(wired)
    backup = cli("backup")
    assert backup.exit_code == 0, backup
    if damage == "index":
        misdeclare_an_index(brain)
    else:
        data = bytearray(brain.read_bytes())
        if damage == "pages":
            page = 4096
            middle = len(data) // page // 2
            data[middle * page : (middle + 3) * page] = os.urandom(3 * page)
        else:
            data = bytearray(b"this is not an SQLite database\n" * 100)
        brain.write_bytes(bytes(data))
    result, checks = run_doctor(cli)
    check = checks["brain"]
    assert check["status"] == "fail", check
    if damage == "index":
        assert check["detail"].startswith("integrity_check: "), check
        assert "idx_nodes_importance" in check["detail"]
        # 30 rows missing from the index: the first ten problems are listed, and the detail counts the rest shown
        assert len(check["integrity"]) == 10 and "(+9 more)" in check["detail"]
    newest = max(paths.backups_dir().glob("*.sqlite"), key=lambda p: p.stat().st_mtime)
    assert check["fix"] == f"mv {brain} {brain}.broken && cp {newest} {brain}"
    assert f"newest backup: {newest.name}" in check["detail"]
    assert result.exit_code == 12


def test_a_go_brain_is_upgraded_on_a_copy_only(cli, project: Path, isolated_home: Path) -> None:
    import sqlean.dbapi2 as sqlean

    from tests.conftest import FIXTURES

    brain = paths.project_brain_path(project)
    paths.ensure_private_dir(brain.parent)
    conn = sqlean.connect(str(brain))
    conn.executescript((FIXTURES / "brains" / "v7.sql").read_text())
    conn.close()
    brain.chmod(0o600)
    before = listing(isolated_home)
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "ok", check
    assert (check["revision"], check["schema_version"], check["upgrade_pending"]) == (None, 7, True)
    assert "schema v7 (Go cerebro), upgraded to py0007 by the next command (tried on a copy)" in check["detail"]
    assert check["active_nodes"] > 0 and check["fts_missing"] == 0  # the upgraded copy's indexes, checked
    assert listing(isolated_home) == before  # no upgrade, backup or lock in the real home


def test_an_upgrade_that_fails_is_a_failure(cli, wired: Path) -> None:
    brain = paths.project_brain_path(wired)
    raw_exec(brain, "UPDATE alembic_version SET version_num = 'v6'")
    raw_exec(brain, "DROP TABLE schema_meta")
    result, checks = run_doctor(cli)
    check = checks["brain"]
    assert check["status"] == "fail", check
    assert "the schema upgrade the next command runs fails on a copy (brain upgrade failed" in check["detail"]
    assert result.exit_code == 12


def test_a_brain_from_a_newer_cerebro_fails(cli, wired: Path) -> None:
    raw_exec(paths.project_brain_path(wired), "UPDATE schema_meta SET value = '99' WHERE key = 'schema_version'")
    check = run_doctor(cli)[1]["brain"]
    assert (check["status"], check["fix"]) == ("fail", "pip install -U cerebro-memory")
    assert "newer cerebro (schema_version 99)" in check["detail"]


def test_a_damaged_keyword_index_is_named_with_fts5s_own_words(cli, wired: Path) -> None:
    add_memories(cli, "alpha memory", "beta memory", "gamma memory")
    raw_exec(paths.project_brain_path(wired), "DELETE FROM nodes_fts_docsize WHERE id = 2")
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "warn", check  # not "restore a backup": the memories are whole
    assert check["fts_integrity"] == "database disk image is malformed"
    assert "keyword index damaged (FTS5 integrity-check: database disk image is malformed)" in check["detail"]
    assert "needs_fts_rebuild" in check["fix"]
    # The fix, with the driver in place of the sqlite3 shell: flag the rebuild, then a command opens the brain.
    flag = "INSERT INTO schema_meta (key, value) VALUES ('needs_fts_rebuild', 'true')"
    raw_exec(paths.project_brain_path(wired), flag)
    assert cli("stats").exit_code == 0
    check = run_doctor(cli)[1]["brain"]
    assert (check["status"], check["fts_integrity"], check["integrity"]) == ("ok", "ok", ["ok"])


def test_damage_beyond_the_keyword_index_still_fails_with_a_restore(cli, wired: Path) -> None:
    add_memories(cli, "alpha memory", "beta memory")
    brain = paths.project_brain_path(wired)
    raw_exec(brain, "DELETE FROM nodes_fts_docsize WHERE id = 2")
    misdeclare_an_index(brain)
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "fail", check
    assert check["detail"].startswith("integrity_check: row 1 missing from index idx_nodes_importance")


def test_keyword_index_out_of_sync_warns_and_the_rebuild_fixes_it(cli, wired: Path) -> None:
    ids = add_memories(cli, "alpha memory", "beta memory", "gamma memory")
    brain = paths.project_brain_path(wired)
    raw_exec(brain, "DELETE FROM nodes_fts WHERE node_id = ?", (ids[1],))
    _, checks = run_doctor(cli)
    check = checks["brain"]
    assert check["status"] == "warn", check
    assert (check["fts_missing"], check["fts_extra"], check["fts_rows"], check["active_nodes"]) == (
        1,
        0,
        2,
        3,
    )
    assert "keyword index out of sync" in check["detail"]
    assert "needs_fts_rebuild" in check["fix"] and "cerebro stats" in check["fix"]
    # The fix, with the driver in place of the sqlite3 shell: flag the rebuild, then a command opens the brain.
    raw_exec(brain, "INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('needs_fts_rebuild', 'true')")
    assert cli("stats").exit_code == 0
    assert run_doctor(cli)[1]["brain"]["status"] == "ok"


def test_a_missing_keyword_index_is_rebuilt_in_place(cli, wired: Path) -> None:
    """The fix exported, moved the brain aside, ran `cerebro init` and imported: a brain on another provider came back
    on the default one, the project's files were written again, and the settings only this machine keeps were lost."""
    ids = add_memories(cli, "alpha memory", "beta memory")
    brain = paths.project_brain_path(wired)
    ok(cli("config", "set", "rerank_command", "true"))
    raw_exec(brain, "DROP TABLE nodes_fts")
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "warn" and "no keyword index" in check["detail"], check
    assert "cerebro init" not in check["fix"] and "needs_fts_rebuild" in check["fix"]
    raw_exec(brain, "INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('needs_fts_rebuild', 'true')")
    assert cli("stats").exit_code == 0
    assert run_doctor(cli)[1]["brain"]["status"] == "ok"
    found = json.loads(ok(cli("recall", "beta", "--format", "json")).stdout)["results"]
    assert (
        found[0]["id"] == ids[1]
        and "keyword"
        in json.loads(ok(cli("recall", "beta", "--format", "json", "--explain")).stdout)["results"][0]["explain"][
            "lanes"
        ]
    )
    assert ok(cli("config", "get", "rerank_command")).stdout.startswith("rerank_command = true ")
    assert raw_rows(brain, "SELECT sql FROM sqlite_master WHERE name = 'nodes_fts'")[0][0].endswith(
        "tokenize = 'porter unicode61')"
    )


def test_keyword_rows_apart_from_their_memories_warn_and_the_rebuild_puts_them_back(cli, wired: Path) -> None:
    """A keyword row not at its memory's rowid (ADR 0066: another tool wrote it) makes every change of that memory read
    the whole keyword index: named, and the fix's rebuild writes each row at its memory's rowid again."""
    ids = add_memories(cli, "gone memory", "alpha memory", "beta memory")[1:]
    ok(cli("forget", "--subject", "gone", "--apply", "--hard"))  # a gap in the rowids: FTS5's choice would differ
    brain = paths.project_brain_path(wired)
    assert run_doctor(cli)[1]["brain"]["status"] == "ok"
    raw_exec(brain, "DELETE FROM nodes_fts WHERE node_id = ?", (ids[0],))
    raw_exec(
        brain, "INSERT INTO nodes_fts (rowid, node_id, content, subtype) VALUES (999, ?, 'alpha memory', '')", (ids[0],)
    )
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "warn" and check["fts_apart"] == 1, check
    assert "1 keyword row is not at their memory's rowid" in check["detail"]
    raw_exec(brain, "INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('needs_fts_rebuild', 'true')")
    assert cli("stats").exit_code == 0
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "ok" and check["fts_apart"] == 0, check


def test_keyword_rows_for_gone_memories_warn(cli, wired: Path) -> None:
    add_memories(cli, "alpha memory")
    raw_exec(
        paths.project_brain_path(wired),
        "INSERT INTO nodes_fts (node_id, content, subtype) VALUES ('no-such-node', 'ghost', '')",
    )
    check = run_doctor(cli)[1]["brain"]
    assert (check["status"], check["fts_extra"]) == ("warn", 1)


def test_vectors_out_of_sync_warn(fake_brain_path: Path, project: Path) -> None:
    from cerebro import Brain
    from cerebro.db.engine import connect_raw

    with Brain.open(fake_brain_path) as brain:
        ids = [brain.add(f"fact {i} about vectors") for i in range(3)]
    assert doctor.check_brain(project).status == "ok"
    conn = connect_raw(fake_brain_path)
    try:
        conn.execute("DELETE FROM vec_nodes WHERE node_id = ?", (ids[0],))
    finally:
        conn.close()
    missing = doctor.check_brain(project)
    assert missing.status == "warn"
    assert (missing.extra["vectors_missing"], missing.extra["vectors_orphaned"]) == (1, 0)
    assert missing.fix == f"cerebro embed --pending -p {project}"

    conn = connect_raw(fake_brain_path)
    try:
        blob = conn.execute("SELECT embedding FROM vec_nodes LIMIT 1").fetchone()[0]
        conn.execute("INSERT INTO vec_nodes (node_id, embedding) VALUES ('gone-node', vec_int8(?))", (blob,))
    finally:
        conn.close()
    orphaned = doctor.check_brain(project)
    assert orphaned.extra["vectors_orphaned"] == 1
    assert f"cerebro reembed --force -p {project}" in orphaned.fix
    with Brain.open(fake_brain_path) as brain:  # the fix, run: without --force it found "nothing to do"
        brain.reembed(force=True)
    assert doctor.check_brain(project).extra["vectors_orphaned"] == 0


def test_metadata_that_is_not_an_object_warns_and_its_fix_clears_it(cli, wired: Path) -> None:
    ids = add_memories(cli, "a memory", "another", "a third")
    brain = paths.project_brain_path(wired)
    raw_exec(brain, "UPDATE nodes SET metadata = '[1, 2]' WHERE id = ?", (ids[0],))
    raw_exec(brain, "UPDATE nodes SET metadata = X'FF00FE' WHERE id = ?", (ids[1],))  # a Go brain's odd row
    check = run_doctor(cli)[1]["brain"]
    assert (check["status"], check["metadata_not_object"]) == ("warn", 2)
    statement = check["fix"].split(' "', 1)[1].rstrip('"')  # the sqlite3 command's SQL, run as the shell would
    raw_exec(brain, statement, ())  # it failed on the BLOB: "JSON cannot hold BLOB values"
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "ok" and check.get("metadata_not_object", 0) == 0, check["detail"]
    shown = json.loads(cli("get", ids[1], "--format", "json").stdout)["metadata"]
    assert shown == {"_raw_metadata": "FF00FE"}  # the BLOB's bytes, as hex digits


@pytest.mark.parametrize("table", ["edges", "inbox_candidates"])
def test_a_brain_without_one_of_its_tables_fails_naming_it(cli, wired: Path, table: str) -> None:
    """Doctor said "integrity ok" while get, list, recall and gc all failed with "no such table" (from a review)."""
    add_memories(cli, "a memory")
    raw_exec(paths.project_brain_path(wired), f"DROP TABLE {table}", ())
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "fail" and f"the brain has no {table} table" in check["detail"]
    assert check["fix"] is None  # no backup: nothing to run, never an empty brain over the memories it holds


def test_a_sound_file_cerebro_cannot_read_is_never_to_be_moved_aside(cli, wired: Path) -> None:
    """Without schema_meta (or a column) doctor called the file "not a readable SQLite database", or passed it, and
    its fix moved it aside and started an empty brain: every memory still in it, out of reach."""
    ids = add_memories(cli, "a memory")
    raw_exec(paths.project_brain_path(wired), "ALTER TABLE nodes DROP COLUMN times_reinforced", ())
    assert cli("get", ids[0]).exit_code != 0  # "no such column": every read of a memory fails
    check = run_doctor(cli)[1]["brain"]
    assert check["status"] == "fail" and "the brain has no nodes.times_reinforced column" in check["detail"]
    assert check["fix"] is None and "keep the file" in check["detail"]


def test_a_text_that_is_not_utf8_is_shown_with_replacement_characters(cli, wired: Path) -> None:
    """Go cerebro stores whatever bytes its strings held: every command that read such a memory (list, get, recall,
    export, doctor's secret scan) stopped with "internal error: Could not decode to UTF-8"."""
    ids = add_memories(cli, "deploy notes", "another deploy note")
    brain = paths.project_brain_path(wired)
    raw_exec(brain, "UPDATE nodes SET content = CAST(X'6465706C6F79FF6E6F746573' AS TEXT) WHERE id = ?", (ids[0],))
    assert json.loads(ok(cli("get", ids[0], "--format", "json")).stdout)["content"] == "deploy\ufffdnotes"
    listed = json.loads(ok(cli("list", "--format", "json")).stdout)["memories"]
    assert {m["content"] for m in listed} == {"deploy\ufffdnotes", "another deploy note"}
    assert ids[0] in ok(cli("recall", "deploy", "--format", "json")).stdout
    assert "deploy\ufffdnotes" in ok(cli("export", "--format", "jsonl")).stdout
    assert run_doctor(cli)[1]["brain"]["status"] == "ok"
    stored = raw_rows(brain, "SELECT hex(content) FROM nodes WHERE id = ?", (ids[0],))
    assert stored == [("6465706C6F79FF6E6F746573",)]  # read as it is, never rewritten


def test_metadata_stored_as_json_null_or_empty_is_no_metadata_not_a_problem(cli, wired: Path) -> None:
    """Go cerebro writes 'null' (and hand edits '') for "no metadata": both read as none, so the doctor must not
    count them as metadata that is not an object."""
    ids = add_memories(cli, "a memory", "another")
    brain = paths.project_brain_path(wired)
    raw_exec(brain, "UPDATE nodes SET metadata = 'null' WHERE id = ?", (ids[0],))
    raw_exec(brain, "UPDATE nodes SET metadata = '' WHERE id = ?", (ids[1],))
    check = run_doctor(cli)[1]["brain"]
    assert (check["status"], check["metadata_not_object"]) == ("ok", 0)


def test_secrets_stored_in_clear_warn_with_the_redaction_as_fix(cli, wired: Path, project: Path) -> None:
    assert cli("add", "deploy key AKIAQX3NZ7VGLD5KPW2M", "--allow-secret").exit_code == 0
    check = run_doctor(cli)[1]["brain"]
    assert (check["status"], check["secrets_in_clear"]) == ("warn", 1)
    assert "AKIAQX3NZ7VGLD5KPW2M" not in json.dumps(check)
    assert any(fix.startswith("cerebro secrets redact") for fix in check["fixes"])
    assert cli("config", "set", "redact_secrets", "false").exit_code == 0  # wanted in clear: nothing to warn
    check = run_doctor(cli)[1]["brain"]
    assert (check["status"], check["secrets_in_clear"]) == ("ok", None)


# --------------------------------------------------------------------------- 5. embedder


def test_local_embedder_embeds(cli, project: Path) -> None:
    assert cli("init").exit_code == 0  # the default provider
    check = run_doctor(cli)[1]["embedder"]
    assert check["status"] == "ok", check
    assert (check["provider"], check["dimensions"]) == ("local", 384)
    assert check["detail"].startswith("local (all-MiniLM-L6-v2-onnx-int8-dq7, 384 dims) embeds in ")


def test_the_embedder_check_names_model_caches_this_version_does_not_use(cli, project: Path) -> None:
    """An upgrade leaves the graph cached under an older name (ADR 0049: the optimisation level joined the name):
    doctor names it, its size and the command that deletes it — and writes nothing itself."""
    from cerebro import paths
    from cerebro.embed import local

    assert cli("init").exit_code == 0
    cache = paths.home() / "cache"
    old = cache / f"minilm-int8-dq7v1-{local.MODEL_SHA256[:12]}-ort1.32.0"  # before the level was in the name
    old.mkdir(parents=True, exist_ok=True)
    (old / local.CACHE_WEIGHTS).write_bytes(b"x" * 3_000_000)
    (cache / "minilm-int8-dq7v1-basic-000000000000-ort1.32.0.42.tmp").mkdir()  # being built: not named
    import onnxruntime

    in_use = [local._cache_dir(onnxruntime, model) for model in local.MODEL_IDS]
    for folder in in_use:
        folder.mkdir(parents=True, exist_ok=True)
    check = run_doctor(cli)[1]["embedder"]
    assert check["status"] == "ok", check
    assert "1 model cache(s) this version does not use take 3 MB" in check["detail"]
    assert f"rm -rf {old}" in check["detail"] and ".tmp" not in check["detail"]
    assert old.is_dir()  # named, not deleted
    assert all(folder.name not in check["detail"] for folder in in_use)  # the caches in use are never named


def test_the_local_embedder_check_tokenizes_non_ascii_text_too(cli, project: Path, tmp_path: Path, monkeypatch) -> None:
    """ASCII text is tokenized without the tokenizers package (ADR 0045): a broken package must still fail the check,
    or every non-ASCII memory would be left without a vector while doctor says ok."""
    broken = tmp_path / "broken" / "tokenizers"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('this tokenizers is broken')\n")
    assert cli("init").exit_code == 0
    monkeypatch.setenv("PYTHONPATH", str(broken.parent))
    check = run_doctor(cli)[1]["embedder"]
    assert check["status"] == "fail", check
    assert "this tokenizers is broken" in check["detail"]


def test_a_brain_on_the_float_local_model_is_told_how_to_move_to_the_integer_one(cli, project: Path) -> None:
    """ADR 0041: a brain made before keeps its float32 model; doctor says how to move it, and only to such a brain."""
    assert cli("init", "--skip-integration", "--embed-model", "all-MiniLM-L6-v2-onnx-int8").exit_code == 0
    check = run_doctor(cli)[1]["embedder"]
    assert check["status"] == "ok", check
    assert "cerebro reembed --model all-MiniLM-L6-v2-onnx-int8-dq7" in check["detail"]
    assert cli("reembed", "--model", "all-MiniLM-L6-v2-onnx-int8-dq7").exit_code == 0
    check = run_doctor(cli)[1]["embedder"]
    assert check["status"] == "ok" and "reembed" not in check["detail"], check


def test_unreachable_ollama_fails(cli, project: Path, monkeypatch) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", f"http://127.0.0.1:{port}")
    assert cli("init", "--skip-integration", "--embed-provider", "ollama").exit_code == 0
    result, checks = run_doctor(cli)
    check = checks["embedder"]
    assert check["status"] == "fail", check
    assert f"127.0.0.1:{port}" in check["detail"] and "unreachable" in check["detail"]
    assert check["fix"] == "ollama serve"
    assert result.exit_code == 12


# --------------------------------------------------------------------------- 6. file-modes


def test_world_readable_brain_warns_and_chmod_fixes_it(cli, wired: Path) -> None:
    brain = paths.project_brain_path(wired)
    brain.chmod(0o644)
    result, checks = run_doctor(cli)
    check = checks["file-modes"]
    assert check["status"] == "warn", check
    assert check["too_open"] == [str(brain)]
    assert check["fix"] == f"chmod 600 {brain}"
    assert result.exit_code == 0
    assert oct(brain.stat().st_mode & 0o777) == "0o644"  # doctor reports; it does not tighten
    brain.chmod(0o600)
    assert run_doctor(cli)[1]["file-modes"]["status"] == "ok"


def test_a_read_only_wal_file_left_by_a_read_warns_with_its_fix(cli, wired: Path) -> None:
    """A read of a read-only brain leaves its -wal/-shm read-only: once the brain is writable again every write
    fails ("attempt to write a readonly database") while the modes looked private (a review)."""
    brain = paths.project_brain_path(wired)
    stuck = Path(str(brain) + "-wal")
    stuck.write_bytes(b"")
    stuck.chmod(0o400)
    check = run_doctor(cli)[1]["file-modes"]
    assert check["status"] == "warn" and check["not_writable"] == [str(stuck)], check
    assert check["fix"] == f"chmod 600 {stuck}"
    stuck.chmod(0o600)
    assert run_doctor(cli)[1]["file-modes"]["status"] == "ok"


def test_open_folder_warns(cli, wired: Path) -> None:
    paths.projects_dir().chmod(0o755)
    check = run_doctor(cli)[1]["file-modes"]
    assert check["status"] == "warn"
    assert check["fix"] == f"chmod 700 {paths.projects_dir()}"


# --------------------------------------------------------------------------- 7. metrics


def test_transcripts_never_ingested_warn_and_ingest_fixes_it(cli, wired: Path, user_env: Path) -> None:
    from cerebro.metrics.ingest import claude_code_slug

    folder = user_env / ".claude" / "projects" / claude_code_slug(str(wired))
    folder.mkdir(parents=True)
    (folder / "x.jsonl").write_text("{}\n")
    _, checks = run_doctor(cli)
    check = checks["metrics"]
    assert check["status"] == "warn", check
    assert (check["transcripts"], check["last_ingest"]) == (1, None)
    assert "never ingested" in check["detail"]
    assert check["fix"] == f"cerebro ingest -p {wired}"
    assert cli("ingest").exit_code == 0
    check = run_doctor(cli)[1]["metrics"]
    assert check["status"] == "ok", check
    assert check["last_ingest"] and check["detail"].startswith("last ingest ")


def test_a_transcript_the_session_end_ingest_missed_warns(cli, wired: Path, user_env: Path) -> None:
    from cerebro.metrics.ingest import claude_code_slug

    folder = user_env / ".claude" / "projects" / claude_code_slug(str(wired))
    folder.mkdir(parents=True)
    transcript = folder / "x.jsonl"
    transcript.write_text("{}\n")
    assert cli("ingest").exit_code == 0
    with transcript.open("a") as grown:  # the session went on after the ingest...
        grown.write("{}\n")
    assert run_doctor(cli)[1]["metrics"]["status"] == "ok"  # ...and may still be live: not yet a problem
    two_hours_ago = time.time() - 7200
    os.utime(transcript, (two_hours_ago, two_hours_ago))
    check = run_doctor(cli)[1]["metrics"]
    assert (check["status"], check["not_ingested"], check["fix"]) == ("warn", 1, f"cerebro ingest -p {wired}")


# --------------------------------------------------------------------------- 8. end-of-session


def test_overdue_end_of_session_work_warns_and_catch_up_fixes_it(cli, wired: Path) -> None:
    from cerebro.integration.claude_code import aftercare

    assert aftercare.enqueue(wired, "an-old-session", None)
    job = aftercare.pending_jobs()[0].path
    body = json.loads(job.read_text())
    body["created_at"] -= 3600
    job.write_text(json.dumps(body))
    os.utime(job, (body["created_at"], body["created_at"]))
    _, checks = run_doctor(cli)
    check = checks["end-of-session"]
    assert check["status"] == "warn", check
    assert (check["pending"], check["overdue"], check["worker_running"]) == (1, 1, False)
    assert check["fix"] == "cerebro hook catch-up"
    assert str(aftercare.log_path()) in check["detail"]
    assert cli("hook", "catch-up").exit_code == 0
    assert run_doctor(cli)[1]["end-of-session"]["status"] == "ok"


def test_an_unreadable_job_file_warns(cli, wired: Path) -> None:
    from cerebro.integration.claude_code import aftercare

    junk = aftercare.pending_dir() / "garbage.json"
    junk.write_text("{not json")
    check = run_doctor(cli)[1]["end-of-session"]
    assert (check["status"], check["unreadable_jobs"], check["fix"]) == ("warn", [str(junk)], f"rm {junk}")
