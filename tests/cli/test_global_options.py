"""Global options (--format, --project/-p, --quiet/-q) before or after the command; `--`; --version."""

from __future__ import annotations

import pytest

import cerebro
from cerebro import Brain, paths

from .helpers import assert_one_line_error, node, ok


@pytest.mark.parametrize(
    "argv",
    [
        ("--format", "json", "add", "x"),
        ("add", "x", "--format", "json"),
        ("--format=json", "add", "x"),
        ("add", "--format=json", "x"),
        ("-f", "json", "add", "x"),
        ("add", "x", "-f", "json"),
    ],
)
def test_format_anywhere(cli, brain_path, argv):
    data = ok(cli(*argv)).json()
    assert set(data) == {"id"}
    assert node(brain_path, data["id"]).content == "x"


def test_format_md_is_default_and_explicit(cli, brain_path):
    plain = ok(cli("add", "x")).stdout
    explicit = ok(cli("add", "y", "--format", "md")).stdout
    for out in (plain, explicit):
        assert len(out.strip()) == 36 and "{" not in out


@pytest.mark.parametrize("position", ["before", "after", "equals"])
def test_project_anywhere(cli, tmp_path, position):
    other = tmp_path / "other-project"
    other.mkdir()
    target = paths.project_brain_path(other)
    Brain.init(target)
    args = {
        "before": ("-p", str(other), "add", "in other"),
        "after": ("add", "in other", "-p", str(other)),
        "equals": ("--project=" + str(other), "add", "in other"),
    }[position]
    # project_dir=None: the fixture would otherwise append its own -p after a single --project=... token.
    node_id = ok(cli(*args, project_dir=None)).stdout.strip()
    assert node(target, node_id).content == "in other"


def test_projects_are_isolated(cli, brain_path, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    ok(cli("init", "-p", str(other)))
    ok(cli("add", "only in default project"))
    assert ok(cli("list", "--format", "json", "--project", str(other))).json() == {"memories": []}
    assert len(ok(cli("list", "--format", "json")).json()["memories"]) == 1


def test_claude_project_dir_then_cwd(cli, brain_path, project, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    node_id = ok(cli("add", "via env", project_dir=None)).stdout.strip()
    assert node(brain_path, node_id).content == "via env"

    # --project wins over the environment.
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert_one_line_error(cli("list", "-p", str(other)), exit_code=4)

    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    monkeypatch.chdir(project)
    node_id = ok(cli("add", "via cwd", project_dir=None)).stdout.strip()
    assert node(brain_path, node_id).content == "via cwd"


@pytest.mark.parametrize("argv", [("--format", "xml", "list"), ("list", "--format", "xml"), ("list", "--format=")])
def test_bad_format_rejected(cli, brain_path, brain_snapshot, argv):
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli(*argv), "--format", exit_code=2)
    assert brain_snapshot(brain_path) == before


@pytest.mark.parametrize("argv", [("add", "x", "--format"), ("add", "x", "-p")])
def test_option_missing_value(cli, brain_path, brain_snapshot, argv):
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli(*argv, project_dir=None), "needs a value", exit_code=2)
    assert brain_snapshot(brain_path) == before


@pytest.mark.parametrize(
    "content",
    ["--format", "-p", "-q", "--quiet", "--project=x", "-f", "--type", "--help", "--version", "-x", "--"],
)
def test_double_dash_stores_content_literally(cli, project, brain_path, content):
    result = ok(cli("-p", str(project), "add", "--", content))
    node_id = result.stdout.strip()
    assert node(brain_path, node_id).content == content


def test_double_dash_with_global_options_before_it(cli, project, brain_path):
    argv = ("--format", "json", "-p", str(project), "add", "--type", "concept", "--", "--format")
    data = ok(cli(*argv)).json()
    n = node(brain_path, data["id"])
    assert (n.content, n.type) == ("--format", "concept")


def test_version(cli):
    for argv in (("--version",), ("--version", "--format", "json")):
        result = cli(*argv, project_dir=None)
        assert result.exit_code == 0
        assert result.stdout.strip() == cerebro.__version__
        assert result.stderr == ""


def test_project_symlink_and_relative_path_reach_the_same_brain(cli, project, brain_path, tmp_path, monkeypatch):
    link = tmp_path / "project-link"
    link.symlink_to(project)
    node_id = ok(cli("add", "via symlink", "-p", str(link))).stdout.strip()
    assert node(brain_path, node_id).content == "via symlink"
    monkeypatch.chdir(tmp_path)
    assert ok(cli("get", node_id, "-p", "project", "--format", "json")).json()["content"] == "via symlink"


@pytest.mark.parametrize("extra", [("-q",), ("--format", "json"), ("--quiet", "--format", "json")])
def test_errors_stay_on_stderr_whatever_the_options(cli, brain_path, extra):
    assert_one_line_error(cli("get", "abc", *extra), "too short", exit_code=2)
    assert_one_line_error(cli(*extra, "config", "get", "nope"), exit_code=3)


def test_quiet_leaves_only_results(cli, project) -> None:
    """-q silences everything but results: init says what it made, not what to do next."""
    loud = cli("init", "--embed-provider", "none")
    assert "Tune it with: cerebro config list" in loud.stdout and "claude plugin marketplace add" in loud.stdout
    quiet = cli("init", "--embed-provider", "none", "-q")
    assert quiet.exit_code == 0 and quiet.stderr == ""
    assert "already initialized at" in quiet.stdout
    assert "Tune it with" not in quiet.stdout and "claude plugin" not in quiet.stdout


MAIN = "import sys\nsys.argv = ['cerebro', *sys.argv[1:]]\nfrom cerebro.cli.app import main\nmain()\n"


def test_a_stream_that_cannot_encode_gets_escapes_not_a_failure_after_the_work(isolated_home, tmp_path):
    """Under PYTHONIOENCODING=ascii a recall's header (an em dash) and a memory's accents could not be written: the
    command failed after its work (the results' accesses counted, nothing shown). They are written as escapes."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONIOENCODING": "ascii"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-c", MAIN, *args, "-p", str(tmp_path)]
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120, check=False)

    assert run("init").returncode == 0
    assert run("add", "café crème, the deploy note").returncode == 0
    shown = run("recall", "café deploy")
    assert shown.returncode == 0, shown.stderr
    assert "caf\\xe9 cr\\xe8me" in shown.stdout
