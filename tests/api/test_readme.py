"""The README's Python block runs as written (issue 16): a user's first copy-paste must work."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import env_without_home_leaks

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readmes_python_example_runs(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has a Python example"
    for block in blocks:
        done = subprocess.run(
            [sys.executable, "-c", block],
            env=env_without_home_leaks(),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "Chose SQLite" in done.stdout  # the recall loop printed what it found
