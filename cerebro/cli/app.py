"""The ``cerebro`` command: global options, lazy command registration, and the one place errors become
exit codes.

Global options (``--format md|json``, ``--project/-p DIR``, ``--quiet/-q``) are accepted before or after
the command, because agents write ``cerebro recall "…" --format json -p DIR``. They are lifted out of
argv before Cyclopts sees it (ADR 0005); everything after ``--`` is left alone. Commands are registered
by import path, so a hook pays only for the command it runs.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cerebro import __version__
from cerebro.cli_state import state
from cerebro.errors import quote

if TYPE_CHECKING:
    from cyclopts import App

FORMATS = ("md", "json", "jsonl")
_VALUE_OPTIONS = {"--format": "format", "-f": "format", "--project": "project", "-p": "project"}
_FLAG_OPTIONS = {"--quiet": "quiet", "-q": "quiet"}
# Commands whose own ``--format`` names something else (export's dump format) keep it.
_OWN_FORMAT_COMMANDS = {"export"}

# name: (import path, one-line help shown in `cerebro --help` without importing the command)
COMMANDS = {
    "init": ("cerebro.cli.commands.init:init", "Create this project's brain (or the global one)"),
    "add": ("cerebro.cli.commands.memory:add", "Store a new memory"),
    "get": ("cerebro.cli.commands.memory:get", "Show a memory with its edges"),
    "update": ("cerebro.cli.commands.memory:update", "Change a memory's content, importance, subtype or metadata"),
    "list": ("cerebro.cli.commands.memory:list_", "List memories, newest first"),
    "edge": ("cerebro.cli.commands.edge:edge", "Link two memories with a typed edge"),
    "relation": ("cerebro.cli.commands.edge:relation_app", "Manage the registry of edge relations"),
    "reinforce": ("cerebro.cli.commands.lifecycle:reinforce", "Count a use of a memory"),
    "supersede": ("cerebro.cli.commands.lifecycle:supersede", "Replace a memory with a new version"),
    "recall": ("cerebro.cli.commands.recall:recall", "Recall memories by relevance, importance, recency and links"),
    "search": ("cerebro.cli.commands.recall:search", "Vector similarity search alone"),
    "embed": ("cerebro.cli.commands.recall:embed", "Embed memories that have no vector yet (--pending)"),
    "gc": (
        "cerebro.cli.commands.lifecycle:gc",
        "Archive decayed memories (importance ≥ 2 × threshold is never evicted)",
    ),
    "mark-consolidated": ("cerebro.cli.commands.lifecycle:mark_consolidated", "Mark episodes consolidated (no edges)"),
    "consolidate": (
        "cerebro.cli.commands.lifecycle:consolidate",
        "Consolidate episodes into a memory, with provenance",
    ),
    "promote": ("cerebro.cli.commands.lifecycle:promote", "Copy a memory to the global brain"),
    "outcome": ("cerebro.cli.commands.lifecycle:outcome", "Record whether acting on a memory worked"),
    "forget": ("cerebro.cli.commands.lifecycle:forget", "Find and remove memories about a subject"),
    "anchors": ("cerebro.cli.commands.anchors:anchors", "List memories tied to code, and whether that code changed"),
    "inbox": (
        "cerebro.cli.commands.inbox:app",
        "Quarantine uncertain memories: add, list, approve or discard candidates",
    ),
    "team": ("cerebro.cli.commands.team:app", "Share memories with the team brain: connect, push, pull"),
    "secrets": ("cerebro.cli.commands.secrets:app", "Find secrets stored in clear and replace them with markers"),
    "export": ("cerebro.cli.commands.portability:export", "Export the brain (json, jsonl or sqlite)"),
    "backup": ("cerebro.cli.commands.portability:backup", "Write a consistent copy of the brain"),
    "import": ("cerebro.cli.commands.portability:import_", "Import a json or jsonl export (skip or replace)"),
    "reembed": ("cerebro.cli.commands.portability:reembed", "Switch the brain to another embedding model (resumable)"),
    "migrate": (
        "cerebro.cli.commands.portability:migrate",
        "Re-key brains hashed through symlinks (--realpath-hashes)",
    ),
    "stats": ("cerebro.cli.commands.stats:stats", "Show brain health"),
    "brains": ("cerebro.cli.commands.brains:app", "List every brain and the project it serves; relink a moved one"),
    "usage": ("cerebro.cli.commands.usage:usage", "Which command fits which situation"),
    "hook": (
        "cerebro.cli.commands.hook:hook",
        "Claude Code hooks: prime, post-compact, session-end (once per session)",
    ),
    "stop-guard": ("cerebro.cli.commands.hook:stop_guard", "Claude Code Stop hook: catch premature stops (opt-in)"),
    "ingest": ("cerebro.cli.commands.ingest:ingest", "Read Claude Code transcripts into session metrics"),
    "dashboard": ("cerebro.cli.commands.dashboard:dashboard", "Live terminal dashboard of session metrics"),
    "eval": ("cerebro.cli.commands.eval:app", "Measure recall quality (your queries, or LoCoMo)"),
    "config": ("cerebro.cli.commands.config:app", "View and change this brain's configuration"),
    "doctor": (
        "cerebro.cli.commands.doctor:doctor",
        "Find every problem with this project's Claude Code setup, with fixes",
    ),
    "mcp": ("cerebro.cli.commands.mcp:mcp", "Serve this project's memory to any agent over MCP (stdio or HTTP)"),
    "completion": ("cerebro.cli.commands.completion:completion", "Shell completion: print or install the script"),
}

HELP = """Local-first persistent memory for AI coding agents.

Each project gets a brain (one SQLite file under $CEREBRO_HOME, default ~/.cerebro)."""


STDIN_TOKEN = "-"  # noqa: S105 - the command-line token for stdin, not a password


class UsageError(Exception):
    def __init__(self, message: str, command: str | None = None) -> None:
        super().__init__(message)
        self.command = command  # the command the bad option came with, if one was seen


def split_global_options(argv: Sequence[str]) -> tuple[dict[str, object], list[str]]:
    """Lift the global options out of ``argv``; returns (options, remaining tokens)."""
    options: dict[str, object] = {}
    rest: list[str] = []
    command: str | None = None
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--":  # noqa: S105 - a command-line token, not a password
            rest.extend(tokens[i:])
            break
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if name == "--with-provenance" and eq:
            # Upstream's spelling `--with-provenance=N` (N: the depth) is ours `--with-provenance --provenance-depth N`.
            if not inline.isdigit():
                raise UsageError(f"--with-provenance=N takes a whole number, got {quote(inline)}", command)
            rest.extend(["--with-provenance", "--provenance-depth", inline])
            i += 1
            continue
        keeps_format = command in _OWN_FORMAT_COMMANDS and name in ("--format", "-f")
        if name in _VALUE_OPTIONS and not keeps_format:
            if eq:
                value = inline
            elif i + 1 < len(tokens):
                i += 1
                value = tokens[i]
            else:
                raise UsageError(f"option {name} needs a value", command)
            options[_VALUE_OPTIONS[name]] = value
        elif token in _FLAG_OPTIONS:
            options[_FLAG_OPTIONS[token]] = True
        else:
            if command is None and not token.startswith("-"):
                command = token
            rest.append(token)
        i += 1
    # A bare "-" (read the content from stdin) looks like an option to Cyclopts: pass it after "--",
    # keeping its place among the positional arguments that follow "--".
    if STDIN_TOKEN in rest[: rest.index("--") if "--" in rest else len(rest)]:
        cut = rest.index("--") if "--" in rest else len(rest)
        head = [t for t in rest[:cut] if t != STDIN_TOKEN]
        tail = rest[cut + 1 :]
        rest = head + ["--"] + [STDIN_TOKEN] * (rest[:cut].count(STDIN_TOKEN)) + tail
    fmt = options.get("format")
    if fmt is not None and fmt not in FORMATS:
        raise UsageError(f"--format must be md, json or jsonl, got {quote(fmt)}", command)
    return options, rest


def build_app(detailed: str | None = None) -> App:
    """The Cyclopts app. Commands load lazily, each with its one-line summary; ``detailed`` names the command
    whose ``--help`` was asked for, registered without the summary so its docstring's full text shows."""
    from cyclopts import App, Parameter

    _strict_numbers()
    app = App(
        name="cerebro",
        help=HELP,
        version=__version__,
        version_flags=["--version", "-V"],
        default_parameter=Parameter(negative=()),
        help_format="plaintext",
    )
    for name, (path, summary) in COMMANDS.items():
        if name == detailed:
            app.command(path, name=name)
        else:
            app.command(path, name=name, help=summary)
    if detailed not in _OWN_FORMAT_COMMANDS:  # export's --format is its own: no global one in its help
        from cerebro.cli.global_options import global_options

        app.meta.default(global_options)  # help only: adds the "Global options" panel to every command's help
    return app


def _strict_numbers() -> None:
    """Numbers on the command line as ``cerebro config set`` takes them: ASCII digits, a sign, for a decimal a point and
    an exponent. Cyclopts' own conversion reads ``--limit 1.5`` as 2 and ``0x10`` as 16, and Python's ``int()`` and
    ``float()`` take ``1_0`` and ``٣``: a typo would run with a number the user never wrote. Cyclopts keeps its
    type-to-converter table in a private module; ``tests/cli/test_bad_input.py`` fails if it moves."""
    from cyclopts import _convert

    from cerebro.config import DECIMAL, WHOLE

    def whole(token: str) -> int:
        if not WHOLE.fullmatch(token):
            raise ValueError(token)
        return int(token)

    def decimal(token: str) -> float:
        if not DECIMAL.fullmatch(token):
            raise ValueError(token)
        return float(token)

    _convert._converters[int] = whole
    _convert._converters[float] = decimal


def _fail(message: str, code: int) -> int:
    """One line on stderr: ``cerebro: error: …``, or under ``--format json`` a JSON object naming the exit code."""
    text = " ".join(str(message).split())
    if state.format in ("json", "jsonl"):
        import json

        from cerebro.errors import exit_name

        error = {"code": code, "name": exit_name(code), "message": text}
        print(json.dumps({"error": error}, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"cerebro: error: {text}", file=sys.stderr)
    return code


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    tokens = list(sys.argv[1:] if argv is None else argv)
    try:
        options, rest = split_global_options(tokens)
    except UsageError as exc:
        if exc.command in ("hook", "stop-guard"):
            # Claude Code reads exit 2 as "block" (the prompt erased, the stop refused): a hook never
            # breaks a session, even when wired with a bad option.
            print(f"cerebro: error: {exc}", file=sys.stderr)
            if exc.command == "stop-guard":
                sys.stdout.write("{}\n")
            return 0
        # The options could not be read; the caller may still have asked for JSON.
        machine = ("json", "jsonl")
        asked = any(t.removeprefix("--format=") in machine for t in tokens if t.startswith("--format=")) or any(
            a in ("--format", "-f") and b in machine for a, b in itertools.pairwise(tokens)
        )
        state.format = "json" if asked else "md"
        return _fail(str(exc), 2)
    state.format = str(options.get("format", "md"))
    state.quiet = bool(options.get("quiet", False))
    if rest[:1] not in (["hook"], ["stop-guard"]):  # a hook never fails a session (they take no user text)
        for number, token in enumerate(tokens, start=1):
            if not _is_utf8(token):
                return _fail(f"argument {number} is not valid UTF-8 text", 2)
    state.project = options.get("project")  # type: ignore[assignment]
    from cerebro import logs

    logs.use_stderr(quiet=state.quiet)

    if rest[:1] == ["hook"] and not {"--help", "-h"} & set(rest):  # Claude Code's hooks: always exit 0
        from cerebro.integration.claude_code import hooks

        return hooks.run(rest[1:])
    if rest[:1] == ["stop-guard"] and not {"--help", "-h"} & set(rest):  # a Stop hook: always exit 0
        from cerebro.integration.claude_code import stop_guard

        return stop_guard.run(rest[1:])

    from cerebro.cli import fast

    spec = fast.parse(rest)
    if spec is not None:
        return _guarded(lambda: fast.run(spec))
    adding = fast.parse_add(rest)
    if adding is not None:
        return _guarded(lambda: fast.run_add(adding))

    def parse_and_run() -> object:
        from cyclopts import CycloptsError

        from cerebro import process

        asks_help = bool({"--help", "-h"} & set(rest)) and bool(rest) and rest[0] in COMMANDS
        app = build_app(detailed=rest[0] if asks_help else None)
        # These commands may run long (a server, an import, an evaluation): the collector main() paused is back on.
        process.resume_collector()
        try:
            return app(rest, exit_on_error=False, print_error=False, result_action="return_value")
        except CycloptsError as exc:
            raise _ParseError(str(exc) or exc.__class__.__name__) from None

    return _guarded(parse_and_run)


class _ParseError(Exception):
    pass


def _is_utf8(token: str) -> bool:
    """Python hands undecodable argv bytes over as lone surrogates, which no brain column can store."""
    try:
        token.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _guarded(work) -> int:  # noqa: ANN001
    """Run a command; every failure becomes one stderr line and an exit code (the only place it happens)."""
    from cerebro.errors import CerebroError

    try:
        result = work()
    except _ParseError as exc:
        return _fail(str(exc), 2)
    except CerebroError as exc:
        return _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0) if isinstance(exc.code, int) else 0
    except OSError as exc:  # the file system refused (a full disk, a file where a folder should be): not a bug
        where = f": {exc.filename}" if exc.filename else ""
        return _fail(f"{exc.strerror or exc}{where}", 1)
    except Exception as exc:  # noqa: BLE001 - a bug: still one line, the traceback only when asked for
        import os

        from cerebro.errors import from_database

        if (told := from_database(exc)) is not None:  # the team server's or the disk's refusal, not a bug
            return _fail(str(told), told.exit_code)

        if os.environ.get("CEREBRO_LOG", "").lower() == "debug":
            import traceback

            traceback.print_exc()
        return _fail(f"internal error: {exc.__class__.__name__}: {exc} (set CEREBRO_LOG=debug for details)", 1)
    return result if isinstance(result, int) else 0


def main() -> None:
    import os

    from cerebro import process

    # A command starts by importing ~23,000 objects that live as long as the process (modules, classes, functions),
    # and the cyclic collector walked them again and again meanwhile: ~6 ms of a `cerebro recall "q"` (ADR 0046).
    # The hooks and the fast path run one bounded command with it off; any other command (and `hook catch-up`, the
    # end-of-session worker) resumes it.
    process.pause_collector()

    # NumPy's OpenBLAS would start a thread per core for the warm index's one matrix-vector product and
    # keep them spinning after it, on the cores the embedder's own threads need next: a recall in
    # ``cerebro mcp`` took 41 ms instead of 30 at 10k memories on 2 cores. Set before NumPy is imported.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # One command, then the process ends: SQLite keeps its connection mutexes (ADR 0043; `cerebro mcp` turns this off).
    process.ONE_SHOT = True
    # Started with stdout or stderr closed (`cerebro stop-guard >&-`), Python leaves them None: write to the
    # void rather than fail (a hook must exit 0 whatever it is given).
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    # A stream that cannot encode every character (PYTHONIOENCODING=ascii, a Latin-1 console) would fail a command
    # after its work was done — a recall's access counts touched, its results never shown: such characters are
    # written as escapes instead (inside a JSON string, a valid one).
    for stream in (sys.stdout, sys.stderr):
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    sys.exit(run())
