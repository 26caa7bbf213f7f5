"""The legacy boundaries (spec §1, v4→v5 and v5→v6): provenance_convention_since and
origin_convention_since are stamped once, with the migration instant, and never re-stamped — not by a
later upgrade, not by a downgrade and upgrade again. A new brain has both equal to its birth instant
(no legacy era).
"""

from __future__ import annotations

import pytest

from cerebro import Brain, clock
from cerebro.db.migrate import HEAD_REVISION

PROVENANCE = "provenance_convention_since"
ORIGIN = "origin_convention_since"

# The boundaries the fixtures were written with.
FIXTURE_BOUNDARIES = {
    "v5": {PROVENANCE: "2026-08-12 06:45:30"},
    "v6": {PROVENANCE: "2026-08-12 06:45:30", ORIGIN: "2026-08-26 08:00:00"},
    "v7": {PROVENANCE: "2026-08-25 09:00:00", ORIGIN: "2026-08-26 14:30:00"},
    "go_v7_no_fts": {PROVENANCE: "2026-08-05 07:00:00", ORIGIN: "2026-08-27 06:30:00"},
}


@pytest.mark.parametrize("name", ["v1", "v2", "v3", "v4", "go_v4_rfc3339"])
def test_upgrade_from_before_v5_stamps_both_boundaries_with_the_migration_instant(name, kit, tmp_path):
    path = kit.load(name, tmp_path / "brain.sqlite")
    assert PROVENANCE not in kit.meta(path) and ORIGIN not in kit.meta(path)
    instant, text, _ = kit.later(7)
    clock.set_now(instant)
    Brain.open(path).close()
    meta = kit.meta(path)
    assert meta[PROVENANCE] == text
    assert meta[ORIGIN] == text


def test_subprocess_upgrade_takes_the_instant_from_cerebro_now(kit, tmp_path):
    path = kit.load("v4", tmp_path / "brain.sqlite")
    result = kit.alembic_binary("upgrade", "head", brain=path, home=tmp_path / "home", now="2026-10-02T03:04:05+02:00")
    assert result.returncode == 0, result.stderr
    meta = kit.meta(path)
    assert meta[PROVENANCE] == "2026-10-02 01:04:05"
    assert meta[ORIGIN] == "2026-10-02 01:04:05"


@pytest.mark.parametrize("name", sorted(FIXTURE_BOUNDARIES))
def test_existing_boundaries_are_never_restamped(name, kit, tmp_path):
    path = kit.load(name, tmp_path / "brain.sqlite")
    clock.set_now(kit.PINNED)
    Brain.open(path).close()
    meta = kit.meta(path)
    kept = FIXTURE_BOUNDARIES[name]
    assert meta[PROVENANCE] == kept[PROVENANCE]
    assert meta[ORIGIN] == kept.get(ORIGIN, kit.PINNED_TEXT)  # v5 has no origin boundary yet: stamped now


def test_downgrade_and_upgrade_again_keeps_the_original_boundaries(kit, tmp_path):
    """v4 and v5 fixtures: up at T1, down to v4 (and to v5) at T2, up again at T3 → the T1 stamps stay."""
    _, t1, t1_env = kit.later(0)
    _, t2, t2_env = kit.later(24 * 60)
    _, t3, t3_env = kit.later(48 * 60)
    v4 = kit.load("v4", tmp_path / "v4.sqlite")
    v5 = kit.load("v5", tmp_path / "v5.sqlite")
    v5b = kit.load("v5", tmp_path / "v5b.sqlite")
    cp = {n: tmp_path / f"{n}.checkpoint" for n in ("v4-down", "v5-down", "v5b-down")}
    steps = [
        kit.step("upgrade", "head", brain=v4, now=t1_env),
        kit.step("downgrade", "v4", brain=v4, now=t2_env, checkpoint=cp["v4-down"]),
        kit.step("upgrade", "head", brain=v4, now=t3_env),
        kit.step("upgrade", "head", brain=v5, now=t1_env),
        kit.step("downgrade", "v4", brain=v5, now=t2_env, checkpoint=cp["v5-down"]),
        kit.step("upgrade", "head", brain=v5, now=t3_env),
        kit.step("upgrade", "head", brain=v5b, now=t1_env),
        kit.step("downgrade", "v5", brain=v5b, now=t2_env, checkpoint=cp["v5b-down"]),
        kit.step("upgrade", "head", brain=v5b, now=t3_env),
    ]
    kit.alembic_batch(steps, home=tmp_path / "home")

    # Down at v4 the keys are still there (downgrades keep them) and schema_version says 4.
    assert kit.meta(cp["v4-down"])["schema_version"] == "4"
    assert kit.meta(cp["v4-down"])[PROVENANCE] == t1
    assert kit.meta(cp["v4-down"])[ORIGIN] == t1
    assert kit.meta(cp["v5-down"])[PROVENANCE] == FIXTURE_BOUNDARIES["v5"][PROVENANCE]
    assert kit.meta(cp["v5b-down"])["schema_version"] == "5"
    assert kit.meta(cp["v5b-down"])[ORIGIN] == t1

    # Up again at T3: nothing re-stamped.
    assert {k: kit.meta(v4)[k] for k in (PROVENANCE, ORIGIN)} == {PROVENANCE: t1, ORIGIN: t1}
    assert {k: kit.meta(v5)[k] for k in (PROVENANCE, ORIGIN)} == {
        PROVENANCE: FIXTURE_BOUNDARIES["v5"][PROVENANCE],
        ORIGIN: t1,
    }
    assert {k: kit.meta(v5b)[k] for k in (PROVENANCE, ORIGIN)} == {
        PROVENANCE: FIXTURE_BOUNDARIES["v5"][PROVENANCE],
        ORIGIN: t1,
    }
    for path in (v4, v5, v5b):
        assert kit.meta(path)["schema_version"] == "7"
        assert t2 not in kit.meta(path).values() and t3 not in kit.meta(path).values()


def test_brain_open_after_a_downgrade_keeps_the_boundaries(kit, tmp_path, isolated_home):
    """Brain.open at T1, `alembic downgrade v4` at T2, Brain.open at T3: still T1, and a backup was taken."""
    t1, t1_text, _ = kit.later(0)
    _, _, t2_env = kit.later(60)
    t3, _, _ = kit.later(120)
    path = kit.load("v4", tmp_path / "brain.sqlite")
    clock.set_now(t1)
    Brain.open(path).close()
    kit.alembic_batch([kit.step("downgrade", "v4", brain=path, now=t2_env)], home=isolated_home)
    assert kit.meta(path)["schema_version"] == "4"
    clock.set_now(t3)
    with Brain.open(path) as brain:
        assert brain.upgrade_backup is not None
        assert "pre-v4-upgrade" in brain.upgrade_backup
    meta = kit.meta(path)
    assert (meta[PROVENANCE], meta[ORIGIN], meta["schema_version"]) == (t1_text, t1_text, "7")


def test_new_brain_has_both_boundaries_at_its_birth(kit, tmp_path):
    instant, text, _ = kit.later(5)
    clock.set_now(instant)
    path = tmp_path / "new.sqlite"
    result = Brain.init(path)
    assert result.created
    meta = kit.meta(path)
    assert meta[PROVENANCE] == text
    assert meta[ORIGIN] == text
    assert meta["schema_version"] == "7"
    assert kit.read_tables(path)["alembic_version"] == {HEAD_REVISION: {"version_num": HEAD_REVISION}}
    # Re-initialising later changes neither.
    clock.set_now(kit.later(500)[0])
    assert not Brain.init(path).created
    assert {k: kit.meta(path)[k] for k in (PROVENANCE, ORIGIN)} == {PROVENANCE: text, ORIGIN: text}
