"""Process-wide presentation state set by the CLI's global options (``--format``, ``--quiet``, ``--project``).

Kept in a leaf module so the library can honour ``--quiet`` for warnings without importing the CLI.
"""

from __future__ import annotations


class CliState:
    """A plain class, not a dataclass: every command imports it (~1 ms less, ADR 0053)."""

    def __init__(self) -> None:
        self.format = "md"
        self.quiet = False
        self.project: str | None = None


state = CliState()
