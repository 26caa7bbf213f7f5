"""Process-wide presentation state set by the CLI's global options (``--format``, ``--quiet``, ``--project``).

Kept in a leaf module so the library can honour ``--quiet`` for warnings without importing the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CliState:
    format: str = "md"
    quiet: bool = False
    project: str | None = None


state = CliState()
