"""A user who ``pip install``s cerebro (not a checkout, not editable) gets working commands and upgrades."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
V1_FIXTURE = REPO / "fixtures" / "brains" / "v1.sql"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with ``pip install <repo>`` (a real wheel build, not editable)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    # Copy the tracked sources only, so a stale build/ or .venv in the checkout cannot leak in.
    files = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in files:
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if (REPO / name).is_file():
            shutil.copy2(REPO / name, target)
    env_dir = root / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    done = subprocess.run(
        [
            str(env_dir / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        output = done.stdout + done.stderr
        offline = any(sign in output for sign in OFFLINE_SIGNS)
        if offline and os.environ.get("CI") != "true":  # CI has the index; a laptop on a plane may not
            pytest.skip(
                "pip cannot reach the package index to install the wheel's dependencies: "
                + output.strip().splitlines()[-1]
            )
        raise AssertionError(f"pip install of the wheel failed:\n{output}")
    return env_dir


# What pip says when the package index is out of reach (no network, no proxy, DNS down).
OFFLINE_SIGNS = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "No matching distribution found",
    "Could not find a version that satisfies",
    "ProxyError",
    "ConnectTimeoutError",
)


def _run(
    env_dir: Path, home: Path, cwd: Path, *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CLAUDE_PROJECT_DIR")}
    env["CEREBRO_HOME"] = str(home)
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}"  # as after `pip install`: on PATH
    return subprocess.run(
        [str(env_dir / "bin" / "cerebro"), *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.slow
def test_installed_cli_init_add_get(installed: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    assert _run(installed, home, project, "init").returncode == 0
    added = _run(installed, home, project, "add", "--type", "concept", "installed from a wheel")
    assert added.returncode == 0, added.stderr
    node_id = added.stdout.strip()
    got = _run(installed, home, project, "get", node_id[:8], "--format", "json")
    assert got.returncode == 0, got.stderr
    assert '"content": "installed from a wheel"' in got.stdout


@pytest.mark.slow
def test_installed_package_upgrades_a_v1_brain_from_its_own_migrations(installed: Path, tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    python = str(installed / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["CEREBRO_HOME"] = str(home)
    # Place the v1 fixture where the project's brain lives, using the installed package's own paths.
    brain = subprocess.run(
        [
            python,
            "-c",
            "from cerebro import paths; import sys; print(paths.project_brain_path(sys.argv[1]))",
            str(project),
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(brain).parent.mkdir(parents=True)
    subprocess.run(
        [
            python,
            "-c",
            "import sqlean.dbapi2 as s, sys; c=s.connect(sys.argv[1]); "
            "c.executescript(open(sys.argv[2]).read()); c.commit()",
            brain,
            str(V1_FIXTURE),
        ],
        env=env,
        cwd=tmp_path,
        check=True,
    )
    stats = _run(installed, home, project, "stats", "--format", "json")
    assert stats.returncode == 0, stats.stderr
    assert '"schema_version": 7' in stats.stdout
    where = subprocess.run(
        [python, "-c", "from cerebro.db.migrate import script_location; print(script_location())"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert where.startswith(str(installed)), where
    assert where.endswith("_migrations")
    assert list((home / "backups").glob("*.sqlite")), "the upgrade takes a backup first"


@pytest.mark.slow
def test_installed_package_is_marked_typed(installed: Path) -> None:
    # PEP 561: type checkers use cerebro's own annotations only when the package ships py.typed.
    site = next((installed / "lib").glob("python*/site-packages"))
    assert (site / "cerebro" / "py.typed").is_file()


@pytest.mark.slow
def test_installed_cli_recalls_runs_its_hooks_and_doctor(installed: Path, tmp_path: Path) -> None:
    """Outside the repository, with the wheel alone: Claude Code wiring, recall, the SessionStart hook and doctor."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    assert _run(installed, home, project, "init").returncode == 0
    assert (project / ".claude" / "settings.json").is_file()  # the hooks, from the wheel's own templates
    node_id = _run(installed, home, project, "add", "--type", "concept", "the deploy needs the VPN").stdout.strip()
    recalled = _run(installed, home, project, "recall", "how do we deploy", "--format", "json")
    assert recalled.returncode == 0, recalled.stderr
    assert [r["id"] for r in json.loads(recalled.stdout)["results"]][:1] == [node_id]
    payload = {"session_id": "wheel-1", "hook_event_name": "SessionStart", "source": "startup", "cwd": str(project)}
    primed = _run(installed, home, project, "hook", "prime", "--event", "sessionstart", stdin=json.dumps(payload))
    assert primed.returncode == 0, primed.stderr
    assert "the deploy needs the VPN" in json.loads(primed.stdout)["hookSpecificOutput"]["additionalContext"]
    doctor = _run(installed, home, project, "doctor", "--format", "json")
    checks = {c["name"]: c["status"] for c in json.loads(doctor.stdout)["checks"]}
    assert doctor.returncode == 0, doctor.stdout
    assert "fail" not in checks.values(), checks
    site = next((installed / "lib").glob("python*/site-packages"))
    assert (site / "cerebro" / "cli" / "schemas" / "recall.json").is_file()  # the JSON contract ships too
