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

import os
import sys
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

    from structlog.typing import FilteringBoundLogger

LOGGER_NAME = "cerebro"
ENV_LEVEL = "CEREBRO_LOG"
# logging's own level numbers, spelled out: importing logging costs every command ~10 ms of start-up on a slow machine
# (ADR 0036), and most runs warn nothing — it is imported at the first warning.
DEBUG, INFO, WARNING, ERROR = 10, 20, 30, 40
_LEVELS = {"debug": DEBUG, "info": INFO, "warning": WARNING, "error": ERROR}

_quiet = False
_front_end = False  # a front end asked for warnings on stderr (use_stderr)
_structlog_level: int | None = None  # the level structlog was configured for, if it was


def warn(message: str) -> None:
    """A one-line warning for the user."""
    import logging

    if _front_end:
        _show_on_stderr()
    logging.getLogger(LOGGER_NAME).warning(message)


@cache
def _stderr_lines() -> type[logging.Handler]:
    """The handler class, defined once logging is imported."""
    import logging

    class StderrLines(logging.Handler):
        """``cerebro: warning: …`` on whatever ``sys.stderr`` is at the time (tests swap it)."""

        def emit(self, record: logging.LogRecord) -> None:
            try:
                message = " ".join(record.getMessage().splitlines())
                sys.stderr.write(f"cerebro: {record.levelname.lower()}: {message}\n")
            except Exception:  # noqa: BLE001 - logging.Handler's contract: report, never raise
                self.handleError(record)

    return StderrLines


def use_stderr(*, quiet: bool) -> None:
    """The front ends' set-up: warnings as lines on stderr, silenced by ``-q``. Idempotent. Applied to the
    ``cerebro`` logger now if logging is loaded, else at the first warning."""
    global _quiet, _front_end  # the process-wide settings this module exists to hold
    _quiet, _front_end = quiet, True
    if "logging" in sys.modules:
        _show_on_stderr()


def _show_on_stderr() -> None:
    import logging

    logger = logging.getLogger(LOGGER_NAME)
    handler = _stderr_lines()
    if not any(isinstance(existing, handler) for existing in logger.handlers):
        logger.addHandler(handler())
    logger.setLevel(ERROR if _quiet else WARNING)
    logger.propagate = False  # shown once, by this handler


def level() -> int:
    """The diagnostics level: ``CEREBRO_LOG`` if set (debug, info, warning, error), else warning (error
    under ``-q``)."""
    name = os.environ.get(ENV_LEVEL, "").strip().lower()
    return _LEVELS.get(name, ERROR if _quiet else WARNING)


def info(event: str, **fields: object) -> None:
    """A diagnostic at info level (``CEREBRO_LOG=info``)."""
    if level() <= INFO:
        get_logger().info(event, **fields)


def debug(event: str, **fields: object) -> None:
    """A diagnostic at debug level (``CEREBRO_LOG=debug``)."""
    if level() <= DEBUG:
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
