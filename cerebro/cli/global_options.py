"""The global options as Cyclopts sees them: a signature for the help of every command ("Global options").

:func:`cerebro.cli.app.split_global_options` reads them before Cyclopts sees argv (ADR 0005: anywhere on the
line, everything after ``--`` left alone, ``export --format`` kept for export, and recall's fast path never
imports Cyclopts). This signature only describes them, so that help shows their names, choices and meaning;
``tests/cli/test_help.py`` checks it and the pre-parser agree.
"""

from __future__ import annotations

from typing import Annotated, Literal

from cyclopts import Group, Parameter

GLOBAL_GROUP = Group("Global options (before or after the command)", sort_key=100)


def global_options(
    *tokens: Annotated[str, Parameter(show=False, allow_leading_hyphen=True)],
    format: Annotated[
        Literal["md", "json", "jsonl"],
        Parameter(
            name=["--format", "-f"],
            group=GLOBAL_GROUP,
            help="md for people; json (one object per command, schema in cerebro/cli/schemas/) or jsonl for scripts",
        ),
    ] = "md",
    project: Annotated[
        str | None,
        Parameter(
            name=["--project", "-p"],
            group=GLOBAL_GROUP,
            help="The project folder (default: $CLAUDE_PROJECT_DIR, else the current folder)",
        ),
    ] = None,
    quiet: Annotated[
        bool, Parameter(name=["--quiet", "-q"], group=GLOBAL_GROUP, help="Only results: no warnings, no progress")
    ] = False,
) -> None:
    """Never called for a command (help only): the pre-parser has already taken these options out."""
