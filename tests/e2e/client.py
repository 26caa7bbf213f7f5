"""Driving the real Claude Code CLI (pinned in ``tests/e2e/node/package-lock.json``) in an isolated world.

``World`` is one test's sandbox: a temp ``HOME`` (nothing pre-seeded), ``CEREBRO_HOME``, a project folder
and a fake Anthropic API on loopback. ``World.claude(...)`` runs ``claude -p`` there with hook events and a
debug log; ``World.interactive(...)`` drives ``claude`` without ``-p`` under a pseudo-terminal;
``World.cerebro(...)`` runs this repository's CLI from the venv. Nothing reaches beyond 127.0.0.1: the API is
the fake, telemetry, error reporting, auto-update and other non-essential traffic are switched off, and any other
HTTP(S) goes to a proxy address on loopback where nothing listens.

``load_cpu`` keeps cores busy for a block; ``wait_for`` polls a condition until a deadline (tests wait for
outcomes, they never assert how long something took).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from .fake_api import FakeAnthropic

E2E_DIR = Path(__file__).resolve().parent
REPO = E2E_DIR.parent.parent
NODE_DIR = E2E_DIR / "node"
PACKAGE = "@anthropic-ai/claude-code"
# The venv running pytest (`make setup`'s .venv): its `cerebro` runs this working tree's code.
VENV_BIN = Path(sys.executable).parent if (Path(sys.executable).parent / "cerebro").exists() else REPO / ".venv" / "bin"
CEREBRO = VENV_BIN / "cerebro"
RUN_TIMEOUT = 120.0
# A dummy key in the shape of a real one (interactive mode remembers approved keys by their last 20 chars).
API_KEY = "sk-ant-api03-cerebro-e2e-dummy-key-0000000000"
# Off: the auto-updater, telemetry, error reporting, and everything else that is not the model call.
QUIET_ENV = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}
_DEAD_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens, a stray request fails at once
_STRIPPED_PREFIXES = (
    "CLAUDE",
    "ANTHROPIC",
    "CEREBRO_",
    "XDG_",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "OTEL_",
    "NODE_OPTIONS",
)

T = TypeVar("T")


# --------------------------------------------------------------------------- the client binary


def truthy_env(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


def pinned_version() -> str:
    lock = json.loads((NODE_DIR / "package-lock.json").read_text(encoding="utf-8"))
    return lock["packages"][f"node_modules/{PACKAGE}"]["version"]


def find_claude() -> tuple[Path | None, str]:
    """(the pinned claude binary, "") or (None, why not). The npm wrapper's postinstall copies the native
    binary over ``bin/claude.exe``; should that script not have run, the platform package's binary is used."""
    version = pinned_version()
    modules = NODE_DIR / "node_modules"
    candidates = [
        modules / ".bin" / "claude",
        *sorted((modules / "@anthropic-ai").glob("claude-code-*/claude")),
    ]
    found = []
    for candidate in candidates:
        if not (candidate.is_file() and os.access(candidate, os.X_OK)):
            continue
        try:
            with tempfile.TemporaryDirectory(prefix="claude-version-") as home:
                out = subprocess.run(
                    [str(candidate), "--version"],
                    check=False,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    stdin=subprocess.DEVNULL,
                    env={**_base_env(), **QUIET_ENV, "HOME": home},
                )
        except (OSError, subprocess.TimeoutExpired) as exc:
            found.append(f"{candidate}: {exc}")
            continue
        if out.returncode == 0 and out.stdout.split()[:1] == [version]:
            return candidate, ""
        found.append(f"{candidate}: --version said {(out.stdout or out.stderr).strip()[:200]!r}")
    if shutil.which("npm") is None and not found:
        return None, "node/npm not found: install Node.js (with npm), then run `make setup`"
    if not found:
        return None, (
            f"the pinned Claude Code CLI ({PACKAGE}@{version}) is not installed in "
            f"{modules.relative_to(REPO)}: run `make setup`"
        )
    return None, f"no working {PACKAGE}@{version} (run `make setup`): " + "; ".join(found)


# --------------------------------------------------------------------------- environment


def _base_env() -> dict[str, str]:
    """The parent's environment without anything that would point a client or cerebro elsewhere."""
    return {k: v for k, v in os.environ.items() if not k.startswith(_STRIPPED_PREFIXES)}


def _path_without_cerebro(scratch: Path) -> str:
    """A PATH with the system's tools and no `cerebro`: /usr/bin:/bin, or — when a cerebro is installed
    there — a folder of links to everything in them except cerebro."""
    system = ["/usr/bin", "/bin"]
    if shutil.which("cerebro", path=os.pathsep.join(system)) is None:
        return os.pathsep.join(system)
    links = scratch / "bin-without-cerebro"
    links.mkdir(parents=True, exist_ok=True)
    for folder in system:
        for entry in Path(folder).iterdir():
            target = links / entry.name
            if entry.name != "cerebro" and not target.exists():
                target.symlink_to(entry)
    return str(links)


# --------------------------------------------------------------------------- results


_HOOK_LINE = re.compile(r"(?i:\bhooks?\b)|SessionStart|SessionEnd|UserPromptSubmit|PreCompact|PostCompact")
_HOOK_TROUBLE = re.compile(
    r"exit(?: code| status)? 127|status [1-9]|\bnot found\b|\bcancell?ed\b|\bfailed\b|\btimed out\b|\berror\b",
    re.IGNORECASE,
)


@dataclass
class ClaudeRun:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    debug_log: str
    elapsed: float
    events: list[dict[str, Any]] = field(default_factory=list)
    unparsed_lines: list[str] = field(default_factory=list)

    @classmethod
    def build(
        cls, argv: list[str], returncode: int, stdout: str, stderr: str, debug_log: str, elapsed: float
    ) -> ClaudeRun:
        events, unparsed = [], []
        for line in stdout.splitlines():
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                unparsed.append(line)
                continue
            if isinstance(event, dict):
                events.append(event)
        return cls(argv, returncode, stdout, stderr, debug_log, elapsed, events, unparsed)

    @property
    def session_id(self) -> str:
        for event in self.events:
            if event.get("type") == "system" and event.get("subtype") == "init" and event.get("session_id"):
                return event["session_id"]
        for event in self.events:
            if event.get("session_id"):
                return event["session_id"]
        match = re.search(r"--resume ([0-9a-f-]{36})", self.stdout)
        if match:
            return match.group(1)
        raise AssertionError(f"no session id in the client's output\n{self.describe()}")

    @property
    def hook_responses(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("type") == "system" and e.get("subtype") == "hook_response"]

    @property
    def result(self) -> dict[str, Any] | None:
        return next((e for e in reversed(self.events) if e.get("type") == "result"), None)

    def debug_lines(self, *needles: str) -> list[str]:
        """Debug-log lines that contain every needle."""
        return [line for line in self.debug_log.splitlines() if all(n in line for n in needles)]

    def hook_trouble(self) -> list[str]:
        """Lines of the debug log and stderr that report a hook failing, cancelled or not found."""
        lines = [
            line
            for line in self.debug_log.splitlines() + self.stderr.splitlines()
            if _HOOK_LINE.search(line) and _HOOK_TROUBLE.search(line)
        ]
        return [line for line in lines if not _benign(line)]

    def describe(self, tail: int = 6000) -> str:
        return (
            f"$ {' '.join(self.argv)}\nexit {self.returncode} after {self.elapsed:.1f}s\n"
            f"--- stderr\n{self.stderr[-tail:]}\n--- stdout\n{self.stdout[-tail:]}\n"
            f"--- debug log (tail)\n{self.debug_log[-tail:]}"
        )


def _benign(line: str) -> bool:
    """Debug lines that mention a hook and a trouble word without being trouble."""
    return "Event dropped (no event logger initialized)" in line or " finished with status 0" in line


SKILL_LIST_HEADER = "The following skills are available for use with the Skill tool:"


def offered_skills(request_text: str) -> list[str]:
    """The skills the client offered the model in a request: the ``- name: description`` lines after its
    "available for use with the Skill tool" header (a plugin's skills are ``plugin:name``). ``request_text``
    is the request body as JSON text, so its newlines are escaped."""
    names: list[str] = []
    for match in re.finditer(re.escape(SKILL_LIST_HEADER), request_text):
        block = request_text[match.end() :].replace("\\n", "\n")
        for line in block.lstrip("\n").split("\n"):
            item = re.match(r"- ((?:[\w.-]+:)?[\w.-]+): ", line)
            if not item:
                break
            names.append(item.group(1))
    return names


# --------------------------------------------------------------------------- the world


@dataclass
class World:
    root: Path
    claude_bin: Path
    api: FakeAnthropic
    home: Path = field(init=False)
    cerebro_home: Path = field(init=False)
    project: Path = field(init=False)
    runs: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()
        self.home = self.root / "home"
        self.cerebro_home = self.root / "cerebro-home"
        self.project = self.root / "project"
        for folder in (self.home, self.cerebro_home, self.project):
            folder.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ environments

    def env(self, *, with_cerebro: bool = True, **overrides: str) -> dict[str, str]:
        env = _base_env()
        if with_cerebro:
            path = [str(VENV_BIN), str(self.claude_bin.parent)]
            node = shutil.which("node")
            if node:
                path.append(str(Path(node).parent))
            path += ["/usr/local/bin", "/usr/bin", "/bin"]
            env["PATH"] = os.pathsep.join(dict.fromkeys(path))
        else:
            env["PATH"] = _path_without_cerebro(self.root)
            assert shutil.which("cerebro", path=env["PATH"]) is None, env["PATH"]
        env.update(QUIET_ENV)
        env.update(
            {
                "HOME": str(self.home),
                "CEREBRO_HOME": str(self.cerebro_home),
                "ANTHROPIC_API_KEY": API_KEY,
                "ANTHROPIC_BASE_URL": self.api.base_url,
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

    # ------------------------------------------------------------------ cerebro

    def cerebro(self, *args: str, check: bool = True, env: dict[str, str] | None = None) -> str:
        out = subprocess.run(
            [str(CEREBRO), *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            env=env or self.env(),
            stdin=subprocess.DEVNULL,
            cwd=self.project,
        )
        if check and out.returncode != 0:
            raise AssertionError(f"cerebro {' '.join(args)} exited {out.returncode}\n{out.stdout}\n{out.stderr}")
        return out.stdout

    def init(self, *extra: str) -> str:
        return self.cerebro("init", "-p", str(self.project), *extra)

    def add(self, content: str, *extra: str) -> str:
        return self.cerebro("add", "-p", str(self.project), *extra, content).strip().splitlines()[-1]

    @property
    def brain_path(self) -> Path:
        from cerebro.paths import project_hash

        return self.cerebro_home / "projects" / f"{project_hash(self.project)}.sqlite"

    @property
    def metrics_path(self) -> Path:
        from cerebro.paths import project_hash

        return self.cerebro_home / "projects" / f"{project_hash(self.project)}.metrics.sqlite"

    def backdate(self, node_id: str, *, when: str = "2000-01-01 00:00:00", importance: float = 0.001) -> None:
        """Make a memory one that gc's retention formula archives: tiny importance, never accessed since
        ``when``, no accesses counted."""
        with contextlib.closing(sqlite3.connect(self.brain_path, timeout=10)) as conn, conn:
            changed = conn.execute(
                "UPDATE nodes SET created_at = ?, last_accessed = ?, updated_at = ?, importance = ?, "
                "access_count = 0 WHERE id = ?",
                (when, when, when, importance, node_id),
            ).rowcount
        assert changed == 1, f"no memory {node_id} in {self.brain_path}"

    # ------------------------------------------------------------------ claude

    def next_debug_file(self, name: str = "claude") -> Path:
        self.runs += 1
        return self.root / f"{name}-{self.runs}.debug.log"

    def claude_cli(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        timeout: float = RUN_TIMEOUT,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Any claude subcommand (``plugin validate …``), run plainly in the isolated environment."""
        return subprocess.run(
            [str(self.claude_bin), *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env or self.env(),
            stdin=subprocess.DEVNULL,
            cwd=cwd or self.project,
        )

    def claude(
        self,
        prompt: str = "hello",
        *extra: str,
        env: dict[str, str] | None = None,
        timeout: float = RUN_TIMEOUT,
    ) -> ClaudeRun:
        """``claude -p PROMPT --output-format stream-json --verbose --include-hook-events --debug-file F`` in
        the project. The client runs in its own session so that a timeout can end it and all it started."""
        debug_file = self.next_debug_file()
        argv = [
            str(self.claude_bin),
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
            "--debug-file",
            str(debug_file),
            *extra,
        ]
        started = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=self.project,
            env=env or self.env(),
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
            run = ClaudeRun.build(argv, -1, stdout, stderr, _read(debug_file), time.monotonic() - started)
            raise AssertionError(f"claude -p did not finish within {timeout:.0f}s\n{run.describe()}") from None
        return ClaudeRun.build(argv, proc.returncode, stdout, stderr, _read(debug_file), time.monotonic() - started)

    def trust_project(self) -> None:
        """What interactive mode needs to go straight to the prompt: onboarding done, this project's folder
        trusted, the dummy API key approved. (Headless ``-p`` needs none of it.)"""
        config_path = self.home / ".claude.json"
        config = json.loads(config_path.read_text(encoding="utf-8")) if config_path.exists() else {}
        config.update(
            {
                "hasCompletedOnboarding": True,
                "lastOnboardingVersion": pinned_version(),
                "theme": "dark",
                "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
            }
        )
        project = config.setdefault("projects", {}).setdefault(str(self.project), {})
        project.update({"hasTrustDialogAccepted": True, "allowedTools": []})
        config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")

    def interactive(
        self, prompt: str, expect_reply: str, *, env: dict[str, str] | None = None, timeout: float = 60.0
    ) -> InteractiveRun:
        """``claude`` without ``-p`` under a pseudo-terminal: wait for the input box, type ``prompt``, wait
        for ``expect_reply`` on screen, type ``/exit``, wait for the client to exit."""
        self.trust_project()
        debug_file = self.next_debug_file("interactive")
        argv = [str(self.claude_bin), "--debug-file", str(debug_file)]
        term = Terminal.spawn(argv, cwd=self.project, env={**(env or self.env()), "TERM": "xterm-256color"})
        try:
            term.expect("❯", timeout)
            term.settle(quiet=0.5, limit=10)
            term.type_line(prompt)
            term.expect(expect_reply, timeout, ignore_space=True)
            term.settle(quiet=0.3, limit=5)
            term.type_line("/exit")
            status = term.wait_exit(timeout)
        except (TimeoutError, OSError) as exc:
            raise AssertionError(
                f"interactive claude: {exc}\n--- screen\n{term.screen()[-4000:]}\n"
                f"--- debug log\n{_read(debug_file)[-4000:]}"
            ) from None
        finally:
            if term.status is None:
                term.kill()
        return InteractiveRun(argv, status, term.screen(), _read(debug_file))


@dataclass
class InteractiveRun:
    argv: list[str]
    returncode: int
    screen: str
    debug_log: str

    @property
    def session_id(self) -> str:
        match = re.search(r"--resume ([0-9a-f-]{36})", self.screen)
        assert match, f"no session id on the screen\n{self.screen[-3000:]}"
        return match.group(1)

    def debug_lines(self, *needles: str) -> list[str]:
        return [line for line in self.debug_log.splitlines() if all(n in line for n in needles)]

    def describe(self) -> str:
        return (
            f"$ {' '.join(self.argv)}\nexit {self.returncode}\n--- screen\n{self.screen[-3000:]}\n"
            f"--- debug log (tail)\n{self.debug_log[-4000:]}"
        )


# --------------------------------------------------------------------------- a pseudo-terminal


_ANSI = re.compile(
    r"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[78=>]|[\x0e\x0f]"
)


class Terminal:
    """A child process on a pseudo-terminal (120×40), read as text with the escape sequences removed."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid, self.fd = pid, fd
        self.raw = b""
        self.closed = False
        self.status: int | None = None

    @classmethod
    def spawn(cls, argv: list[str], *, cwd: Path, env: dict[str, str]) -> Terminal:
        pid, fd = pty.fork()
        if pid == 0:  # the child: never return into pytest
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        return cls(pid, fd)

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self.closed and time.monotonic() < end:
            ready, _, _ = select.select([self.fd], [], [], min(0.1, max(0.0, end - time.monotonic())))
            if not ready:
                continue
            try:
                data = os.read(self.fd, 65536)
            except OSError as exc:  # EIO: the child closed the terminal
                if exc.errno != errno.EIO:
                    raise
                data = b""
            if not data:
                self.closed = True
            self.raw += data

    def screen(self) -> str:
        return _ANSI.sub("", self.raw.decode("utf-8", errors="replace"))

    def expect(self, text: str, timeout: float, *, ignore_space: bool = False) -> None:
        """Wait until ``text`` has been drawn (with ``ignore_space``, whitespace on either side is ignored:
        the client positions words with cursor moves, not spaces)."""
        squash = (lambda s: re.sub(r"\s+", "", s)) if ignore_space else (lambda s: s)
        wanted = squash(text)
        deadline = time.monotonic() + timeout
        while wanted not in squash(self.screen()):
            if self.closed or time.monotonic() > deadline:
                raise TimeoutError(f"{text!r} never appeared")
            self.pump(0.1)

    def settle(self, *, quiet: float, limit: float) -> None:
        """Read until nothing new has arrived for ``quiet`` seconds (at most ``limit`` seconds)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline and not self.closed:
            before = len(self.raw)
            self.pump(quiet)
            if len(self.raw) == before:
                return

    def type_line(self, text: str) -> None:
        """Type the text, then Enter on its own (Enter in the same write reads as a paste)."""
        os.write(self.fd, text.encode())
        self.settle(quiet=0.3, limit=3)
        os.write(self.fd, b"\r")

    def wait_exit(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump(0.1)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pump(0.2)
                os.close(self.fd)
                self.status = os.waitstatus_to_exitcode(status)
                return self.status
        raise TimeoutError("the client did not exit")

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)
        with contextlib.suppress(OSError):
            os.close(self.fd)


# --------------------------------------------------------------------------- helpers


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def wait_for(
    condition: Callable[[], T],
    *,
    timeout: float = 60.0,
    interval: float = 0.1,
    what: str = "the condition",
    diagnose: Callable[[], str] | None = None,
) -> T:
    """Poll ``condition`` until it returns something truthy (returned) or the deadline passes (AssertionError
    naming ``what``, plus ``diagnose()``'s account of the state)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            detail = diagnose() if diagnose else ""
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}\n{detail}")
        time.sleep(interval)


def query(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]] | None:
    """Rows of a read-only query, or None while the database (or its table) is not there or is locked."""
    if not db.is_file():
        return None
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)) as conn:
            return conn.execute(sql, params).fetchall()
    except sqlite3.Error:
        return None


_HOG_SECONDS = 240  # a hog ends by itself even if the test process is killed before it can end the hogs


@contextlib.contextmanager
def load_cpu(n: int = 2) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` busy-looping processes for the duration of the block; killed (and reaped) afterwards."""
    code = f"import time\nend = time.monotonic() + {_HOG_SECONDS}\nwhile time.monotonic() < end: pass\n"
    hogs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(n)
    ]
    try:
        yield hogs
    finally:
        for hog in hogs:
            with contextlib.suppress(OSError):
                hog.kill()
        for hog in hogs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                hog.wait(timeout=10)
