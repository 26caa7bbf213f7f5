"""``recall --prime`` (upstream cmd_prime_mmr_test, search_test's Surprise/PrimeScore, mmr_test,
store_test's TouchSurfaced): pools and budgets, the 7-day and 48-hour windows, MMR, last_surfaced."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from cerebro import Brain, clock, prime, scoring
from tests.conftest import snapshot
from tests.fakes import hashed_vector

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def clock_at_t0():  # every test of this module runs at T0
    clock.set_now(T0)
    yield
    clock.set_now(None)


def at(instant: datetime) -> None:
    clock.set_now(instant)


def budgets(limit: int) -> list[int]:
    return [prime.budget(share, limit) for _, share, *_ in prime.POOLS]


# ----------------------------------------------------------------------------- budgets


def test_pool_order_shares_and_multipliers():
    assert [(name, share, mult) for name, share, mult, *_ in prime.POOLS] == [
        ("concept", 0.35, 3),
        ("procedure", 0.25, 3),
        ("episode", 0.20, 2),
        ("reflection", 0.10, 3),
        ("recent", 0.10, 5),
    ]


def test_budgets_at_the_default_limit():
    # 0.35×20 = 7, 0.25×20 = 5, 0.20×20 = 4, 0.10×20 = 2, 0.10×20 = 2
    assert budgets(20) == [7, 5, 4, 2, 2]


def test_every_budget_is_at_least_one():
    # 0.35, 0.25, 0.20, 0.10, 0.10 all round to 0 → 1
    assert budgets(1) == [1, 1, 1, 1, 1]
    assert budgets(2) == [1, 1, 1, 1, 1]  # 0.7→1, 0.5→1 (half up), 0.4→0→1, 0.2→0→1


def test_budgets_round_half_away_from_zero_like_go():
    # limit 10: 3.5 → 4, 2.5 → 3 (Python's round() would give 2), 2.0 → 2, 1.0 → 1
    assert budgets(10) == [4, 3, 2, 1, 1]
    # limit 30: 10.5 → 11 (round() would give 10), 7.5 → 8, 6, 3, 3
    assert budgets(30) == [11, 8, 6, 3, 3]
    assert prime.budget(0.1, 5) == 1  # 0.5 → 1


def test_concept_pool_is_capped_at_budget_times_multiplier(fake_brain):
    at(T0 - timedelta(days=30))  # too old for the 48 h "recent" pool
    ids = [
        fake_brain.add(f"concept number {i} about topic{i}", type="concept", importance=i / 10) for i in range(1, 11)
    ]
    at(T0)
    # limit 4: concept budget round(1.4) = 1, ×3 = 3 candidates; no other pool has anything.
    primed = fake_brain.prime(limit=4)
    assert {p.node.id for p in primed} == set(ids[-3:])  # the three most important
    assert len(primed) == 3


def test_prime_never_exceeds_the_limit_and_dedupes(fake_brain):
    for i in range(6):
        fake_brain.add(f"concept {i} kiwi{i}", type="concept")  # in the concept and the recent pool
    primed = fake_brain.prime(limit=4)
    ids = [p.node.id for p in primed]
    assert len(ids) == 4
    assert len(set(ids)) == 4


# ----------------------------------------------------------------------------- pools and windows


def test_old_episodes_excluded_unless_recently_changed(fake_brain):
    at(T0 - timedelta(days=10))
    old = fake_brain.add("old episode about ferries", type="episode")
    old_changed = fake_brain.add("old episode about trams", type="episode")
    old_changed_long_ago = fake_brain.add("old episode about buses", type="episode")
    old_concept = fake_brain.add("a concept about rivers", type="concept")
    at(T0 - timedelta(days=3))
    recent = fake_brain.add("recent episode about bikes", type="episode")
    fake_brain.update(old_changed_long_ago, content="old episode about buses, revised")  # 72 h ago
    at(T0 - timedelta(hours=47))
    fake_brain.update(old_changed, content="old episode about trams, revised")  # within 48 h
    at(T0)
    primed = {p.node.id for p in fake_brain.prime(limit=20)}
    assert recent in primed  # created within 7 days
    assert old_changed in primed  # via the 48 h "recent" pool
    assert old_concept in primed  # concepts have no age limit
    assert old not in primed
    assert old_changed_long_ago not in primed


def test_episode_window_edges(fake_brain):
    at(T0 - timedelta(days=7))
    exactly_week = fake_brain.add("episode exactly a week old", type="episode")
    at(T0 - timedelta(days=7, seconds=1))
    just_older = fake_brain.add("episode a week and a second old", type="episode")
    at(T0)
    primed = {p.node.id for p in fake_brain.prime(limit=20)}
    assert exactly_week in primed
    assert just_older not in primed


def test_non_active_memories_are_excluded(fake_brain):
    old = fake_brain.add("concept soon replaced", type="concept", importance=1.0)
    kept = fake_brain.add("concept that stays", type="concept", importance=0.2)
    new = fake_brain.supersede(old, "concept replacement text")
    primed = {p.node.id for p in fake_brain.prime(limit=20)}
    assert old not in primed
    assert {new, kept} <= primed


def test_every_type_is_primed(fake_brain):
    ids = {
        t: fake_brain.add(f"a {t} memory item{t}", type=t) for t in ("concept", "procedure", "episode", "reflection")
    }
    assert {p.node.id for p in fake_brain.prime(limit=20)} == set(ids.values())


def test_prime_on_an_empty_brain(fake_brain, cli):
    assert fake_brain.prime() == []
    result = cli("recall", "--prime")
    assert result.exit_code == 0, result
    assert "No memories found." in result.stdout


def test_prime_works_without_embeddings(tmp_path):
    path = tmp_path / "none.sqlite"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        node = brain.add("a concept without a vector", type="concept")
        assert [p.node.id for p in brain.prime()] == [node]


# ----------------------------------------------------------------------------- scoring and MMR


def test_prime_scores(fake_brain):
    node = fake_brain.add("a concept never surfaced", type="concept", importance=0.5)
    (primed,) = fake_brain.prime()
    assert primed.node.id == node
    assert primed.score == pytest.approx(0.5)  # 0.6×0.5 + 0.4×0.5 (never updated nor surfaced)
    assert primed.lanes == {"prime": 1}


def test_mmr_picks_a_diverse_memory_over_a_near_duplicate(fake_brain):
    a_text, dup_text, other_text = (
        "postgres pool sizing tips",
        "Postgres pool sizing tips!",
        "frontend dark mode toggle",
    )
    assert scoring.cosine(hashed_vector(a_text), hashed_vector(dup_text)) == pytest.approx(1.0)
    assert scoring.cosine(hashed_vector(a_text), hashed_vector(other_text)) == 0.0
    a = fake_brain.add(a_text, type="concept", importance=0.9)
    dup = fake_brain.add(dup_text, type="concept", importance=0.85)
    other = fake_brain.add(other_text, type="concept", importance=0.5)
    # scores: a 0.6×0.9+0.2 = 0.74, dup 0.6×0.85+0.2 = 0.71, other 0.6×0.5+0.2 = 0.50
    # after a: dup 0.6×0.71 − 0.4×1.0 = 0.026; other 0.6×0.50 − 0.4×0 = 0.30 → other
    primed = [p.node.id for p in fake_brain.prime(limit=2)]
    assert primed == [a, other]
    assert [p.node.id for p in fake_brain.prime(limit=3)] == [a, other, dup]


def test_surprise_ranks_updated_since_surfaced_higher(fake_brain):
    quiet = fake_brain.add("reflection on code review cadence", type="concept", importance=0.5)
    changed = fake_brain.add("concept about cache invalidation", type="concept", importance=0.5)
    at(T0 + timedelta(hours=1))
    assert fake_brain.touch_surfaced([quiet, changed])
    at(T0 + timedelta(hours=2))
    fake_brain.update(changed, content="concept about cache invalidation, with TTLs")
    at(T0 + timedelta(hours=3))
    primed = fake_brain.prime(limit=2)
    assert [p.node.id for p in primed] == [changed, quiet]
    # changed: 0.6×0.5 + 0.4×1.0 = 0.7 (updated after it was last surfaced)
    assert primed[0].score == pytest.approx(0.7)
    # quiet: surfaced 2 h ago, never updated: 0.3 + 0.4×(1 − e^−0.02) = 0.3 + 0.4×0.019801 = 0.307921
    assert primed[1].score == pytest.approx(0.3 + 0.4 * (1 - math.exp(-0.02)))
    assert primed[1].score == pytest.approx(0.307921, abs=1e-6)


# ----------------------------------------------------------------------------- writes


def test_cli_prime_stamps_last_surfaced_only(cli, fake_brain_path):
    with Brain.open(fake_brain_path) as brain:
        top = brain.add("very important concept", type="concept", importance=1.0)
        rest = [brain.add(f"minor concept {i} zz{i}", type="concept", importance=0.1) for i in range(3)]
    at(T0 + timedelta(hours=5))
    result = cli("recall", "--prime", "--limit", "1", "--format", "json")
    assert result.exit_code == 0, result
    data = result.json()
    assert data["mode"] == "prime"
    assert [r["id"] for r in data["results"]] == [top]
    with Brain.open(fake_brain_path) as brain:
        node = brain.get(top).node
        assert node.last_surfaced == T0 + timedelta(hours=5)
        assert node.access_count == 0  # prime touches last_surfaced only
        assert node.last_accessed == T0
        for other in rest:
            assert brain.get(other).node.last_surfaced is None


def test_cli_prime_uses_prime_limit(cli, fake_brain_path):
    with Brain.open(fake_brain_path) as brain:
        for i in range(6):
            brain.add(f"concept {i} kiwi{i}", type="concept")
        brain.config_set("prime_limit", "2")
    result = cli("recall", "--prime", "--format", "json")
    assert len(result.json()["results"]) == 2
    with Brain.open(fake_brain_path) as brain:
        assert len(brain.prime()) == 2
        assert len(brain.prime(limit=5)) == 5


def test_prime_reports_the_statuses_a_recall_reports(cli, fake_brain_path):
    """`recall --prime --format json` (and Brain.prime) left provenance_status and origin_status null, which a recall
    of the same memories fills (a review)."""
    with Brain.open(fake_brain_path) as brain:
        source = brain.add("kiwi orchard notes", type="concept")
        derived = brain.add("kiwi orchards need frost cover", type="concept")
        brain.add_edge(derived, source, "derived_from")
        recalled = {r.node.id: r.node for r in brain.recall("kiwi orchard")}
        primed = {p.node.id: p.node for p in brain.prime()}
    statuses = {i: (n.provenance_status, n.origin_status) for i, n in recalled.items()}
    assert {i: (n.provenance_status, n.origin_status) for i, n in primed.items()} == statuses
    assert statuses[derived][0] is not None and statuses[derived][1] is not None
    shown = cli("recall", "--prime", "--format", "json").json()["results"]
    assert {r["id"]: (r["provenance_status"], r["origin_status"]) for r in shown} == statuses


def test_api_prime_does_not_write(fake_brain, fake_brain_path):
    fake_brain.add("a concept", type="concept")
    fake_brain.add("an episode", type="episode")
    before = snapshot(fake_brain_path)
    assert len(fake_brain.prime()) == 2
    assert snapshot(fake_brain_path) == before


def test_cli_prime_then_surprise_drops(cli, fake_brain_path):
    """After the CLI surfaces a memory, its surprise restarts from 0 and grows with time."""
    with Brain.open(fake_brain_path) as brain:
        node = brain.add("a concept", type="concept", importance=0.5)
    cli("recall", "--prime")
    at(T0 + timedelta(hours=100))
    with Brain.open(fake_brain_path) as brain:
        (primed,) = brain.prime()
    assert primed.node.id == node
    # 0.3 + 0.4×(1 − e^−1) = 0.3 + 0.4×0.632121 = 0.552848
    assert primed.score == pytest.approx(0.552848, abs=1e-6)


def test_cli_explicit_limit_beats_prime_limit(cli, fake_brain_path):
    """Precedence is flag > brain value > default (cerebro.config): an explicit --limit 20 is a flag too."""
    with Brain.open(fake_brain_path) as brain:
        for i in range(6):
            brain.add(f"concept {i} kiwi{i}", type="concept")
        brain.config_set("prime_limit", "2")
    assert len(cli("recall", "--prime", "--limit", "3", "--format", "json").json()["results"]) == 3
    assert len(cli("recall", "--prime", "--limit", "20", "--format", "json").json()["results"]) == 6
