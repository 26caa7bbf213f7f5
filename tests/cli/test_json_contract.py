"""The JSON contract (issue 16): every command's ``--format json`` output is one object whose shape no flag
changes, validated against its schema in ``cerebro/cli/schemas/``; ``--format jsonl`` prints a list output one
item per line; an error under either is a JSON object on stderr naming the exit code.

Every in-process run of the CLI in the suite is checked against the schemas (``tests/helpers.check_json_contract``,
called by the ``cli`` fixture); this module runs each command — with each flag that once changed the shape — on
one brain that has something of everything, and checks that the schemas themselves would catch a change.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from jsonschema import ValidationError

from cerebro.cli import schemas
from cerebro.cli.app import COMMANDS, split_global_options
from tests.conftest import FIXTURES
from tests.helpers import MISSING_ID, schema_for

NO_JSON = {
    "dashboard": "a terminal UI (refused under --format json)",
    "mcp": "a server speaking MCP on stdio or HTTP",
    "hook": "Claude Code's hook protocol (its own JSON on stdout)",
    "stop-guard": "Claude Code's Stop hook protocol",
    "export": "its --format names the dump's format (json, jsonl, sqlite): the dump is its output",
}


@pytest.fixture
def world(cli, project: Path, tmp_path: Path, team_url: str) -> dict[str, str]:
    """A brain with episodes, a concept derived from two of them, edges, an inbox candidate, a global brain,
    ingested session metrics and a team database to share with. Returns the ids and paths the command lines below
    use."""

    def ok(*args: str) -> dict:
        result = cli(*args, "--format", "json")
        assert result.exit_code == 0, result
        return result.json()

    ok("init", "--skip-integration", "--embed-provider", "fake")
    ok("init", "--global", "--embed-provider", "fake")
    ids = {
        "e1": ok("add", "the deploy needs the VPN", "--subtype", "deploy")["id"],
        "e2": ok("add", "the deploy failed without the VPN", "--subtype", "deploy")["id"],
        "concept": ok("add", "deploys need the VPN", "--type", "concept", "--importance", "0.8")["id"],
        "other": ok("add", "flaky test in the parser", "--type", "procedure")["id"],
        "secret": ok("add", "the staging password is Xk9#mP2vQ", "--allow-secret")["id"],
    }
    ok("consolidate", ids["e1"], ids["e2"], "--into", ids["concept"])
    ok("edge", ids["concept"], ids["other"], "relates_to")
    ids["candidate"] = ok("inbox", "add", "maybe the parser needs a lock")["id"]
    ids["doubtful"] = ok("inbox", "add", "maybe the cache is stale")["id"]
    ok("relation", "add", "blocks_release")
    ok("team", "connect", team_url, "--team-project", "world")
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    shutil.copy(FIXTURES / "claude-code" / "cerebro__simple_session.jsonl", sessions / "simple.jsonl")
    ok("ingest", "--session-dir", str(sessions))
    assert cli("export", "-o", str(tmp_path / "b.json")).exit_code == 0
    queries, truth = tmp_path / "queries.jsonl", tmp_path / "truth.jsonl"
    queries.write_text(json.dumps({"query_id": "q1", "query": "deploy VPN"}) + "\n")
    truth.write_text(json.dumps({"query_id": "q1", "relevant_node_ids": [ids["concept"]]}) + "\n")
    moved = tmp_path / "moved-project"
    moved.mkdir()
    ids |= {
        "sessions": str(sessions),
        "queries": str(queries),
        "truth": str(truth),
        "dump": str(tmp_path / "b.json"),
        "project": str(project),
        "moved": str(moved),
        "locomo": str(FIXTURES / "locomo"),
        "team": team_url,
    }
    return ids


# Each command line, with the flags that once changed its shape. {name} is filled from the world above.
COMMAND_LINES = [
    "team connect {team} --team-project world",
    "team push --all",
    "team pull",
    "add 'a new memory'",
    "get {other}",
    "get {concept} --with-provenance",
    "update {other} --importance 0.9",
    "list",
    "list --type concept",
    "edge {other} {e1} supports",
    "relation add cites",
    "relation list",
    "relation rm blocks_release",
    "reinforce {concept}",
    "supersede {other} 'the parser test is flaky on CI'",
    "recall 'deploy VPN'",
    "recall 'deploy VPN' --explain",
    "recall 'deploy VPN' --with-provenance",
    "recall --prime",
    "recall 'deploy VPN' --global",
    "search 'deploy VPN' --threshold 0",
    "embed --pending",
    "gc --dry-run",
    "gc",
    "mark-consolidated {e1}",
    "consolidate --suggest",
    "consolidate {e2} --into {concept}",
    "promote {concept}",
    "promote {other} --team",
    "outcome {concept} --success",
    "forget --subject parser",
    "anchors",
    "inbox add 'another candidate'",
    "inbox list",
    "inbox approve {candidate}",
    "inbox discard {doubtful}",
    "backup",
    "import {dump}",
    "reembed --force",
    "stats",
    "stats --metrics",
    "brains",
    "usage",
    "completion bash",
    "config list",
    "config get recall_threshold",
    "config set recall_threshold 0.4",
    "config reset recall_threshold",
    "ingest --session-dir {sessions} --force",
    "eval --queries {queries} --ground-truth {truth}",
    "eval locomo {locomo}",
    "migrate --realpath-hashes --dry-run",
    "init --skip-integration",
    "doctor",
    "brains relink {project} {moved}",
    "secrets scan",
    "secrets redact --dry-run",
    "secrets redact",
]


def _argv(line: str, world: dict[str, str]) -> list[str]:
    import shlex

    return shlex.split(line.format(**world))


@pytest.mark.parametrize("line", COMMAND_LINES)
def test_each_command_prints_json_that_fits_its_schema(cli, world, line: str) -> None:
    argv = _argv(line, world)
    result = cli(*argv, "--format", "json")  # the cli fixture validates the output against the schema
    assert result.exit_code == (12 if argv == ["doctor"] else 0), result  # doctor: exit 12 when a check fails
    name = schemas.name_for(argv)
    assert name is not None
    schema_for(name).validate(result.json())  # and once more here, so this test fails on its own


def test_every_command_has_a_schema_or_a_reason_not_to(world) -> None:
    covered = {schemas.name_for(_argv(line, world)) for line in COMMAND_LINES}
    files = {p.stem for p in schemas.FOLDER.glob("*.json")} - {"common", "error"}
    assert files - covered == set(), "schemas no test line exercises"
    commands_run = {_argv(line, world)[0] for line in COMMAND_LINES}
    assert set(COMMANDS) - commands_run == set(NO_JSON)


def test_every_schema_is_a_valid_json_schema() -> None:
    from jsonschema import Draft202012Validator

    for path in schemas.FOLDER.glob("*.json"):
        Draft202012Validator.check_schema(json.loads(path.read_text()))


@pytest.mark.parametrize(
    ("line", "key"),
    [("list", "memories"), ("recall 'deploy VPN'", "results"), ("config list", "settings"), ("brains", "brains")],
)
def test_jsonl_prints_each_item_of_a_list_on_its_own_line(cli, world, line: str, key: str) -> None:
    argv = _argv(line, world)
    whole = cli(*argv, "--format", "json").json()[key]
    lines = cli(*argv, "--format", "jsonl").stdout.splitlines()
    assert len(whole) > 0
    rows = [json.loads(row) for row in lines]
    identity = "key" if key == "settings" else "path" if key == "brains" else "id"
    assert [row[identity] for row in rows] == [item[identity] for item in whole]  # recall counts its reads


def test_jsonl_of_an_output_without_a_list_is_one_line(cli, world) -> None:
    argv = _argv("get {other}", world)
    lines = cli(*argv, "--format", "jsonl").stdout.splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == cli(*argv, "--format", "json").json()


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_an_error_under_json_is_a_json_object_naming_the_exit_code(cli, world, fmt: str) -> None:
    result = cli("get", MISSING_ID, "--format", fmt)
    assert result.exit_code == 3 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    error = json.loads(line)
    schema_for("error").validate(error)
    assert (error["error"]["code"], error["error"]["name"]) == (3, "not_found")


@pytest.mark.parametrize("spelling", [("--format", "json"), ("-f", "json"), ("--format=json",)])
def test_an_error_before_the_options_are_read_is_json_whichever_spelling_asked(cli, world, spelling) -> None:
    """``-p`` without its value: the global options cannot be read, yet the caller asked for JSON."""
    result = cli("recall", "memory", *spelling, "-p", project_dir=None)
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    error = json.loads(line)
    schema_for("error").validate(error)
    assert error["error"]["code"] == 2 and "-p" in error["error"]["message"]


def test_the_schemas_catch_a_change_of_shape(cli, world) -> None:
    """additionalProperties and exact types: a new key, a number turned string, a dropped key all fail."""
    node = cli("get", world["other"], "--format", "json").json()
    validator = schema_for("get")
    validator.validate(node)
    for changed in ({**node, "surprise": 1}, {**node, "importance": str(node["importance"])}):
        with pytest.raises(ValidationError):
            validator.validate(changed)
    dropped = {k: v for k, v in node.items() if k != "content"}
    with pytest.raises(ValidationError):
        validator.validate(dropped)
    listed = cli("list", "--format", "json").json()
    with pytest.raises(ValidationError):
        schema_for("list").validate(listed["memories"])  # the bare array of old
    stamped = {**node, "created_at": node["created_at"].replace("T", " ").removesuffix("Z")}
    with pytest.raises(ValidationError):
        validator.validate(stamped)  # upstream's storage layout is not RFC 3339


def test_global_options_are_lifted_before_the_schema_is_chosen() -> None:
    _, rest = split_global_options(["-p", "/x", "--format", "json", "config", "list"])
    assert schemas.name_for(rest) == "config-list"
    assert schemas.name_for(["recall", "list"]) == "recall"  # a query that looks like a subcommand
    assert schemas.name_for(["no-such-command"]) is None


def test_go_s_zero_time_is_a_four_digit_year_in_json(cli, world, project: Path) -> None:
    """Go brains store year 1 for "never"; strftime("%Y") would print "1-01-01T…", which is not RFC 3339."""
    import sqlean.dbapi2 as sqlean  # the brain's own SQLite: the stdlib's would not share its locks in-process

    from cerebro import paths

    conn = sqlean.connect(str(paths.project_brain_path(project)))
    conn.execute("UPDATE nodes SET last_accessed = '0001-01-01 00:00:00' WHERE id = ?", (world["other"],))
    conn.commit()
    conn.close()
    node = cli("get", world["other"], "--format", "json").json()  # the cli fixture validates it, too
    assert node["last_accessed"] == "0001-01-01T00:00:00Z"


def test_recall_with_global_and_provenance_walks_each_result_in_its_own_brain(cli, world) -> None:
    promoted = cli("promote", world["concept"], "--format", "json").json()["id"]
    result = cli("recall", "deploy VPN", "--global", "--with-provenance", "--format", "json")
    assert result.exit_code == 0, result
    by_id = {r["id"]: r for r in result.json()["results"]}
    assert by_id[promoted]["store"] == "global" and by_id[promoted]["provenance"] == []
    assert {p["id"] for p in by_id[world["concept"]]["provenance"]} == {world["e1"], world["e2"]}


def test_brains_does_not_list_a_projects_metrics_database(cli, world, project: Path) -> None:
    from cerebro.metrics.store import metrics_path

    assert metrics_path(project).is_file()  # the world ingested transcripts
    listed = cli("brains", "--format", "json").json()["brains"]
    assert [b["scope"] for b in listed] == ["project", "global"]


def test_every_memory_has_the_same_keys_whatever_the_command(cli, world) -> None:
    shapes = {
        "get": cli("get", world["other"], "--format", "json").json(),
        "update": cli("update", world["other"], "--importance", "0.6", "--format", "json").json(),
        "reinforce": cli("reinforce", world["other"], "--format", "json").json(),
        "list": cli("list", "--format", "json").json()["memories"][0],
    }
    keys = {name: set(node) - {"edges"} for name, node in shapes.items()}
    assert keys["update"] == keys["reinforce"] == keys["list"] == keys["get"]


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("2026-03-01T12:00:00.123Z", "2026-03-01T12:00:00Z"),  # as Claude Code writes it: whole seconds, like all
        ("2026-03-01T14:00:00+02:00", "2026-03-01T12:00:00Z"),
        ("2026-03-01 12:00:00", "2026-03-01T12:00:00Z"),
        ("", None),
        ("yesterday", None),
    ],
)
def test_a_turns_time_is_rfc3339_or_null(written: str, shown: str | None) -> None:
    from cerebro.metrics.records import TurnMetrics

    data = TurnMetrics("s-1", 1, written, id=7).to_dict()  # as read back from the metrics database
    assert data["timestamp"] == shown
    schema_for("stats").evolve(schema={"$ref": "common.json#/$defs/turn"}).validate(data)
