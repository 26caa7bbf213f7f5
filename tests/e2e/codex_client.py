"""Driving the real Codex CLI (pinned in ``tests/e2e/node/package-lock.json``) in an isolated world.

``CodexWorld`` is one test's sandbox: a temp ``HOME`` and ``CODEX_HOME``, ``CEREBRO_HOME``, a project folder and a
fake OpenAI Responses API on loopback (:mod:`.fake_openai`). ``CODEX_HOME/config.toml`` is seeded with what a
headless run needs and nothing else:

- ``model_provider = "fake"`` with ``[model_providers.fake]`` ``base_url`` = the fake, ``wire_api = "responses"``
  (the only wire format Codex speaks; it POSTs ``{base_url}/responses`` and reads server-sent events) and
  ``env_key`` naming the variable that holds a dummy key;
- ``[projects."<project>"] trust_level = "trusted"``: Codex reads a project's ``.codex/config.toml`` (where
  ``cerebro init --agent codex`` puts the MCP server) only in a trusted project.

``CodexWorld.codex(...)`` runs ``codex exec --json --skip-git-repo-check`` in the project (exec's defaults:
approval policy ``never``, sandbox ``workspace-write``, which works as root in a container; MCP servers run
outside the sandbox). Any other HTTP(S) goes to a dead proxy on loopback, as for Claude Code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .client import (
    _DEAD_PROXY,
    CEREBRO,
    NODE_DIR,
    QUIET_ENV,
    REPO,
    RUN_TIMEOUT,
    VENV_BIN,
    _base_env,
    _kill_group,
)
from .fake_openai import FakeOpenAI

PACKAGE = "@openai/codex"
API_KEY_VAR = "CEREBRO_E2E_FAKE_OPENAI_KEY"
MODEL = "gpt-fake"


def pinned_version() -> str:
    lock = json.loads((NODE_DIR / "package-lock.json").read_text(encoding="utf-8"))
    return lock["packages"][f"node_modules/{PACKAGE}"]["version"]


def find_codex() -> tuple[Path | None, str]:
    """(the pinned codex launcher, "") or (None, why not). The npm package's ``bin/codex.js`` starts the
    platform package's native binary (an optional dependency installed next to it)."""
    version = pinned_version()
    launcher = NODE_DIR / "node_modules" / ".bin" / "codex"
    if not launcher.exists():
        if shutil.which("npm") is None:
            return None, "node/npm not found: install Node.js (with npm), then run `make setup`"
        return None, (
            f"the pinned Codex CLI ({PACKAGE}@{version}) is not installed in "
            f"{(NODE_DIR / 'node_modules').relative_to(REPO)}: run `make setup`"
        )
    try:
        with tempfile.TemporaryDirectory(prefix="codex-version-") as home:
            out = subprocess.run(
                [str(launcher), "--version"],
                check=False,
                capture_output=True,
                text=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
                env={**_base_env(), **QUIET_ENV, "HOME": home, "CODEX_HOME": home},
            )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"no working {PACKAGE}@{version} (run `make setup`): {launcher}: {exc}"
    if out.returncode == 0 and out.stdout.split()[-1:] == [version]:
        return launcher, ""
    said = (out.stdout or out.stderr).strip()[-300:]
    return None, f"no working {PACKAGE}@{version} (run `make setup`): {launcher} --version said {said!r}"


@dataclass
class CodexRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    elapsed: float
    events: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def build(cls, argv: list[str], returncode: int, stdout: str, stderr: str, elapsed: float) -> CodexRun:
        events = []
        for line in stdout.splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return cls(argv, returncode, stdout, stderr, elapsed, events)

    def items(self, kind: str) -> list[dict[str, Any]]:
        """The completed items of one type (``mcp_tool_call``, ``agent_message``, ``error``…)."""
        return [
            e["item"]
            for e in self.events
            if e.get("type") == "item.completed" and isinstance(e.get("item"), dict) and e["item"].get("type") == kind
        ]

    def describe(self, tail: int = 6000) -> str:
        return (
            f"$ {' '.join(self.argv)}\nexit {self.returncode} after {self.elapsed:.1f}s\n"
            f"--- stderr\n{self.stderr[-tail:]}\n--- stdout\n{self.stdout[-tail:]}"
        )


@dataclass
class CodexWorld:
    root: Path
    codex_bin: Path
    api: FakeOpenAI
    home: Path = field(init=False)
    codex_home: Path = field(init=False)
    cerebro_home: Path = field(init=False)
    project: Path = field(init=False)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.home = self.root / "home"
        self.codex_home = self.home / ".codex"
        self.cerebro_home = self.root / "cerebro-home"
        self.project = self.root / "project"
        for folder in (self.codex_home, self.cerebro_home, self.project):
            folder.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(
            f'model = "{MODEL}"\n'
            'model_provider = "fake"\n\n'
            "[model_providers.fake]\n"
            'name = "fake OpenAI API"\n'
            f"base_url = {json.dumps(self.api.base_url)}\n"
            f'env_key = "{API_KEY_VAR}"\n'
            'wire_api = "responses"\n\n'
            f"[projects.{json.dumps(str(self.project))}]\n"
            'trust_level = "trusted"\n',
            encoding="utf-8",
        )

    def env(self, **overrides: str) -> dict[str, str]:
        env = _base_env()
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY", "RUST_LOG"):
            env.pop(name, None)
        path = [str(VENV_BIN), str(self.codex_bin.parent)]
        node = shutil.which("node")
        if node:
            path.append(str(Path(node).parent))
        env["PATH"] = os.pathsep.join(dict.fromkeys([*path, "/usr/local/bin", "/usr/bin", "/bin"]))
        env.update(QUIET_ENV)
        env.update(
            {
                "HOME": str(self.home),
                "CODEX_HOME": str(self.codex_home),
                "CEREBRO_HOME": str(self.cerebro_home),
                API_KEY_VAR: "sk-cerebro-e2e-dummy",
                "HTTP_PROXY": _DEAD_PROXY,
                "HTTPS_PROXY": _DEAD_PROXY,
                "NO_PROXY": "127.0.0.1,localhost",
                "http_proxy": _DEAD_PROXY,
                "https_proxy": _DEAD_PROXY,
                "no_proxy": "127.0.0.1,localhost",
            }
        )
        env.pop("VIRTUAL_ENV", None)
        env.update(overrides)
        return env

    def cerebro(self, *args: str) -> str:
        out = subprocess.run(
            [str(CEREBRO), *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            cwd=self.project,
        )
        if out.returncode != 0:
            raise AssertionError(f"cerebro {' '.join(args)} exited {out.returncode}\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def init(self, *extra: str) -> str:
        return self.cerebro("init", "-p", str(self.project), *extra)

    def add(self, content: str, *extra: str) -> str:
        return self.cerebro("add", "-p", str(self.project), *extra, content).strip().splitlines()[-1]

    def codex(self, prompt: str, *extra: str, timeout: float = RUN_TIMEOUT) -> CodexRun:
        """``codex exec --json --skip-git-repo-check [extra] PROMPT`` in the project, in its own session (so a
        timeout ends it and the MCP servers it started)."""
        argv = [str(self.codex_bin), "exec", "--json", "--skip-git-repo-check", *extra, prompt]
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=self.project,
            env=self.env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid)
            stdout, stderr = proc.communicate()
            run = CodexRun.build(argv, -1, stdout, stderr, time.monotonic() - started)
            raise AssertionError(f"codex exec did not finish within {timeout:.0f}s\n{run.describe()}") from None
        return CodexRun.build(argv, proc.returncode, stdout, stderr, time.monotonic() - started)
