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


def _require(found: tuple[Path | None, str], client: str) -> Path:
    """The client's path; without it a skip with the reason — or, under CI, a failure (CI must drive it)."""
    path, reason = found
    if path is None:
        if truthy_env("CI"):
            pytest.fail(f"CI: the end-to-end tests need the real {client}, and {reason}", pytrace=False)
        pytest.skip(reason)  # a developer machine without node/npm: `make setup` installs the clients
    return path


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return _require(find_claude(), "Claude Code CLI")


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
    return _require(find_codex(), "Codex CLI")


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as api:
        yield api


@pytest.fixture
def codex_world(tmp_path_factory: pytest.TempPathFactory, codex_bin: Path, fake_openai: FakeOpenAI) -> CodexWorld:
    """A temp HOME with a seeded CODEX_HOME, CEREBRO_HOME, a project folder and the fake OpenAI API."""
    return CodexWorld(tmp_path_factory.mktemp("world"), codex_bin, fake_openai)
