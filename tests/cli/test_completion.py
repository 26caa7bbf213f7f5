"""cerebro completion: a script the real shell runs, completing commands, sub-commands, options and choices."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


def _complete(script: Path, *words: str) -> list[str]:
    """What bash offers after ``cerebro WORDS`` (the last word being completed), with the script sourced."""
    import shlex

    line = " ".join(["cerebro", *words])
    quoted = " ".join(shlex.quote(w) for w in ("cerebro", *words))
    program = (
        f"source {shlex.quote(str(script))}\n"
        f"COMP_WORDS=({quoted})\n"
        f"COMP_CWORD={len(words)}\nCOMP_LINE={shlex.quote(line)}\nCOMP_POINT={len(line)}\n"
        "_cerebro\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture
def bash_script(cli, tmp_path: Path) -> Path:
    result = cli("completion", "bash", project_dir=None)
    assert result.exit_code == 0, result
    path = tmp_path / "cerebro.bash"
    path.write_text(result.stdout)
    return path


def test_bash_completes_commands_subcommands_options_and_choices(bash_script: Path) -> None:
    assert "recall" in _complete(bash_script, "rec") and "reembed" in _complete(bash_script, "re")
    assert set(_complete(bash_script, "config", "")) >= {"list", "get", "set", "reset"}
    assert "--explain" in _complete(bash_script, "recall", "--ex")
    assert set(_complete(bash_script, "export", "--format", "")) == {"json", "jsonl", "sql", "sqlite"}


def test_the_json_form_carries_the_script(cli) -> None:
    data = cli("completion", "zsh", "--format", "json", project_dir=None).json()
    assert data["shell"] == "zsh" and data["installed"] is None and "cerebro" in data["script"]


def test_install_writes_the_script_where_the_shell_looks(cli, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    result = cli("completion", "bash", "--install", "--format", "json", project_dir=None)
    assert result.exit_code == 0, result
    installed = Path(result.json()["installed"])
    assert installed.is_file() and installed.is_relative_to(tmp_path)
    assert "_cerebro" in installed.read_text()


def test_an_unknown_shell_is_refused(cli, monkeypatch) -> None:
    assert cli("completion", "tcsh", project_dir=None).exit_code == 2
    monkeypatch.setenv("SHELL", "/bin/tcsh")
    result = cli("completion", project_dir=None)
    assert result.exit_code == 2 and "tcsh" in result.stderr


def test_a_file_system_refusal_is_one_line_not_an_internal_error(cli, tmp_path: Path, monkeypatch) -> None:
    """A HOME that is a file made `completion --install` fail with "internal error: NotADirectoryError" (a review)."""
    home = tmp_path / "home-is-a-file"
    home.write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    result = cli("completion", "bash", "--install", project_dir=None)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith("cerebro: error: Not a directory: ") and "internal error" not in result.stderr
    assert result.stderr.count("\n") == 1
