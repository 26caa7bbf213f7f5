"""cerebro list: filters, limit, newest-first order, md and JSON."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cerebro import Brain, clock

from .helpers import assert_one_line_error, ok

T0 = datetime(2026, 3, 11, 10, 0, 0, tzinfo=UTC)


@pytest.fixture
def corpus(cli, add):
    """Five memories at distinct times, one superseded."""
    ids = {}
    specs = [
        ("e1", "episode one", ("--subtype", "bug")),
        ("c1", "concept one", ("--type", "concept", "--subtype", "decision")),
        ("e2", "episode two", ()),
        ("p1", "procedure one", ("--type", "procedure")),
        ("c2", "concept two", ("--type", "concept")),
    ]
    for i, (key, content, args) in enumerate(specs):
        clock.set_now(T0 + timedelta(minutes=i))
        ids[key] = add(content, *args)
    clock.set_now(T0 + timedelta(minutes=10))
    ok(cli("supersede", ids["e2"], "episode two, revised"))
    ids["e3"] = ok(cli("list", "--limit", "1", "--format", "json")).json()["memories"][0]["id"]
    return ids


def listed(cli, *args):
    return [n["id"] for n in ok(cli("list", *args, "--format", "json")).json()["memories"]]


def test_list_newest_first(cli, corpus, brain_path):
    ids = corpus
    assert listed(cli) == [ids[k] for k in ("e3", "c2", "p1", "e2", "c1", "e1")]
    with Brain.open(brain_path) as brain:
        assert [n.id for n in brain.list()] == listed(cli)


def test_list_same_second_breaks_ties_by_insertion(cli, add):
    clock.set_now(T0)
    first, second, third = add("one"), add("two"), add("three")
    assert listed(cli) == [third, second, first]


def test_list_filters(cli, corpus):
    ids = corpus
    assert listed(cli, "--type", "concept") == [ids["c2"], ids["c1"]]
    assert listed(cli, "--status", "superseded") == [ids["e2"]]
    assert listed(cli, "--status", "active", "--type", "episode") == [ids["e3"], ids["e1"]]
    assert listed(cli, "--subtype", "decision") == [ids["c1"]]
    assert listed(cli, "--status", "archived") == []


def test_list_empty_subtype_selects_null_only(cli, corpus):
    ids = corpus
    assert listed(cli, "--subtype", "") == [ids[k] for k in ("e3", "c2", "p1", "e2")]


def test_list_limit(cli, corpus):
    ids = corpus
    assert listed(cli, "--limit", "2") == [ids["e3"], ids["c2"]]
    assert len(listed(cli, "--limit", "100")) == 6


def test_list_json_shape(cli, corpus):
    data = ok(cli("list", "--format", "json")).json()["memories"]
    assert isinstance(data, list)
    for item in data:
        expected = {"id", "type", "subtype", "content", "status", "importance", "created_at"}
        assert expected | {"origin_channel"} <= set(item)
        assert "edges" not in item


def test_list_md(cli, corpus):
    ids = corpus
    out = ok(cli("list", "--limit", "2")).stdout
    assert out.startswith(f"## {ids['e3'][:8]} [episode/active] (importance: 0.50)\nepisode two, revised\n")
    assert f"## {ids['c2'][:8]} [concept/active] (importance: 0.50)\nconcept two" in out


def test_list_empty(cli, brain_path):
    assert ok(cli("list")).stdout == "No memories found.\n"
    assert ok(cli("list", "--format", "json")).json() == {"memories": []}


@pytest.mark.parametrize(
    "args",
    [("--limit", "0"), ("--limit", "-1"), ("--limit", "abc"), ("--type", "bogus"), ("--status", "bogus")],
)
def test_list_bad_filters(cli, brain_path, args):
    assert_one_line_error(cli("list", *args), exit_code=2)
