"""Fixtures for the end-to-end tests.

Without the pinned Claude Code CLI (``make setup`` installs it with npm into ``tests/e2e/node/``) these
tests skip with the reason — except under ``CI`` (set and not false), where a missing client is a broken
set-up and every e2e test errors with the same message. The Codex CLI (same lock, same install) follows the
same rule for the tests that drive it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .client import World, find_claude, truthy_env
from .codex_client import CodexWorld, find_codex
from .fake_api import FakeAnthropic
from .fake_openai import FakeOpenAI

_found: tuple[Path | None, str] | None = None
_found_codex: tuple[Path | None, str] | None = None


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    global _found
    if _found is None:
        _found = find_claude()
    path, reason = _found
    if path is None:
        if truthy_env("CI"):
            pytest.fail(
                f"CI: the end-to-end tests need the real Claude Code CLI, and {reason}", pytrace=False
            )
        pytest.skip(reason)
    return path


@pytest.fixture
def fake_api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as api:
        yield api


@pytest.fixture
def world(tmp_path_factory: pytest.TempPathFactory, claude_bin: Path, fake_api: FakeAnthropic) -> World:
    """A temp HOME, CEREBRO_HOME and project folder, and the fake API: one test's whole world. (The folder's
    name is neutral, not the test's: a test named after hook errors must not find "hook" and "error" in
    every path the client logs.)"""
    return World(tmp_path_factory.mktemp("world"), claude_bin, fake_api)


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    global _found_codex
    if _found_codex is None:
        _found_codex = find_codex()
    path, reason = _found_codex
    if path is None:
        if truthy_env("CI"):
            pytest.fail(f"CI: the end-to-end tests need the real Codex CLI, and {reason}", pytrace=False)
        pytest.skip(reason)
    return path


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as api:
        yield api


@pytest.fixture
def codex_world(tmp_path_factory: pytest.TempPathFactory, codex_bin: Path, fake_openai: FakeOpenAI) -> CodexWorld:
    """A temp HOME with a seeded CODEX_HOME, CEREBRO_HOME, a project folder and the fake OpenAI API."""
    return CodexWorld(tmp_path_factory.mktemp("world"), codex_bin, fake_openai)
