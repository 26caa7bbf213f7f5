"""Property-based tests (hypothesis) over what comes from outside: command-line arguments, import files and hook
payloads. Whatever the input: no traceback, an exit code from the README's table (never 1, the internal error),
one line on stderr when refused — and a refused command leaves the brain exactly as it was (issue 17)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cerebro import Brain, paths
from tests.helpers import run_in_process

# The README's exit codes, less 1 (internal error: a bug) and those that need a broken machine or brain.
EXPECTED_CODES = {0, 2, 3, 4, 10}
# Few examples, every run: the suite stays fast; `make soak` raises the count (HYPOTHESIS_PROFILE=soak).
settings.register_profile("suite", max_examples=40, deadline=None, derandomize=False)
settings.register_profile("soak", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))
FIXED = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# Text a hostile or broken caller may send: any Unicode (lone surrogates included, as undecodable bytes become on a
# command line), control characters, NUL, huge numbers, JSON fragments.
HOSTILE = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=20),
    st.sampled_from(["", "-", "--", "0", "-1", "1e309", "nan", "inf", "9" * 5000, "{}", "[]", "null", '{"a":', "\x00"]),
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
)
FLAGS = st.sampled_from(
    [
        "--type",
        "--subtype",
        "--importance",
        "--metadata",
        "--limit",
        "-l",
        "--threshold",
        "--format",
        "--status",
        "--as-of",
        "--weight",
        "--provenance-depth",
        "--on-conflict",
        "--dry-run",
        "--apply",
        "--hard",
        "--explain",
        "--allow-secret",
        "--anchor",
        "--beads-id",
        "--origin-actor",
    ]
)
COMMANDS = st.sampled_from(
    [
        ["add"],
        ["update"],
        ["get"],
        ["list"],
        ["recall"],
        ["search"],
        ["edge"],
        ["supersede"],
        ["forget"],
        ["gc"],
        ["reinforce"],
        ["outcome"],
        ["consolidate"],
        ["mark-consolidated"],
        ["config", "set"],
        ["config", "get"],
        ["relation", "add"],
        ["inbox", "add"],
        ["inbox", "approve"],
        ["secrets", "scan"],
        ["anchors"],
        ["stats"],
    ]
)


def snapshot(brain_file: Path) -> dict[str, list]:
    """The brain's rows, table by table (the file's bytes change with checkpoints; its contents must not)."""
    with sqlite3.connect(f"file:{brain_file}?mode=ro", uri=True) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
            )
            if not r[0].startswith(("vec_", "nodes_fts"))
        ]
        return {t: sorted(map(repr, conn.execute(f"SELECT * FROM {t}"))) for t in tables}


@pytest.fixture
def world(project: Path, isolated_home: Path) -> tuple[Path, list[str], dict[str, str], list[str]]:
    """A brain (fake embedder: fast) with two memories: its file, the ``-p`` every run gets, the environment, and
    the memories' ids."""
    path = paths.project_brain_path(project)
    Brain.init(path, embed_provider="fake")
    with Brain.open(path) as brain:
        ids = [brain.add("the deploy needs the VPN"), brain.add("flaky parser test", type="procedure")]
    env = {**os.environ, "CEREBRO_HOME": str(isolated_home)}
    return path, ["-p", str(project)], env, ids


def _check(result, argv: list[str]) -> None:
    assert "Traceback" not in result.stderr, (argv, result.stderr)
    assert result.returncode in EXPECTED_CODES, (argv, result.returncode, result.stderr)
    if result.returncode != 0:
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("cerebro: "), (argv, result.stderr)


@FIXED
@given(command=COMMANDS, rest=st.lists(st.one_of(FLAGS, HOSTILE), max_size=5))
def test_any_arguments_end_in_a_result_or_one_line_and_a_refusal_changes_nothing(
    world, command: list[str], rest: list[str]
) -> None:
    path, project, env, ids = world
    # Real ids now and then, so the commands get past "not found" into their own checks.
    argv = [*command, *(ids[0] if token == "0" else token for token in rest)]
    before = snapshot(path)
    result = run_in_process([*argv, *project], env=env)
    _check(result, argv)
    if result.returncode != 0:
        assert snapshot(path) == before, argv


IMPORT_RECORD = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.sampled_from(["node", "edge", "meta", "archive", "other"]),
        "id": st.one_of(st.uuids().map(str), HOSTILE),
        "type": st.one_of(st.sampled_from(["episode", "concept"]), HOSTILE),
        "content": st.one_of(HOSTILE, st.just("an imported memory")),
        "importance": st.one_of(st.floats(allow_nan=True), HOSTILE, st.integers()),
        "metadata": st.one_of(st.none(), HOSTILE, st.dictionaries(st.text(max_size=5), st.integers())),
        "source_id": HOSTILE,
        "target_id": HOSTILE,
        "relation": HOSTILE,
        "weight": st.one_of(st.floats(allow_nan=True), st.integers()),
        "key": HOSTILE,
        "value": HOSTILE,
        "access_count": st.integers(),
        "created_at": HOSTILE,
    },
)


@FIXED
@given(records=st.lists(IMPORT_RECORD, max_size=4), as_bundle=st.booleans())
def test_any_import_file_imports_or_is_refused_whole(world, tmp_path_factory, records, as_bundle: bool) -> None:
    path, project, env, _ = world
    file = tmp_path_factory.mktemp("import") / ("bundle.json" if as_bundle else "records.jsonl")
    if as_bundle:
        nodes = [r for r in records if r.get("kind") in (None, "node")]
        file.write_text(json.dumps({"version": "1", "nodes": nodes, "edges": []}, default=str), encoding="utf-8")
    else:
        file.write_text("\n".join(json.dumps(r, default=str) for r in records), encoding="utf-8", errors="replace")
    before = snapshot(path)
    argv = ["import", str(file)]
    result = run_in_process([*argv, *project], env=env)
    _check(result, argv)
    if result.returncode != 0:
        assert snapshot(path) == before


PAYLOAD = st.one_of(
    st.dictionaries(
        st.sampled_from(["session_id", "hook_event_name", "source", "transcript_path", "cwd", "prompt", "reason"]),
        st.one_of(HOSTILE, st.integers(), st.none(), st.lists(st.integers(), max_size=2)),
    ),
    HOSTILE,
)


@FIXED
@given(payload=PAYLOAD, hook=st.sampled_from(["prime", "post-compact", "stop-guard"]))
def test_a_hook_exits_0_whatever_claude_code_sends(world, payload, hook: str) -> None:
    """The hooks' contract: exit 0, whatever the payload (a broken or hostile one must never fail or block a
    session). SessionEnd is left out here: each run would start its detached worker (tests/integration covers
    its payloads)."""
    _, project, env, _ = world
    stdin = payload if isinstance(payload, str) else json.dumps(payload, default=str)
    argv = ["stop-guard"] if hook == "stop-guard" else ["hook", hook]
    if hook == "prime":
        argv += ["--event", "sessionstart"]
    result = run_in_process([*argv, *project], stdin=stdin, env=env)
    assert result.returncode == 0, (argv, stdin, result.stderr)
    assert "Traceback" not in result.stderr
