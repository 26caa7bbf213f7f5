"""Logging: structlog to stderr, quiet by default.

stdout carries results only. ``-q`` silences warnings too; ``CEREBRO_LOG=debug|info|warning`` raises or
lowers the level. Configured lazily so that importing cerebro costs nothing.
"""

from __future__ import annotations

import logging
import os
import sys

_configured = False
_quiet = False
ENV_LEVEL = "CEREBRO_LOG"


def set_quiet(quiet: bool) -> None:
    """Remember ``-q`` without importing structlog (it costs ~250 ms; most commands never log)."""
    global _quiet, _configured
    _quiet = quiet
    _configured = False


def configure(*, quiet: bool | None = None) -> None:
    global _configured
    import structlog

    quiet = _quiet if quiet is None else quiet

    level_name = os.environ.get(ENV_LEVEL, "error" if quiet else "warning").upper()
    level = getattr(logging, level_name, logging.WARNING)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    _configured = True


def get_logger(name: str = "cerebro"):
    import structlog

    if not _configured:
        configure()
    return structlog.get_logger(name)


def warn(message: str) -> None:
    """A user-facing one-line warning on stderr (e.g. an unregistered relation). Silenced by ``-q``."""
    from cerebro.cli_state import state

    if not state.quiet:
        print(f"cerebro: warning: {message}", file=sys.stderr)
