"""cerebro stats --metrics [--last N]: brain stats first, then the metrics block (spec §5)."""

from __future__ import annotations

from pathlib import Path

from cerebro.metrics.records import TurnMetrics
from cerebro.metrics.store import MetricsStore, metrics_path
from tests.cli.helpers import assert_one_line_error, ok

from .conftest import SIMPLE

NO_METRICS = "No metrics data. Run 'cerebro ingest' to collect session metrics."


def test_plain_stats_json_is_unchanged(cli, fake_brain_path: Path):
    data = ok(cli("stats", "--format", "json")).json()
    assert "brain" not in data and "turns" not in data
    assert "total_nodes" in data


def test_no_metrics_database(cli, fake_brain_path: Path, project: Path):
    text = ok(cli("stats", "--metrics")).stdout
    assert text.startswith("# Cerebro Brain Stats\n")
    assert text.endswith(f"\n\n{NO_METRICS}\n")
    data = ok(cli("stats", "--metrics", "--format", "json")).json()
    assert data["turns"] == [] and data["total_nodes"] == 0
    plain = ok(cli("stats", "--format", "json")).json()
    assert data == plain | {"turns": []}  # the flag adds a key and moves none
    assert not metrics_path(project).exists()


def test_stats_metrics_after_ingest(cli, fake_brain_path: Path, add_transcript):
    add_transcript(SIMPLE)
    ok(cli("ingest"))
    text = ok(cli("stats", "--metrics")).stdout
    brain_part, _, metrics_part = text.partition("\n\n## Session Metrics (last 3 turns)\n\n")
    assert brain_part.startswith("# Cerebro Brain Stats\n") and metrics_part
    # Turn ratios 2.0, NULL, NULL; w10 2, 2, 2; thinking in turn 1 only (49 chars);
    # cache hit 6500/21500, 6800/13800, 7800/15800 = 0.302, 0.493, 0.494 → mean 43% (spec §3).
    assert metrics_part == (
        "  R:E          █__\n"
        "  R:E (w10)    ███\n"
        "  Thinking     ^__\n"
        "  Think Depth  █__\n"
        "  Cache Hit    ▁▇█\n"
        "  Stop Guard   ___\n"
        "\n"
        "  R:E: 2.0  Think: 33% active  Cache: 43%  Stops: 0\n"
    )
    data = ok(cli("stats", "--metrics", "--format", "json", "--last", "2")).json()
    assert set(data) == set(ok(cli("stats", "--format", "json")).json()) | {"turns"}
    assert [t["turn_number"] for t in data["turns"]] == [2, 3]  # the 2 most recent, oldest first
    assert set(data["turns"][0]) == set(TurnMetrics.__dataclass_fields__)
    assert data["turns"][0]["read_edit_ratio"] is None
    assert "last 2 turns" in ok(cli("stats", "--metrics", "--last", "2")).stdout


def test_metrics_database_without_turns(cli, fake_brain_path: Path, project: Path):
    MetricsStore.open(metrics_path(project), create=True).close()
    text = ok(cli("stats", "--metrics")).stdout
    assert text.endswith("\n\nNo turn data. Run 'cerebro ingest' to collect session metrics.\n")


def test_stop_guard_fires_show(cli, fake_brain_path: Path, project: Path, add_transcript):
    add_transcript(SIMPLE)
    ok(cli("ingest"))
    with MetricsStore.open(metrics_path(project)) as store:
        store.record_stop_guard("test-session-1", "premature-stopping", "2026-04-23T10:01:30Z")
    text = ok(cli("stats", "--metrics")).stdout
    assert "  Stop Guard   _*_\n" in text and "Stops: 1" in text


def test_bad_last(cli, fake_brain_path: Path):
    assert_one_line_error(cli("stats", "--metrics", "--last", "0"), "--last", exit_code=2)


def test_stats_metrics_needs_the_brain(cli, project: Path):
    assert_one_line_error(cli("stats", "--metrics"), exit_code=4)


def test_a_last_past_sqlites_integers_means_every_turn(cli, fake_brain_path: Path, add_transcript):
    add_transcript(SIMPLE)
    ok(cli("ingest"))
    assert ok(cli("stats", "--metrics", "--last", str(10**20))).stdout == ok(cli("stats", "--metrics")).stdout
