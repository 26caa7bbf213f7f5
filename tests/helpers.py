"""Test helpers shared across the suite (fixtures live in conftest.py files). One definition each: the
per-area helper modules (tests/cli/helpers.py, tests/lifecycle/conftest.py) re-export what they use."""

from __future__ import annotations

MISSING_ID = "00000000-0000-4000-8000-000000000000"  # a valid UUID no test ever creates


def assert_one_line_error(result, *fragments: str, exit_code: int | None = None) -> str:
    """A failed command: non-zero exit (``exit_code`` when given), empty stdout, exactly one stderr line
    ``cerebro: error: ...`` that is not an internal error and contains every fragment (case-insensitive).
    Returns that line."""
    assert result.exit_code != 0, result
    if exit_code is not None:
        assert result.exit_code == exit_code, result
    assert result.stdout == "", result
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    if lines[0].startswith("{"):  # --format json: {"error": {"code", "name", "message"}}
        import json

        from cerebro.errors import exit_name

        error = json.loads(lines[0])["error"]
        assert (error["code"], error["name"]) == (result.exit_code, exit_name(result.exit_code)), result.stderr
        message = error["message"]
    else:
        assert lines[0].startswith("cerebro: error:"), result.stderr
        message = lines[0]
    assert "internal error" not in message, result.stderr
    for fragment in fragments:
        assert fragment.lower() in message.lower(), (fragment, result.stderr)
    return message


def run_in_process(argv: list[str], *, stdin: str = "", env: dict[str, str] | None = None):
    """Run ``cerebro ARGV`` in this process as a hook runner would run it in its own: ``env`` is the whole
    environment for the call, stdin is fed, stdout and stderr are captured. Returns a CompletedProcess.

    In-process so that mutation testing (which only sees this process) reaches the code; tests whose point is
    a real process (parallel runs, shell commands, start-up) start one instead."""
    import contextlib
    import io
    import os
    import subprocess
    import sys

    from cerebro.cli.app import run

    saved = dict(os.environ)
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = run(argv)
    finally:
        sys.stdin = old_stdin
        os.environ.clear()
        os.environ.update(saved)
    return subprocess.CompletedProcess(["cerebro", *argv], code, out.getvalue(), err.getvalue())


def worker_running_elsewhere():  # a context manager
    """Hold the end-of-session worker's lock (CEREBRO_HOME of this test) as a running worker would."""
    import contextlib
    import fcntl
    import os

    from cerebro.integration.claude_code import aftercare

    @contextlib.contextmanager
    def held():
        fd = os.open(aftercare._lock_path(), os.O_CREAT | os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    return held()
