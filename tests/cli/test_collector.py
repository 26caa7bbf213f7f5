"""The CLI runs its bounded one-shot commands (hooks, the fast path) without the cyclic garbage collector, which
walked the start-up's imports again and again; every other command — a server, an import, an evaluation — runs with
it on (ADR 0046)."""

from __future__ import annotations

import subprocess
import sys

import pytest

SHOW_COLLECTOR_AT_EXIT = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('collector', gc.isenabled(), gc.get_freeze_count() > 0, file=sys.stderr))\n"
    "sys.argv = ['cerebro', *sys.argv[1:]]\n"
    "from cerebro.cli.app import main\n"
    "main()\n"
)


@pytest.mark.parametrize(
    ("command", "collecting"),
    [
        (["recall", "--prime"], False),
        (["recall", "a query"], False),
        (["hook", "has-brain"], False),
        (["hook", "prime", "--event", "sessionstart"], False),
        (["hook", "catch-up"], True),
        (["stats"], True),
        (["config", "list"], True),
        (["--version"], True),
    ],
)
def test_only_bounded_one_shot_commands_run_without_the_collector(isolated_home, tmp_path, command, collecting):
    shown = subprocess.run(
        [sys.executable, "-c", SHOW_COLLECTOR_AT_EXIT, *command, "-p", str(tmp_path)],
        input="{}",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    line = [x for x in shown.stderr.splitlines() if x.startswith("collector ")]
    assert line == [f"collector {collecting} {collecting}"], shown.stderr


@pytest.mark.parametrize("collecting", [True, False])
def test_a_program_that_calls_run_keeps_its_collector_as_it_was(collecting):
    """Only main() pauses the collector, so only what it paused is resumed: a program's own setting stays, and none of
    its garbage is frozen."""
    program = (
        "import contextlib, gc, io\n"
        f"gc.enable() if {collecting} else gc.disable()\n"
        "from cerebro.cli.app import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    run(['--version'])\n"
        "print(gc.isenabled(), gc.get_freeze_count())\n"
    )
    shown = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True)
    assert shown.stdout.split() == [str(collecting), "0"]
