"""gc: retention, the threshold and its precedence, dry runs, archiving out of every lane, output, the log,
and the floor property (spec §5 "gc")."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest

from cerebro.errors import InvalidInput

from .conftest import (
    LAMBDA,
    UPGRADED_AT,
    archive_rows,
    assert_one_line_error,
    day,
    edge_rows,
    expected_retention,
    fts_ids,
    full_snapshot,
    jsonl,
    layout,
    node_ids,
    node_row,
    retention_of,
    vec_ids,
)

EVICTED_KEYS = {"id", "type", "content", "importance", "retention_score"}


def evicted_ids(report: dict) -> set[str]:
    return {e["id"] for e in report["evicted"]}


# --------------------------------------------------------------------------- the formula


def test_retention_matches_hand_computed_numbers_per_type(run, add, at):
    """Each number below was worked out by hand from 0.5·imp·(1+ln(1+acc)) + 0.5·e^(−λ·days), λ per day."""
    at(-70)
    procedure = add("procedure: how to rotate the signing keys", "--type", "procedure", "--importance", "0.3")
    at(0)
    concept = add("concept: the cache is write-through", "--type", "concept", "--importance", "0.1")
    for _ in range(3):
        run("reinforce", concept)  # access_count 3, last access day 0
    at(5)
    reflection = add("reflection: we argue less after writing ADRs", "--type", "reflection", "--importance", "0.04")
    at(10)
    run("reinforce", reflection)  # access_count 1, last access day 10
    reinforced_episode = add("episode: paired on the flaky login test", "--importance", "0.2")
    at(20)
    episode = add("episode: read the release notes", "--importance", "0.02")
    at(25)
    run("reinforce", reinforced_episode)  # access_count 1, last access day 25
    at(28, hours=12)
    fresh = add("episode: lunch conversation about queues", "--importance", "0.05")

    at(30)
    report = run("gc", "--dry-run", "--threshold", "1")
    scores = {e["id"]: e["retention_score"] for e in report["evicted"]}
    hand = {
        episode: 0.121565,  # 0.5·0.02 + 0.5·e^(−0.15·10)
        concept: 0.393721,  # 0.5·0.1·(1+ln 4) + 0.5·e^(−0.02·30)
        procedure: 0.453265,  # 0.5·0.3 + 0.5·e^(−0.005·100)
        reflection: 0.217803,  # 0.5·0.04·(1+ln 2) + 0.5·e^(−0.05·20)
        fresh: 0.424258,  # 0.5·0.05 + 0.5·e^(−0.15·1.5)   (36 hours = 1.5 days)
        reinforced_episode: 0.405498,  # 0.5·0.2·(1+ln 2) + 0.5·e^(−0.15·5)
    }
    assert set(scores) == set(hand)
    for node_id, expected in hand.items():
        assert scores[node_id] == pytest.approx(expected, abs=2e-6), node_id
    # The same numbers from the formula written out in conftest (a cross-check of the literals).
    assert hand[concept] == pytest.approx(expected_retention(0.1, 3, "concept", 30), abs=1e-6)
    assert hand[fresh] == pytest.approx(expected_retention(0.05, 0, "episode", 1.5), abs=1e-6)


def test_decay_rate_is_set_from_the_type(run, add, at):
    at(0)
    for node_type, rate in LAMBDA.items():
        node_id = add(f"a {node_type}", "--type", node_type)
        assert run("get", node_id)["decay_rate"] == rate


# --------------------------------------------------------------------------- threshold


@pytest.fixture
def three_episodes(add, at):
    """Episodes of importance 0.02, 0.1 and 0.3 written on day 0; by day 60 e^(−9) ≈ 0.000123, so their
    retention is ≈ 0.01006, 0.05006 and 0.15006."""
    at(0)
    ids = {imp: add(f"episode of importance {imp}", "--importance", str(imp)) for imp in (0.02, 0.1, 0.3)}
    add("a concept that stays", "--type", "concept")
    at(60)
    return ids


def test_candidates_are_strictly_below_the_threshold(run, add, at):
    """Ten thousand days on, e^(−λ·days) underflows to 0: retention is exactly 0.5·importance."""
    at(0)
    exact = add("exactly at the threshold", "--importance", "0.02")
    below = add("just below the threshold", "--importance", "0.0199")
    at(10_000)
    report = run("gc", "--dry-run")
    assert report["threshold"] == 0.01
    assert evicted_ids(report) == {below}
    assert exact not in evicted_ids(report)
    report = run("gc", "--dry-run", "--threshold", "0.00995")  # 0.5·0.0199 = 0.00995: not below itself
    assert report["evicted"] == []


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_summary_or_a_replacement_is_kept_however_low_its_retention(run, add, at, fake_brain_path, dry_run):
    """Archiving the memory that holds others' content (a consolidation's summary, a supersession's replacement)
    left them consolidated or superseded — never recalled, never collected — and the topic gone (ADR 0058)."""
    at(0)
    first, second = add("staging db rotates its password monthly"), add("staging db lives on host pg-2")
    summary = add("staging db facts", "--type", "concept", "--importance", "0.001")
    run("consolidate", first, second, "--into", summary)
    old = add("the build takes ten minutes", "--type", "concept")
    replacement = run("supersede", old, "the build takes four minutes", "--importance", "0.001")["id"]
    plain = add("a passing note", "--importance", "0.001")
    at(10_000)
    report = run("gc", *(["--dry-run"] if dry_run else []))
    assert evicted_ids(report) == {plain}
    if not dry_run:
        assert set(archive_rows(fake_brain_path)) == {plain}
        assert (
            node_row(fake_brain_path, summary)["status"] == node_row(fake_brain_path, replacement)["status"] == "active"
        )


def test_threshold_default_is_0_01(run, three_episodes):
    report = run("gc", "--dry-run")
    assert report["threshold"] == 0.01
    assert report["evicted"] == []  # 0.01006 is not below 0.01
    assert report["evaluated"] == 4


def test_threshold_from_config(run, three_episodes):
    run("config", "set", "gc_threshold", "0.1")
    report = run("gc", "--dry-run")
    assert report["threshold"] == 0.1
    assert evicted_ids(report) == {three_episodes[0.02], three_episodes[0.1]}
    text = run("gc", "--dry-run", fmt="md")
    assert text.splitlines()[0] == "GC: evaluated 4 nodes, threshold=0.1000"


def test_threshold_flag_beats_config(run, three_episodes):
    run("config", "set", "gc_threshold", "0.1")
    report = run("gc", "--dry-run", "--threshold", "0.2")
    assert report["threshold"] == 0.2
    assert evicted_ids(report) == set(three_episodes.values())
    # A flag equal to the compiled default still wins over the config.
    report = run("gc", "--dry-run", "--threshold", "0.01")
    assert report["threshold"] == 0.01
    assert report["evicted"] == []


def test_threshold_back_to_default_after_config_reset(run, three_episodes):
    run("config", "set", "gc_threshold", "0.1")
    run("config", "reset", "gc_threshold")
    report = run("gc", "--dry-run")
    assert report["threshold"] == 0.01
    assert report["evicted"] == []


def test_unreadable_config_value_falls_back_to_the_default(run, fake_brain_path, three_episodes):
    from .conftest import raw_exec

    raw_exec(fake_brain_path, "INSERT INTO schema_meta (key, value) VALUES ('config.gc_threshold', 'lots')")
    report = run("gc", "--dry-run")
    assert report["threshold"] == 0.01
    assert report["evicted"] == []


def test_threshold_out_of_range_is_refused(cli, fake_brain_path, three_episodes):
    before = full_snapshot(fake_brain_path)
    for value in ("1.5", "-0.1"):
        result = cli("gc", "--threshold", value)
        assert_one_line_error(result, "threshold", exit_code=2)
    assert full_snapshot(fake_brain_path) == before


# --------------------------------------------------------------------------- dry run and a real run


def test_dry_run_writes_nothing(run, fake_brain_path, three_episodes):
    run("config", "set", "gc_threshold", "0.1")
    before = full_snapshot(fake_brain_path)
    report = run("gc", "--dry-run")
    assert len(report["evicted"]) == 2
    assert report["dry_run"] is True
    text = run("gc", "--dry-run", fmt="md")
    assert "(dry-run mode — no changes made)" in text.splitlines()
    assert full_snapshot(fake_brain_path) == before


@pytest.fixture
def victim_graph(run, add, at, fake_brain_path):
    """A decaying episode with edges in both directions, between two memories that stay."""
    at(0)
    victim = add(
        "scratch: tried three spellings of the env var",
        "--importance",
        "0.01",
        "--subtype",
        "scratch",
        "--metadata",
        '{"k": "v", "n": [1, 2]}',
    )
    keeper = add("concept: the env var is CEREBRO_HOME", "--type", "concept")
    other = add("episode: set CEREBRO_HOME in the CI config", "--importance", "0.5")
    run("edge", victim, keeper, "supports")
    run("edge", other, victim, "contradicts")
    run("edge", keeper, other, "supports", "--weight", "0.7")
    created = node_row(fake_brain_path, victim)["created_at"]
    assert created == layout(day(0))
    at(60)
    return {"victim": victim, "keeper": keeper, "other": other, "created": created}


def test_real_run_archives_and_removes_from_every_lane(run, fake_brain_path, victim_graph):
    g = victim_graph
    assert {g["victim"], g["keeper"], g["other"]} <= vec_ids(fake_brain_path)
    assert {g["victim"], g["keeper"], g["other"]} <= fts_ids(fake_brain_path)
    before_stats = run("stats")
    vec_count = len(vec_ids(fake_brain_path))
    report = run("gc")
    assert len(vec_ids(fake_brain_path)) == vec_count - 1

    assert report["evaluated"] == 3
    assert report["archived"] == 1
    assert report["by_type"] == {"episode": 1}
    assert report["dry_run"] is False
    (evicted,) = report["evicted"]
    assert set(evicted) == EVICTED_KEYS
    assert evicted["id"] == g["victim"]
    assert evicted["type"] == "episode"
    assert evicted["content"] == "scratch: tried three spellings of the env var"
    assert evicted["importance"] == 0.01
    assert evicted["retention_score"] == pytest.approx(expected_retention(0.01, 0, "episode", 60), abs=1e-6)

    archived = archive_rows(fake_brain_path)
    assert set(archived) == {g["victim"]}
    row = archived[g["victim"]]
    assert row["type"] == "episode"
    assert row["subtype"] == "scratch"
    assert row["content"] == "scratch: tried three spellings of the env var"
    assert json.loads(row["metadata"]) == {"k": "v", "n": [1, 2]}
    assert row["importance"] == 0.01
    assert row["status"] == "active"  # the status it had
    assert row["archive_reason"] == "decayed"
    assert row["original_created_at"] == g["created"]
    assert row["archived_at"] == layout(day(60))

    assert g["victim"] not in node_ids(fake_brain_path)
    assert g["victim"] not in vec_ids(fake_brain_path)
    assert g["victim"] not in fts_ids(fake_brain_path)
    assert {g["keeper"], g["other"]} <= vec_ids(fake_brain_path)
    assert {g["keeper"], g["other"]} <= fts_ids(fake_brain_path)
    edges = [(e[1], e[2], e[3]) for e in edge_rows(fake_brain_path)]
    assert edges == [(g["keeper"], g["other"], "supports")]

    after_stats = run("stats")
    assert after_stats["total_nodes"] == before_stats["total_nodes"] - 1
    assert after_stats["total_edges"] == 1

    # Nothing is left to evict: a second run archives nothing and changes nothing.
    snap = full_snapshot(fake_brain_path)
    again = run("gc")
    assert again["archived"] == 0 and again["evicted"] == [] and again["evaluated"] == 2
    assert full_snapshot(fake_brain_path) == snap


def test_only_active_memories_are_evaluated(run, add, at, fake_brain_path):
    at(0)
    active = add("active scrap", "--importance", "0.01")
    consolidated = add("consolidated scrap", "--importance", "0.01")
    old_fact = add("the build takes ten minutes", "--type", "concept", "--importance", "0.01")
    run("mark-consolidated", consolidated)
    new_fact = run("supersede", old_fact, "the build takes four minutes", "--importance", "0.5")["id"]
    at(3650)
    report = run("gc")
    assert report["evaluated"] == 2  # active and new_fact
    assert evicted_ids(report) == {active}
    assert node_row(fake_brain_path, consolidated)["status"] == "consolidated"
    assert node_row(fake_brain_path, old_fact)["status"] == "superseded"
    assert node_row(fake_brain_path, new_fact)["status"] == "active"


def test_gc_is_one_transaction(fake_brain, fake_brain_path, at, monkeypatch):
    """A failure while evicting the second memory leaves the first one where it was too."""
    vec = fake_brain.handle.store.vectors  # the engine's own vector lane

    at(0)
    for i in range(3):
        fake_brain.add(f"scrap number {i}", importance=0.01)
    at(60)
    before = full_snapshot(fake_brain_path)
    real_delete = vec.delete
    calls = []

    def failing_delete(session, node_id):
        calls.append(node_id)
        if len(calls) == 2:
            raise RuntimeError("disk on fire")
        return real_delete(session, node_id)

    monkeypatch.setattr(vec, "delete", failing_delete)
    with pytest.raises(RuntimeError, match="disk on fire"):
        fake_brain.gc()
    assert len(calls) == 2
    assert full_snapshot(fake_brain_path) == before


# --------------------------------------------------------------------------- output


def test_text_output(run, add, at):
    at(0)
    first = add("scrap one   with\nextra   whitespace", "--importance", "0.01")
    second = add("scrap two", "--type", "reflection", "--importance", "0.01")
    add("keeper", "--importance", "0.5")
    at(1)
    assert run("gc", fmt="md").splitlines() == ["GC: evaluated 3 nodes, threshold=0.0100", "No nodes evicted."]
    at(400)
    lines = run("gc", fmt="md").splitlines()
    assert lines[0] == "GC: evaluated 3 nodes, threshold=0.0100"
    assert lines[1] == "Archived 2 nodes:"
    assert len(lines) == 4
    pattern = re.compile(r"^  - ([0-9a-f]{8}) \[(\w+)\] imp=(\d\.\d\d) score=(\d\.\d+): (.*)$")
    parsed = {m.group(1): m.groups() for m in map(pattern.match, lines[2:]) if m}
    assert set(parsed) == {first[:8], second[:8]}, lines
    assert parsed[first[:8]][1:3] == ("episode", "0.01")
    assert parsed[first[:8]][4] == "scrap one with extra whitespace"
    assert parsed[second[:8]][1:3] == ("reflection", "0.01")
    assert float(parsed[second[:8]][3]) == pytest.approx(expected_retention(0.01, 0, "reflection", 400), abs=1e-4)


def test_json_shape(run, add, at):
    at(0)
    scrap = add("scrap", "--importance", "0.01")
    add("keeper concept", "--type", "concept")
    at(90)
    report = run("gc", "--dry-run")
    assert {"evaluated", "archived", "by_type", "evicted"} <= set(report)
    assert report["evaluated"] == 2
    assert report["by_type"] == {"episode": 1}
    assert [set(e) for e in report["evicted"]] == [EVICTED_KEYS]
    assert report["evicted"][0]["id"] == scrap
    assert isinstance(report["evicted"][0]["retention_score"], float)


def test_log_appends_one_json_line_per_run(cli, run, add, at, tmp_path):
    log = tmp_path / "logs" / "gc.log"
    log.parent.mkdir()
    log.write_text('{"earlier": true}\n', encoding="utf-8")
    at(0)
    scrap = add("scrap", "--importance", "0.01")
    add("keeper", "--importance", "0.5")
    at(90)
    dry = run("gc", "--dry-run", "--log", str(log))
    real = run("gc", "--log", str(log), fmt="md")  # the log is JSON whatever --format says
    lines = jsonl(log)
    assert len(lines) == 3
    assert lines[0] == {"earlier": True}
    for line, expected_archived in ((lines[1], 1), (lines[2], 1)):
        assert {"evaluated", "archived", "by_type", "evicted"} <= set(line)
        assert line["archived"] == expected_archived
        assert [e["id"] for e in line["evicted"]] == [scrap]
        assert "content" not in line["evicted"][0] and "scrap" not in json.dumps(line)  # no memory text in a log
    assert {k: v for k, v in lines[1].items() if k in dry and k != "evicted"} == {
        k: v for k, v in dry.items() if k != "evicted"
    }
    assert "Archived 1 nodes:" in real
    run("gc", "--log", str(log))
    lines = jsonl(log)
    assert len(lines) == 4 and lines[3]["archived"] == 0 and lines[3]["evicted"] == []


# --------------------------------------------------------------------------- the floor property


def test_floor_property_nothing_at_twice_the_threshold_is_ever_evicted(run, add, at):
    at(0)
    protected, doomed = set(), set()
    for node_type in LAMBDA:
        protected.add(add(f"{node_type} at the floor", "--type", node_type, "--importance", "0.02"))
        protected.add(add(f"{node_type} at default importance", "--type", node_type))
        protected.add(add(f"{node_type} at top importance", "--type", node_type, "--importance", "1"))
        doomed.add(add(f"{node_type} under the floor", "--type", node_type, "--importance", "0.0199"))
    at(365 * 30)  # thirty years without a single access
    report = run("gc", "--dry-run")
    assert evicted_ids(report) == doomed
    # At threshold 0.25 the floor is importance 0.5: default-importance memories stay forever.
    report = run("gc", "--dry-run", "--threshold", "0.25")
    half = {i for i in protected if run("get", i)["importance"] >= 0.5}
    assert evicted_ids(report) == (protected | doomed) - half
    report = run("gc")
    assert evicted_ids(report) == doomed
    listed = {n["id"] for n in run("list", "--limit", "100")["memories"]}
    assert listed == protected


def test_gc_help_documents_the_floor(cli):
    result = cli("gc", "--help", project_dir=None)
    assert result.exit_code == 0
    flat = " ".join(re.sub(r"[│╭╮╰╯─]", " ", result.stdout).split())
    assert "never evicted" in flat, flat
    assert re.search(r"importance\s*(≥|>=)\s*2\s*(×|x|\*)\s*threshold", flat), flat


def test_log_that_cannot_be_written_is_not_a_half_failure(cli, add, at, fake_brain_path, tmp_path):
    """Either gc refuses before archiving anything (one-line error, brain unchanged), or it archives and
    still reports (exit 0, a warning about the log). Archiving and then failing with an internal error
    loses the report of what was evicted — the one record the log exists to keep."""
    at(0)
    scrap = add("scrap", "--importance", "0.01")
    at(90)
    before = full_snapshot(fake_brain_path)
    result = cli("gc", "--log", str(tmp_path / "no-such-dir" / "gc.log"), "--format", "json")
    assert "internal error" not in result.stderr, result.stderr
    if result.exit_code == 0:
        assert [e["id"] for e in result.json()["evicted"]] == [scrap]
        assert "gc.log" in result.stderr
    else:
        assert_one_line_error(result, "gc.log")
        assert full_snapshot(fake_brain_path) == before


def test_memory_without_a_vector_is_archived(fake_brain, fake_brain_path, at):
    from tests.fakes import FakeEmbedder

    at(0)
    FakeEmbedder.broken = True
    warnings = []
    fake_brain.on_warning = warnings.append
    pending = fake_brain.add("written while the embedder was down", importance=0.01)
    FakeEmbedder.broken = False
    assert pending not in vec_ids(fake_brain_path)
    at(60)
    report = fake_brain.gc()
    assert [e["id"] for e in report.evicted] == [pending]
    assert pending in archive_rows(fake_brain_path)
    assert pending not in node_ids(fake_brain_path) | fts_ids(fake_brain_path)


V4_F10 = "f0000010-0000-4000-8000-000000000010"
V4_C07 = "c0000007-0000-4000-8000-000000000007"


def test_gc_on_an_upgraded_go_brain_without_a_vector_table(upgraded, run_any, at):
    """fixtures/brains/v4.sql: provider none (no vec_nodes), two rows already archived, two nodes with the
    legacy status 'archived' still in nodes (never evaluated)."""
    from .conftest import has_table

    path = upgraded("v4")
    assert not has_table(path, "vec_nodes")
    now = at(UPGRADED_AT + timedelta(days=3650))
    active = run_any("list", "--status", "active", "--limit", "100")["memories"]
    expected = {n["id"] for n in active if retention_of(n, now) < 0.3}
    assert expected == {V4_F10}  # importance 0.5 reflection, never accessed: 0.25 after ten years
    archive_before = archive_rows(path)
    report = run_any("gc", "--threshold", "0.3")
    assert report["evaluated"] == len(active) == 6
    assert evicted_ids(report) == expected
    archived = archive_rows(path)
    assert {k: v for k, v in archived.items() if k in archive_before} == archive_before
    row = archived[V4_F10]
    assert (row["archive_reason"], row["status"], row["original_created_at"]) == (
        "decayed",
        "active",
        "2026-07-26 11:00:00",
    )
    assert row["archived_at"] == layout(now)
    assert V4_F10 not in node_ids(path) | fts_ids(path)
    assert not [e for e in edge_rows(path) if V4_F10 in (e[1], e[2])]
    assert any(e[1] == V4_C07 for e in edge_rows(path))  # c0000007's own supersedes edge is kept


def test_the_report_counts_every_eviction_by_type(fake_brain, at):
    at(0)
    for n in range(3):
        fake_brain.add(f"a forgettable episode {n}", importance=0.05)
    fake_brain.add("a forgettable reflection", type="reflection", importance=0.0)
    fake_brain.add("a concept worth keeping", type="concept", importance=0.9)
    at(20)
    report = fake_brain.gc(threshold=0.2, dry_run=True)
    assert report.by_type == {"episode": 3, "reflection": 1}
    scores = [e["retention_score"] for e in report.evicted]
    assert all(0 < s < 0.2 and s == round(s, 6) for s in scores)  # reported to six places


def test_a_threshold_outside_the_unit_interval_is_refused_by_name(fake_brain):
    with pytest.raises(InvalidInput) as refused:
        fake_brain.gc(threshold=2)
    assert str(refused.value) == 'threshold must lie in [0, 1], got "2"'


def test_a_new_gc_log_is_private_and_a_planted_link_is_not_followed(cli, fake_brain_path, tmp_path) -> None:
    """Issue 17: the log names what was archived; it is the user's alone, and a symlink at its path (a repository
    can commit one) is refused rather than followed into another file."""
    import os
    import stat

    log = tmp_path / "fresh.log"
    assert cli("gc", "--log", str(log)).exit_code == 0
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "linked.log"
    os.symlink(victim, link)
    result = cli("gc", "--log", str(link))
    assert result.exit_code == 2 and "cannot write the gc log" in result.stderr
    assert victim.read_text() == "keep me\n"


def test_a_memory_that_starts_holding_others_while_gc_runs_is_kept(
    fake_brain, fake_brain_path, at, monkeypatch
) -> None:
    """gc read which memories hold others before its write: a consolidation into an old, low memory that landed in
    between left its episodes consolidated under an archived summary — the topic gone from recall (a review)."""
    from cerebro import Brain

    at(0)
    summary = fake_brain.add("staging db facts", type="concept", importance=0.001)
    first, second = fake_brain.add("rotates monthly"), fake_brain.add("lives on pg-2")
    at(10_000)
    handle, real_write = fake_brain.handle, fake_brain.handle.write

    def write_after_another_process(work):  # the handle's own write, a moment later
        with Brain.open(fake_brain_path) as other:
            other.consolidate(summary, [first, second])
        return real_write(work)

    monkeypatch.setattr(handle, "write", write_after_another_process)
    report = fake_brain.gc(threshold=0.5, dry_run=False)
    monkeypatch.undo()
    assert summary not in {e["id"] for e in report.evicted}
    assert fake_brain.get(summary).node.status == "active"


def test_gc_reads_every_memory_outside_its_write_and_rejudges_the_candidates_inside(
    fake_brain, fake_brain_path, at, monkeypatch
) -> None:
    """Loading every active memory inside the write held the lock 15 s at 60,000 memories: other writers gave up
    (a review). The write now reads only the candidates, as they are then: one reinforced since the read stays."""
    from cerebro import Brain

    at(0)
    kept = [fake_brain.add(f"a lasting concept {n}", type="concept", importance=0.9) for n in range(30)]
    fading, rescued = fake_brain.add("a fleeting note", importance=0.0), fake_brain.add("another", importance=0.0)
    at(10_000)
    handle, real_write, store = fake_brain.handle, fake_brain.handle.write, fake_brain.handle.store
    read_in_write: list[str] = []
    real_get_row = store.nodes.get_row

    def write_after_a_reinforcement(work):  # gc's own write, after another process reinforced a candidate
        with Brain.open(fake_brain_path) as other:
            other.update(rescued, importance=1.0)

        def counting(session, node_id):
            read_in_write.append(node_id)
            return real_get_row(session, node_id)

        monkeypatch.setattr(store.nodes, "get_row", counting)
        try:
            return real_write(work)
        finally:
            monkeypatch.setattr(store.nodes, "get_row", real_get_row)

    monkeypatch.setattr(handle, "write", write_after_a_reinforcement)
    report = fake_brain.gc(threshold=0.05, dry_run=False)
    monkeypatch.undo()
    assert {e["id"] for e in report.evicted} == {fading} and report.evaluated == len(kept) + 2
    assert set(read_in_write) <= {fading, rescued}  # never the 30 it had judged lasting
