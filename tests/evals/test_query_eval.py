"""cerebro eval --queries Q --ground-truth G over the current brain (upstream's baseline JSON)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cerebro import Brain


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.fixture
def eval_files(fake_brain_path: Path, tmp_path: Path):
    with Brain.open(fake_brain_path) as brain:
        ids = {
            "deploy": brain.add("deploy script needs AWS_PROFILE set before running"),
            "jwt": brain.add("JWT refresh tokens rotate every seven days", type="concept"),
            "noise": brain.add("lunch was pizza"),
        }
        gone = brain.add("obsolete fact about the deploy")
        brain.supersede(gone, "current fact about the deploy")
    queries = _jsonl(
        tmp_path / "q.jsonl",
        [
            {"query_id": "q1", "query": "deploy script AWS_PROFILE"},
            {"query_id": "q2", "query": "JWT refresh tokens"},
            {"query_id": "q3", "query": "something else"},
        ],
    )
    truth = _jsonl(
        tmp_path / "g.jsonl",
        [
            {"query_id": "q1", "relevant_node_ids": [ids["deploy"]]},
            {"query_id": "q2", "relevant_node_ids": [ids["jwt"], gone]},
            {"query_id": "q3", "relevant_node_ids": ["00000000-0000-4000-8000-000000000000"]},
        ],
    )
    return queries, truth, ids, gone


def test_baseline_json_and_skipped_ids(cli, eval_files, tmp_path: Path) -> None:
    queries, truth, _ids, gone = eval_files
    out = tmp_path / "baseline.json"
    result = cli("eval", "--queries", str(queries), "--ground-truth", str(truth), "--out", str(out), "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = result.json()
    assert json.loads(out.read_text()) == report
    assert set(report) >= {"generated_at", "brain", "scorer_weights", "params", "metrics"}
    assert report["scorer_weights"] == {"relevance": 0.35, "importance": 0.25, "recency": 0.25, "structural": 0.15}
    assert report["params"]["limit"] == 20
    assert report["params"]["threshold"] == 0.3  # the brain's recall_threshold, said (it was null unless given)
    assert report["params"]["queries"] == 2  # q3 had no active ground truth: skipped
    assert report["metrics"]["recall@5"] == 1.0
    assert report["metrics"]["MRR"] == 1.0
    assert report["skipped_ids"] == {"q2": [gone], "q3": ["00000000-0000-4000-8000-000000000000"]}
    assert "q3" in result.stderr and "skipped" in result.stderr


def test_an_out_that_cannot_be_written_is_said_before_the_run(cli, eval_files, tmp_path: Path) -> None:
    """A folder as --out failed with an internal error after every query had run (a review)."""
    queries, truth, _ids, _gone = eval_files
    for out, message in ((tmp_path, "is a folder"), (tmp_path / "q.jsonl" / "x.json", "cannot write in")):
        result = cli("eval", "--queries", str(queries), "--ground-truth", str(truth), "--out", str(out))
        assert result.exit_code == 2 and message in result.stderr and result.stdout == "", result
        assert result.stderr.count("\n") == 1


def test_no_resolvable_ground_truth_is_an_error(cli, fake_brain_path: Path, tmp_path: Path) -> None:
    q = _jsonl(tmp_path / "q.jsonl", [{"query_id": "a", "query": "x"}])
    g = _jsonl(tmp_path / "g.jsonl", [{"query_id": "a", "relevant_node_ids": ["deadbeef-0000-4000-8000-000000000000"]}])
    result = cli("eval", "--queries", str(q), "--ground-truth", str(g))
    assert result.exit_code == 2
    assert "none of the ground-truth ids" in result.stderr


@pytest.mark.parametrize(
    ("queries", "truth", "message"),
    [
        ('{"query_id": "a", "query": "x"}\n{bad', '{"query_id": "a", "relevant_node_ids": []}', "malformed JSON"),
        ('{"query": "x"}', '{"query_id": "a", "relevant_node_ids": []}', "needs query_id"),
        ('{"query_id": "a", "query": "x"}', '{"query_id": "a", "relevant_node_ids": "abc"}', "must be a list"),
        ('{"query_id": "a", "query": "x"}', '{"query_id": "b", "relevant_node_ids": []}', "no query has ground truth"),
    ],
)
def test_malformed_files(cli, fake_brain_path: Path, tmp_path: Path, queries: str, truth: str, message: str) -> None:
    q = tmp_path / "q.jsonl"
    g = tmp_path / "g.jsonl"
    q.write_text(queries)
    g.write_text(truth)
    result = cli("eval", "--queries", str(q), "--ground-truth", str(g))
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
