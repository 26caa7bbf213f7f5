"""outcome <id> --success|--failure: counts in metadata.outcomes, and recall's outcome factor (spec §3, §5)."""

from __future__ import annotations

import json
import math

import pytest

from .conftest import MISSING_ID, assert_one_line_error, full_snapshot


def metadata(run, node_id):
    return run("get", node_id)["metadata"]


def test_success_and_failure_increment_and_keep_other_keys(run, add, at):
    at(0)
    node = add("use uv for the venv", "--metadata", '{"source": "README", "nested": {"a": [1, 2]}}')
    run("outcome", node, "--success")
    assert metadata(run, node) == {"source": "README", "nested": {"a": [1, 2]}, "outcomes": {"success": 1}}
    run("outcome", node[:8], "--success")
    run("outcome", node, "--failure")
    assert metadata(run, node) == {
        "source": "README",
        "nested": {"a": [1, 2]},
        "outcomes": {"success": 2, "failure": 1},
    }
    text = run("outcome", node, "--failure", fmt="md")
    assert text == f"Recorded failure for {node[:8]} (now 2 successes, 2 failures)\n"
    assert metadata(run, node)["outcomes"] == {"success": 2, "failure": 2}


def test_existing_outcome_keys_are_kept(run, add, at):
    at(0)
    node = add("pin the driver", "--metadata", '{"outcomes": {"success": 4, "note": "from import"}}')
    returned = run("outcome", node, "--failure")
    assert returned["metadata"]["outcomes"] == {"success": 4, "note": "from import", "failure": 1}
    assert metadata(run, node)["outcomes"] == {"success": 4, "note": "from import", "failure": 1}


@pytest.mark.parametrize("stored", ["many", [3], None], ids=["text", "list", "null"])
def test_a_count_that_is_not_a_number_restarts_at_one(run, add, at, stored):
    # A hand-edited or imported brain may hold anything there: counting goes on instead of failing.
    at(0)
    node = add("count me", "--metadata", json.dumps({"outcomes": {"success": stored, "failure": 2}}))
    run("outcome", node, "--success")
    assert metadata(run, node)["outcomes"] == {"success": 1, "failure": 2}


def test_memory_without_metadata(run, add, at):
    at(0)
    node = add("no metadata here")
    assert metadata(run, node) is None
    run("outcome", node, "--failure")
    assert metadata(run, node) == {"outcomes": {"failure": 1}}


@pytest.mark.parametrize("flags", [(), ("--success", "--failure")], ids=["neither", "both"])
def test_exactly_one_flag(cli, add, at, fake_brain_path, flags):
    at(0)
    node = add("a memory", "--metadata", '{"outcomes": {"success": 1}}')
    before = full_snapshot(fake_brain_path)
    result = cli("outcome", node, *flags)
    assert_one_line_error(result, "--success", exit_code=2)
    assert full_snapshot(fake_brain_path) == before


def test_unknown_id(cli, fake_brain_path):
    before = full_snapshot(fake_brain_path)
    assert_one_line_error(cli("outcome", MISSING_ID, "--success"), exit_code=3)
    assert full_snapshot(fake_brain_path) == before


QUERY = "rotate the staging database credentials"
CONTENT = "Rotate the staging database credentials with the vault CLI every quarter"


@pytest.fixture
def twins(fake_brain, at):
    """Two identical memories written at the same instant: recall cannot tell them apart."""
    at(0)
    first = fake_brain.add(CONTENT, type="procedure")
    second = fake_brain.add(CONTENT, type="procedure")
    fake_brain.add("the office coffee machine needs descaling", type="episode")
    at(1)
    return first, second


def ranked(run, *ids):
    data = run("recall", QUERY, "--explain")
    order = [r["id"] for r in data["results"] if r["id"] in ids]
    return order, {r["id"]: r for r in data["results"]}


def test_recall_ranks_failures_lower(run, twins):
    first, second = twins
    order, results = ranked(run, first, second)
    assert set(order) == {first, second}
    assert results[first]["score"] == pytest.approx(results[second]["score"])
    leader, other = order
    run("outcome", leader, "--failure")
    order, results = ranked(run, first, second)
    assert order == [other, leader]
    assert results[leader]["score"] < results[other]["score"]
    factor = results[leader]["explain"]["components"]["outcome"]
    assert factor == pytest.approx(1 - 0.15 * math.log(2), abs=1e-6)
    assert results[other]["explain"]["components"]["outcome"] == 1.0
    assert results[leader]["score"] == pytest.approx(results[other]["score"] * factor, rel=1e-5)


def test_recall_ranks_successes_higher(run, twins):
    first, second = twins
    order, _ = ranked(run, first, second)
    trailer = order[1]
    run("outcome", trailer, "--success")
    order, results = ranked(run, first, second)
    assert order[0] == trailer
    assert results[trailer]["explain"]["components"]["outcome"] == pytest.approx(1 + 0.10 * math.log(2), abs=1e-6)


def test_outcome_factor_floor(run, twins):
    first, _ = twins
    # 1 − 0.15·ln(401) ≈ 0.101, below the floor
    run("update", first, "--metadata", '{"outcomes": {"failure": 400}}')
    _, results = ranked(run, first)
    assert results[first]["explain"]["components"]["outcome"] == pytest.approx(0.2)
