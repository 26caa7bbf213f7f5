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
    assert lines[0].startswith("cerebro: error:"), result.stderr
    assert "internal error" not in lines[0], result.stderr
    for fragment in fragments:
        assert fragment.lower() in lines[0].lower(), (fragment, result.stderr)
    return lines[0]
