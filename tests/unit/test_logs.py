"""The logging story (ADR 0024): warnings through the ``cerebro`` logger, shown by the front ends as one
line on stderr (none under -q); diagnostics through structlog only when CEREBRO_LOG asks for them."""

from __future__ import annotations

import logging
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerebro import logs
from tests.conftest import FIXTURES, env_without_home_leaks


@pytest.fixture
def cerebro_logger() -> Iterator[logging.Logger]:
    """The ``cerebro`` logger as a program that imports cerebro finds it; put back afterwards."""
    logger = logging.getLogger(logs.LOGGER_NAME)
    saved = (logger.handlers[:], logger.level, logger.propagate)
    logger.handlers[:] = []
    logger.setLevel(logging.NOTSET)
    logger.propagate = True
    yield logger
    logger.handlers[:], logger.level, logger.propagate = saved


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_the_librarys_warnings_go_to_the_cerebro_logger_not_the_terminal(
    cerebro_logger: logging.Logger, brain, capsys: pytest.CaptureFixture[str]
) -> None:
    collected = _Collect()
    cerebro_logger.addHandler(collected)
    brain.on_warning("embedding failed for 1234abcd: provider down")
    assert [(r.levelno, r.getMessage()) for r in collected.records] == [
        (logging.WARNING, "embedding failed for 1234abcd: provider down")
    ]
    assert capsys.readouterr().out == ""


def test_a_front_end_shows_each_warning_as_one_line_and_q_silences_them(
    cerebro_logger: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    logs.use_stderr(quiet=False)
    logs.use_stderr(quiet=False)  # idempotent: one handler, each warning shown once
    logs.warn("the reranker failed\n(exit 1)")
    assert capsys.readouterr() == ("", "cerebro: warning: the reranker failed (exit 1)\n")
    logs.use_stderr(quiet=True)
    logs.warn("not shown")
    assert capsys.readouterr() == ("", "")
    logs.use_stderr(quiet=False)  # the next test's CLI run starts from the default


@pytest.mark.parametrize(
    ("setting", "shown"), [(None, False), ("warning", False), ("info", True), ("debug", True), ("INFO", True)]
)
def test_diagnostics_appear_only_when_cerebro_log_asks_and_cost_no_import_otherwise(
    tmp_path: Path, setting: str | None, shown: bool
) -> None:
    brain = tmp_path / "old.sqlite"
    with sqlite3.connect(brain) as conn:  # an upstream v1 brain: opening it upgrades it, which is logged
        conn.executescript((FIXTURES / "brains" / "v1.sql").read_text())
    env = env_without_home_leaks()
    if setting is not None:
        env["CEREBRO_LOG"] = setting
    program = (
        "import sys\nfrom cerebro import Brain\nBrain.open(sys.argv[1]).close()\nprint('structlog' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, str(brain)], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    assert ("upgrading brain" in done.stderr) is shown
    assert done.stdout == f"{shown}\n"  # structlog is imported only to say something
    if shown:
        assert f"backup={tmp_path}" in done.stderr.replace("'", "")


def test_an_upgrade_says_which_brain_and_where_its_backup_went(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process twin of the subprocess test above (mutation testing sees only this process)."""
    from cerebro import Brain

    brain = tmp_path / "old.sqlite"
    with sqlite3.connect(brain) as conn:
        conn.executescript((FIXTURES / "brains" / "v1.sql").read_text())
    monkeypatch.setenv("CEREBRO_LOG", "info")
    monkeypatch.setattr(logs, "_structlog_level", None)  # configure afresh, on this test's stderr
    with Brain.open(brain) as opened:
        backup = opened.upgrade_backup
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "upgrading brain" in line]
    assert re.search(r"(^|\s)upgrading brain\s", line), line  # the words alone
    assert f"brain={brain}" in line.replace("'", "") and f"backup={backup}" in line.replace("'", "")
    monkeypatch.setattr(logs, "_structlog_level", None)


@pytest.mark.parametrize("quiet", [False, True])
def test_a_front_end_loads_logging_only_when_it_first_warns(quiet: bool) -> None:
    """The hooks and prime never warn, so they never import logging (~10 ms of a slow machine's start-up, ADR 0036);
    a front end that does warn still shows one line per warning, and none under -q."""
    code = (
        "import sys\n"
        "from cerebro import logs\n"
        f"logs.use_stderr(quiet={quiet})\n"
        "print('logging' in sys.modules)\n"
        "logs.warn('the reranker failed\\n(exit 1)')\n"
        "logs.warn('again')\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout == "False\n"
    shown = "" if quiet else "cerebro: warning: the reranker failed (exit 1)\ncerebro: warning: again\n"
    assert ran.stderr == shown
