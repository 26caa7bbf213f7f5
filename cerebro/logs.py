"""What cerebro says on stderr besides results: warnings for the user, and diagnostics (ADR 0024).

- **Warnings** (an embed that failed and left a memory pending, an unregistered relation, a reranker that
  failed): :func:`warn`, through the standard library's ``logging`` under the ``cerebro`` logger. The library
  never prints: the front ends (the CLI, the hooks and the MCP server, all started as ``cerebro …``) call
  :func:`use_stderr`, which shows each warning as one line, ``cerebro: warning: …``, and none under ``-q``;
  a program that imports cerebro decides for itself (unconfigured, Python prints a warning's text on stderr).
- **Diagnostics** (a brain upgraded, a write retried on a lock): :func:`info` and :func:`debug`, rendered by
  structlog as ``key=value`` lines on stderr when ``CEREBRO_LOG=info|debug`` asks for them. The level is checked
  before structlog is imported (it costs ~250 ms with the console renderer): a run that logs nothing pays
  nothing.

stdout carries results only.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

LOGGER_NAME = "cerebro"
ENV_LEVEL = "CEREBRO_LOG"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}

_quiet = False
_structlog_level: int | None = None  # the level structlog was configured for, if it was


def warn(message: str) -> None:
    """A one-line warning for the user."""
    logging.getLogger(LOGGER_NAME).warning(message)


class _StderrLines(logging.Handler):
    """``cerebro: warning: …`` on whatever ``sys.stderr`` is at the time (tests swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = " ".join(record.getMessage().splitlines())
            sys.stderr.write(f"cerebro: {record.levelname.lower()}: {message}\n")
        except Exception:  # noqa: BLE001 - logging.Handler's contract: report, never raise
            self.handleError(record)


def use_stderr(*, quiet: bool) -> None:
    """The front ends' set-up: warnings as lines on stderr, silenced by ``-q``. Idempotent."""
    global _quiet  # noqa: PLW0603 - the process-wide setting this module exists to hold
    _quiet = quiet
    logger = logging.getLogger(LOGGER_NAME)
    if not any(isinstance(handler, _StderrLines) for handler in logger.handlers):
        logger.addHandler(_StderrLines())
    logger.setLevel(logging.ERROR if quiet else logging.WARNING)
    logger.propagate = False  # shown once, by this handler


def level() -> int:
    """The diagnostics level: ``CEREBRO_LOG`` if set (debug, info, warning, error), else warning (error
    under ``-q``)."""
    name = os.environ.get(ENV_LEVEL, "").strip().lower()
    return _LEVELS.get(name, logging.ERROR if _quiet else logging.WARNING)


def info(event: str, **fields: object) -> None:
    """A diagnostic at info level (``CEREBRO_LOG=info``)."""
    if level() <= logging.INFO:
        get_logger().info(event, **fields)


def debug(event: str, **fields: object) -> None:
    """A diagnostic at debug level (``CEREBRO_LOG=debug``)."""
    if level() <= logging.DEBUG:
        get_logger().debug(event, **fields)


def get_logger(name: str = LOGGER_NAME) -> FilteringBoundLogger:
    """The structlog logger for diagnostics, configured for the current level on first use."""
    global _structlog_level  # noqa: PLW0603 - the process-wide setting this module exists to hold
    import structlog

    wanted = level()
    if _structlog_level != wanted:
        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.dev.ConsoleRenderer(colors=False),
            ],
            wrapper_class=structlog.make_filtering_bound_logger(wanted),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
            cache_logger_on_first_use=False,
        )
        _structlog_level = wanted
    logger: FilteringBoundLogger = structlog.get_logger(name)
    return logger
