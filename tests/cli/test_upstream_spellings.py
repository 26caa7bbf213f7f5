"""Upstream's CLI spellings from its README work here too (issue 12)."""

from __future__ import annotations

import pytest


def ok(result):
    assert result.exit_code == 0, result
    return result


def test_with_provenance_takes_a_depth_after_an_equals_sign(cli, brain_path) -> None:
    root = ok(cli("add", "the raw observation", "--type", "episode")).stdout.strip()
    middle = ok(cli("add", "a first lesson", "--type", "concept")).stdout.strip()
    top = ok(cli("add", "the general rule", "--type", "concept")).stdout.strip()
    ok(cli("consolidate", "--into", middle, root))
    ok(cli("edge", top, middle, "derived_from"))
    deep = ok(cli("get", top[:8], "--with-provenance=3", "--format", "json")).json()
    shallow = ok(cli("get", top[:8], "--with-provenance=1", "--format", "json")).json()
    assert {p["id"] for p in deep["provenance"]} == {middle, root}
    assert {p["id"] for p in shallow["provenance"]} == {middle}
    recalled = ok(cli("recall", "general rule", "--with-provenance=2", "--format", "json")).json()
    assert any(item.get("provenance") for item in recalled["results"])


@pytest.mark.parametrize("bad", ["--with-provenance=x", "--with-provenance=-1", "--with-provenance="])
def test_with_provenance_rejects_a_depth_that_is_not_a_number(cli, brain_path, bad: str) -> None:
    node_id = ok(cli("add", "a memory")).stdout.strip()
    result = cli("get", node_id[:8], bad)
    assert result.exit_code == 2 and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["recall", "search"])
def test_unquoted_words_are_one_query(cli, fake_brain_path, command: str) -> None:
    wanted = ok(cli("add", "auth works with short JWT access tokens")).stdout.strip()
    ok(cli("add", "gardening notes about tomatoes"))
    joined = ok(cli(command, "how", "does", "auth", "work", "--format", "json")).json()
    quoted = ok(cli(command, "how does auth work", "--format", "json")).json()
    assert joined["query"] == "how does auth work"
    assert [r["id"] for r in joined["results"]] == [r["id"] for r in quoted["results"]]
    assert joined["results"][0]["id"] == wanted
