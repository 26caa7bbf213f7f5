"""Help is driven from the COMMANDS table, so a command (or sub-command) without help fails here."""

from __future__ import annotations

import importlib
import inspect
import itertools
import re
import shlex
import subprocess
import sys

import pytest
from cyclopts import App

from cerebro.cli.app import COMMANDS

BOX = re.compile(r"[│╭╮╰╯─┃━]")


def flat(text: str) -> str:
    return " ".join(BOX.sub(" ", text).split())


def target(name: str):
    module, attr = COMMANDS[name][0].split(":")
    return getattr(importlib.import_module(module), attr)


def subcommands(app: App) -> list[str]:
    return [n for n in app if not n.startswith("-")]


def description(obj) -> str:
    if isinstance(obj, App):
        return (obj.help or "").strip()
    return inspect.cleandoc(obj.__doc__ or "").split("\n\n")[0]


def all_commands() -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    for name in COMMANDS:
        found.append((name,))
        obj = target(name)
        if isinstance(obj, App):
            found.extend((name, sub) for sub in subcommands(obj))
    return found


def test_every_group_has_subcommands():
    for name in COMMANDS:
        obj = target(name)
        if isinstance(obj, App):
            assert subcommands(obj), name
    assert {"set", "get", "list", "reset"} <= set(subcommands(target("config")))
    assert {"add", "list", "rm"} <= set(subcommands(target("relation")))


def test_top_level_help_lists_every_command(cli):
    for argv in (("--help",), ("-h",)):
        result = cli(*argv, project_dir=None)
        assert result.exit_code == 0
        out = flat(result.stdout)
        for name, (_, summary) in COMMANDS.items():
            assert re.search(rf"(^|\s){re.escape(name)}\s", out), name
            assert summary.strip(), name
            assert flat(summary) in out, name


def test_no_arguments_prints_help(cli):
    result = cli(project_dir=None)
    assert result.exit_code == 0
    assert "Usage: cerebro" in result.stdout


@pytest.mark.parametrize("path", all_commands(), ids=" ".join)
def test_command_help(cli, path):
    result = cli(*path, "--help", project_dir=None)
    assert result.exit_code == 0, result
    assert result.stderr == ""
    out = flat(result.stdout)
    assert f"Usage: cerebro {' '.join(path)}" in out

    if len(path) == 1:
        # `cerebro <cmd> --help` shows the command's own description (the list shows the COMMANDS summary).
        assert COMMANDS[path[0]][1]
        desc = description(target(path[0]))
    else:
        desc = description(target(path[0])[path[1]].default_command)
    assert desc.strip(), f"{' '.join(path)} has no description"
    assert flat(desc)[:60] in out


# The heading has no colon in the docstrings: docstring_parser reads a line "Examples:" as a Google-style section,
# and Cyclopts leaves sections out of the help, so the whole block would vanish from `--help`.
EXAMPLES_HEADING = re.compile(r"^Examples:?$")
GLOBAL_OPTIONS = {"--format", "-f", "--project", "-p", "--quiet", "-q"}
# A group's help as its module wrote it. Cyclopts sets a lazily registered group's help to the one it was registered
# with (build_app's one-line summary) once the group runs, on the module's App: harmless in a one-shot `cerebro`,
# but these tests share one interpreter, so an earlier `cerebro config set …` would hide `config --help`'s examples.
GROUP_HELP = {name: target(name).help for name in COMMANDS if isinstance(target(name), App)}


def examples(help_text: str) -> list[str]:
    """The lines of the help's Examples block: after the heading, up to the first blank line."""
    lines = help_text.splitlines()
    start = next((i for i, line in enumerate(lines) if EXAMPLES_HEADING.match(line.strip())), None)
    if start is None:
        return []
    return [line.strip() for line in itertools.takewhile(str.strip, lines[start + 1 :])]


def invoked(example: str) -> list[str]:
    """The tokens after ``cerebro`` in an example (an ``echo … |`` before it is the stdin it reads)."""
    return shlex.split(example[example.index("cerebro ") + len("cerebro ") :])


def command_path(tokens: list[str]) -> tuple[str, ...]:
    """The command (and sub-command) an example's tokens invoke."""
    top = target(tokens[0]) if tokens and tokens[0] in COMMANDS else None
    if isinstance(top, App) and len(tokens) > 1 and tokens[1] in subcommands(top):
        return (tokens[0], tokens[1])
    return tuple(tokens[:1])


def option_names(help_text: str) -> set[str]:
    """Every option the help's parameter panels name (the description and its examples are left out)."""
    panels = help_text[help_text.index("╭") :] if "╭" in help_text else ""
    return set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", panels))


@pytest.mark.parametrize("path", all_commands(), ids=" ".join)
def test_command_help_shows_examples(cli, path, monkeypatch):
    """`cerebro <cmd> --help` ends its description with an Examples block: invocations of that command, each
    on one line (a wrapped line would not paste), using only options the invoked command (or the global set) has."""
    name = " ".join(path)
    if len(path) == 1 and name in GROUP_HELP:
        monkeypatch.setattr(target(name), "help", GROUP_HELP[name])
    result = cli(*path, "--help", project_dir=None)
    assert result.exit_code == 0, result
    found = examples(result.stdout)
    assert found, f"cerebro {name} --help shows no Examples block:\n{result.stdout}"
    assert any(re.match(rf"cerebro {re.escape(name)}(\s|$)", line) for line in found), (name, found)
    known: dict[tuple[str, ...], set[str]] = {}
    for line in found:
        assert "cerebro " in line, f"cerebro {name}: {line!r} is not an invocation (a wrapped example?)"
        tokens = invoked(line)
        invoked_path = command_path(tokens)
        assert invoked_path and invoked_path[0] in COMMANDS, f"cerebro {name}: {line!r} names no command"
        if invoked_path not in known:
            known[invoked_path] = option_names(cli(*invoked_path, "--help", project_dir=None).stdout)
        for token in tokens[len(invoked_path) :]:
            option = token.split("=", 1)[0]
            if option.startswith("-") and option not in ("-", "--"):
                assert option in known[invoked_path] | GLOBAL_OPTIONS, f"cerebro {name}: {line!r} has no {option}"


LEAVES = [p for p in all_commands() if not isinstance(target(p[0]), App) or len(p) > 1]


@pytest.mark.parametrize("path", LEAVES, ids=" ".join)
def test_every_parameter_has_help(path):
    """Each option and argument of a leaf command documents itself (Annotated Parameter(help=...))."""
    obj = target(path[0])
    func = obj[path[1]].default_command if len(path) > 1 else obj
    hints = inspect.get_annotations(func, eval_str=True)
    missing = []
    for param in inspect.signature(func).parameters:
        meta = getattr(hints.get(param), "__metadata__", ())
        helps = [getattr(m, "help", None) for m in meta]
        if not any(helps):
            missing.append(param)
    assert missing == [], f"{' '.join(path)}: parameters without help: {missing}"


def test_group_help_lists_subcommands(cli):
    for name in COMMANDS:
        obj = target(name)
        if isinstance(obj, App):
            out = flat(cli(name, "--help", project_dir=None).stdout)
            for sub in subcommands(obj):
                assert re.search(rf"(^|\s){sub}\s", out), (name, sub)


def test_help_imports_no_orm():
    """ADR 0005: help is served from the command table; neither `cerebro --help` nor any `<cmd> --help`
    pays for SQLAlchemy/SQLModel/Alembic. Run in a fresh interpreter (this one has them loaded)."""
    code = (
        "import sys, io, contextlib\n"
        "from cerebro.cli.app import run, COMMANDS\n"
        "heavy = lambda: [m for m in ('sqlalchemy', 'sqlmodel', 'alembic') if m in sys.modules]\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    run(['--help'])\n"
        "top = heavy()\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for name in COMMANDS:\n"
        "        run([name, '--help'])\n"
        "print(top, heavy())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[] []", out.stdout + out.stderr


def test_command_help_shows_the_commands_full_description(cli):
    """`cerebro <cmd> --help` shows the docstring's detail, not only the one-line summary of the list."""
    guard = cli("stop-guard", "--help", project_dir=None)
    assert guard.exit_code == 0
    assert '"command": "cerebro stop-guard -p \\"$CLAUDE_PROJECT_DIR\\""' in guard.stdout  # how to wire it
    init = cli("init", "--help", project_dir=None).stdout
    assert "Cerebro Memory System" in " ".join(init.split())


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_flags(cli, flag):
    from cerebro import __version__

    result = cli(flag)
    assert (result.exit_code, result.stdout) == (0, f"{__version__}\n")


@pytest.mark.parametrize("path", all_commands(), ids=" ".join)
def test_every_command_help_shows_the_global_options_with_their_choices(cli, path):
    """Issue 16: the global options are in each command's help (export's --format is its own dump format)."""
    out = flat(cli(*path, "--help", project_dir=None).stdout)
    if path[0] == "export":
        assert "Global options" not in out
        return
    assert "Global options (before or after the command)" in out, out
    assert "--project -p" in out and "--quiet -q" in out
    assert "--format -f CHOICE" in out and "[choices: md, json, jsonl]" in out


def test_the_help_and_the_pre_parser_know_the_same_global_options():
    """The help's signature only describes the options split_global_options reads: names and choices agree."""
    import typing

    from cerebro.cli import app as cli_app
    from cerebro.cli.global_options import global_options

    hints = typing.get_type_hints(global_options, include_extras=True)
    names = {name for key in ("format", "project", "quiet") for name in hints[key].__metadata__[0].name}
    assert names == set(cli_app._VALUE_OPTIONS) | set(cli_app._FLAG_OPTIONS) == GLOBAL_OPTIONS
    assert typing.get_args(hints["format"].__origin__) == cli_app.FORMATS
