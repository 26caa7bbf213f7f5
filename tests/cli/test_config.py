"""cerebro config set|get|list|reset."""

from __future__ import annotations

import pytest

from cerebro import Brain, config

from .helpers import assert_one_line_error, ok, raw_rows


def test_set_message_and_storage(cli, brain_path):
    assert ok(cli("config", "set", "prime_limit", "5")).stdout == "Set prime_limit = 5 (was: 20)\n"
    assert ok(cli("config", "set", "prime_limit", "7")).stdout == "Set prime_limit = 7 (was: 5)\n"
    with Brain.open(brain_path) as brain:
        assert brain.config_get("prime_limit").value == "7"
        assert brain.config_value("prime_limit") == 7
    # Stored where upstream keeps it.
    assert raw_rows(brain_path, "SELECT value FROM schema_meta WHERE key = 'config.prime_limit'") == [("7",)]


def test_set_json(cli, brain_path):
    data = ok(cli("config", "set", "rerank_fusion", "reorder", "--format", "json")).json()
    assert data == {"key": "rerank_fusion", "value": "reorder", "previous": "rrf"}


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("gc_threshold", "0"),
        ("gc_threshold", "1"),
        ("gc_threshold", "0.05"),
        ("bm25_enabled", "false"),
        ("stop_guard_enabled", "true"),
        ("rerank_command", "my-reranker --top 5"),
        ("rerank_command", ""),
        ("rerank_fusion", "rrf"),
        ("search_limit", "1"),
        ("expand_spread_threshold", "0.0"),
    ],
)
def test_set_valid_values(cli, brain_path, key, value):
    ok(cli("config", "set", key, value))
    with Brain.open(brain_path) as brain:
        assert brain.config_get(key).value == value
        assert brain.config_get(key).source == "brain"


def test_get_default_and_set(cli, brain_path):
    assert ok(cli("config", "get", "prime_limit")).stdout == "prime_limit = 20 (default)\n"
    assert ok(cli("config", "get", "prime_limit", "--format", "json")).json() == {
        "key": "prime_limit",
        "value": 20,
        "source": "default",
        "default": 20,
    }
    ok(cli("config", "set", "prime_limit", "5"))
    assert ok(cli("config", "get", "prime_limit")).stdout == "prime_limit = 5 (default: 20)\n"
    assert ok(cli("config", "get", "prime_limit", "--format", "json")).json() == {
        "key": "prime_limit",
        "value": 5,
        "source": "brain",
        "default": 20,
    }


def test_list_json_in_registry_order(cli, brain_path):
    ok(cli("config", "set", "gc_threshold", "0.2"))
    data = ok(cli("config", "list", "--format", "json")).json()["settings"]
    assert [e["key"] for e in data] == list(config.REGISTRY)
    assert [e["key"] for e in data] == [
        "prime_limit",
        "gc_threshold",
        "search_limit",
        "search_threshold",
        "recall_threshold",
        "indegree_bonus_enabled",
        "stop_guard_enabled",
        "rerank_enabled",
        "rerank_command",
        "rerank_fusion",
        "bm25_enabled",
        "expand_threshold",
        "expand_spread_threshold",
        "fusion",
        "keyword_weight",
        "lane_depth",
        "prime_token_budget",
        "feedback_docs",
        "feedback_weight",
        "centering",
        "adjacency",
        "redact_secrets",
        "max_content_bytes",
    ]
    for entry in data:
        assert set(entry) == {"key", "value", "source", "default", "description"}
        assert entry["description"]
        spec = config.REGISTRY[entry["key"]]
        default = spec.parse(config.default(entry["key"], "local"))  # this brain's provider (search_threshold)
        assert entry["default"] == default  # in its own type: 20, 0.3, true, "rrf"
        assert type(entry["default"]) is type(default)
        if entry["key"] == "gc_threshold":
            assert (entry["value"], entry["source"]) == (0.2, "brain")
        else:
            assert (entry["value"], entry["source"]) == (default, "default")
    kinds = {entry["key"]: type(entry["value"]) for entry in data}
    assert (kinds["prime_limit"], kinds["gc_threshold"], kinds["bm25_enabled"], kinds["fusion"]) == (
        int,
        float,
        bool,
        str,
    )


def test_list_md(cli, brain_path):
    out = ok(cli("config", "list")).stdout
    lines = out.splitlines()
    assert lines[0] == "# Cerebro Configuration"
    assert lines[-1] == "Set with: cerebro config set <key> <value>"
    positions = [next(i for i, line in enumerate(lines) if line.startswith(key + " ")) for key in config.REGISTRY]
    assert positions == sorted(positions)


def test_reset_one_key(cli, brain_path):
    ok(cli("config", "set", "prime_limit", "5"))
    ok(cli("config", "set", "search_limit", "3"))
    assert ok(cli("config", "reset", "prime_limit")).stdout == "Reset prime_limit\n"
    with Brain.open(brain_path) as brain:
        assert brain.config_get("prime_limit").source == "default"
        assert brain.config_get("search_limit").value == "3"
    assert ok(cli("config", "reset", "prime_limit", "--format", "json")).json() == {"reset": []}
    assert ok(cli("config", "reset", "prime_limit")).stdout == "Nothing to reset (already defaults).\n"


def test_reset_all(cli, brain_path):
    ok(cli("config", "set", "search_limit", "3"))
    ok(cli("config", "set", "bm25_enabled", "false"))
    data = ok(cli("config", "reset", "--all", "--format", "json")).json()
    assert data == {"reset": ["bm25_enabled", "search_limit"]}
    with Brain.open(brain_path) as brain:
        assert all(e.source == "default" for e in brain.config_list())
    assert raw_rows(brain_path, "SELECT key FROM schema_meta WHERE key LIKE 'config.%'") == []
    assert ok(cli("config", "reset", "--all")).stdout == "Nothing to reset (already defaults).\n"


def test_reset_needs_key_or_all(cli, brain_path, brain_snapshot):
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("config", "reset"), "--all", exit_code=2)
    assert brain_snapshot(brain_path) == before


@pytest.mark.parametrize(
    "args",
    [
        ("get", "nope"),
        ("set", "nope", "1"),
        ("reset", "nope"),
        ("get", "config.prime_limit"),
        ("get", "PRIME_LIMIT"),
    ],
)
def test_unknown_key_exit_3(cli, brain_path, brain_snapshot, args):
    before = brain_snapshot(brain_path)
    line = assert_one_line_error(cli("config", *args), "unknown config key", exit_code=3)
    assert "cerebro config list" in line
    assert brain_snapshot(brain_path) == before


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("prime_limit", "0"),
        ("prime_limit", "-1"),
        ("prime_limit", "abc"),
        ("prime_limit", "1.5"),
        ("prime_limit", ""),
        ("gc_threshold", "nan"),
        ("gc_threshold", "2"),
        ("gc_threshold", "-0.1"),
        ("gc_threshold", "abc"),
        ("bm25_enabled", "True"),
        ("bm25_enabled", "yes"),
        ("bm25_enabled", "1"),
        ("bm25_enabled", ""),
        ("adjacency", "1.5"),
        ("adjacency", "-0.1"),
        ("rerank_fusion", "bogus"),
        ("rerank_fusion", "RRF"),
    ],
)
def test_invalid_values_exit_2_unchanged(cli, brain_path, brain_snapshot, key, value):
    ok(cli("config", "set", "search_limit", "4"))  # an existing override must survive
    before = brain_snapshot(brain_path)
    line = assert_one_line_error(cli("config", "set", key, value), exit_code=2)
    assert f"invalid value for {key}" in line
    assert brain_snapshot(brain_path) == before


def test_set_and_get_json_carry_typed_values(cli, brain_path):
    changed = ok(cli("config", "set", "prime_limit", "10", "--format", "json")).json()
    assert changed == {"key": "prime_limit", "value": 10, "previous": 20}
    flag = ok(cli("config", "set", "bm25_enabled", "false", "--format", "json")).json()
    assert (flag["value"], flag["previous"]) == (False, True)
    entry = ok(cli("config", "get", "prime_limit", "--format", "json")).json()
    assert (entry["value"], entry["default"], entry["source"]) == (10, 20, "brain")


def test_a_received_command_with_control_characters_is_shown_escaped(cli, brain_path):
    """`config set` refuses control characters; a brain that arrives with them (written behind cerebro's back) must
    not send an escape sequence to the terminal through `config get` or `config list`."""
    from tests.cli.helpers import raw_exec

    hostile = "\x1b]0;owned\x07\x1b[2J rerank"
    raw_exec(
        brain_path, "INSERT OR REPLACE INTO schema_meta (key, value) VALUES ('config.rerank_command', ?)", (hostile,)
    )
    for args in (("config", "get", "rerank_command"), ("config", "list")):
        shown = cli(*args)
        assert shown.exit_code == 0 and "\x1b" not in shown.stdout and "\x07" not in shown.stdout
        assert "\\u001b]0;owned" in shown.stdout
    assert cli("config", "get", "rerank_command", "--format", "json").json()["value"] == hostile  # data, as stored
    replaced = cli("config", "set", "rerank_command", "true")  # the previous value, echoed, is escaped too
    assert replaced.exit_code == 0 and "\x1b" not in replaced.stdout and "\\u001b]0;owned" in replaced.stdout
