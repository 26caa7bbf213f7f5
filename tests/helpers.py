"""Test helpers shared across the suite (fixtures live in conftest.py files). One definition each: the
per-area helper modules (tests/cli/helpers.py, tests/lifecycle/conftest.py) re-export what they use."""

from __future__ import annotations

from typing import Any

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
    check_json_contract(argv, code, out.getvalue(), err.getvalue())
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


# ----------------------------------------------------------------------------- the JSON contract

_SCHEMA_CACHE: dict[str, object] = {}


def schema_for(name: str):  # -> a jsonschema validator (typed loosely: jsonschema has no stubs here)
    """The validator of ``cerebro/cli/schemas/<name>.json``, with ``common.json`` and the others resolvable."""
    if name not in _SCHEMA_CACHE:
        import json

        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource

        from cerebro.cli import schemas

        folder = schemas.FOLDER
        registry = Registry().with_resources(
            (path.name, Resource.from_contents(json.loads(path.read_text()))) for path in folder.glob("*.json")
        )
        schema = json.loads((folder / f"{name}.json").read_text())
        _SCHEMA_CACHE[name] = Draft202012Validator(schema, registry=registry)
    return _SCHEMA_CACHE[name]


def check_json_contract(argv, exit_code: int, stdout: str, stderr: str) -> None:
    """Under ``--format json`` or ``jsonl``, what a command printed must fit its schema: stdout (the result,
    whatever the exit code, when there is one) against the command's schema, and a failure's last stderr line
    against ``error.json``. Called for every in-process run of the CLI in the suite (the ``cli`` fixture and
    :func:`run_in_process`), so each test that reads JSON also checks its shape."""
    import json

    from cerebro.cli import schemas
    from cerebro.cli.app import UsageError, split_global_options

    try:
        options, rest = split_global_options(list(argv))
    except UsageError:
        options, rest = {}, []
    fmt = options.get("format")
    if fmt not in ("json", "jsonl") or not rest or {"--help", "-h", "--version", "-V"} & set(rest):
        return
    if rest[0] in ("hook", "stop-guard"):  # Claude Code's hook protocol, not ours
        return
    if exit_code != 0:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        if last.startswith("{"):
            schema_for("error").validate(json.loads(last))
        else:  # an error under --format json is JSON (unless the options themselves could not be read)
            raise AssertionError(f"not a JSON error on stderr under --format {fmt}: {stderr!r}")
    if not stdout.strip():
        assert exit_code != 0, f"{argv}: exit 0 with nothing on stdout"
        return
    name = schemas.name_for(rest)
    assert name is not None, f"no schema in cerebro/cli/schemas/ for {' '.join(rest[:2])}"
    validator = schema_for(name)
    if fmt == "json":
        validator.validate(json.loads(stdout))
        return
    rows = [json.loads(line) for line in stdout.splitlines()]
    key = validator.schema.get("x-jsonl-items")
    if key is None:
        assert len(rows) == 1, f"{argv}: --format jsonl of an output with no list is one line"
        validator.validate(rows[0])
        return
    if len(rows) == 1 and validator.is_valid(rows[0]):
        return  # a shape of the command with no list (consolidate without --suggest): its object on one line
    item = _items_schema(validator.schema, key)
    for row in rows:
        validator.evolve(schema=item).validate(row)


def _items_schema(schema: dict, key: str) -> dict:
    """The schema of one item of the list ``key`` (at the top, or in one of the shapes of a ``oneOf``)."""
    for shape in [schema, *schema.get("oneOf", []), *schema.get("anyOf", [])]:
        found = shape.get("properties", {}).get(key, {}).get("items")
        if found is not None:
            return found
    raise AssertionError(f"x-jsonl-items names {key!r}, which is no list in the schema")


def as_stored(vector: list[float]) -> list[float]:
    """A vector as the brain gives it back: rounded to int8 and normalised (ADR 0029; the default table kind)."""
    from cerebro.store import vec

    return vec.from_blob(vec.to_blob(vector, vec.INT8), vec.INT8)


def memory(**fields: Any) -> Any:  # a cerebro.values.Node
    """A memory built by hand, as a read returns one: an active episode, these ``fields`` changed."""
    from cerebro import values

    stored = dict(  # noqa: C408 - the Node's fields, written as its constructor takes them
        id="abcd1234", type="episode", subtype=None, content="x", metadata={}, importance=0.5, decay_rate=0.15,
        access_count=0, times_reinforced=0, status="active", embedding_model="m", created_at=None,
        last_accessed=None, last_reinforced=None, updated_at=None, last_surfaced=None, provenance_root=True,
        origin=values.Origin(),
    )  # fmt: skip
    return values.Node(**(stored | fields))


def scored(node_id: str, content: str, fused: float, score: float = 0.5) -> Any:  # a cerebro.values.ScoredNode
    """A recall result built by hand (an active episode with this content, ranked by ``fused``): for the steps that
    work on the fused list alone, without a brain."""
    from cerebro import values

    return values.ScoredNode(memory(id=node_id, content=content), score, score, fused=fused)


def watch_collector(monkeypatch: Any, request: Any, module: Any, thread: str) -> list[tuple[str, bool]]:
    """What a build on the thread named ``thread`` does around ``module.read_copy``: ("paused" | "read" | "resumed",
    whether the cyclic collector was on), in order — that thread's only (another test's build may still run). The
    collector is on while the test runs, and as it was after."""
    import gc
    import threading
    from contextlib import contextmanager

    from cerebro import process

    events: list[tuple[str, bool]] = []
    read, paused = module.read_copy, process.collector_paused

    def note(what: str) -> None:
        if threading.current_thread().name == thread:
            events.append((what, gc.isenabled()))

    def watched(*args: object, **kwargs: object) -> object:
        note("read")
        return read(*args, **kwargs)

    @contextmanager
    def noted() -> Any:
        with paused():
            note("paused")
            yield
        note("resumed")

    monkeypatch.setattr(module, "read_copy", watched)
    monkeypatch.setattr(process, "collector_paused", noted)
    request.addfinalizer(gc.enable if gc.isenabled() else gc.disable)
    gc.enable()
    return events
