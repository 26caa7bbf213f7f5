"""A one-shot process keeps a brain file's centering mean in a file for the next one (ADR 0055): the same floats
as computed, read back only while the rows it came from are unchanged."""

from __future__ import annotations

import stat

import pytest

from cerebro import process
from cerebro.store import centering, vec

# A brain file's: a team brain's mean is the server's arithmetic.
pytestmark = pytest.mark.file_only


def _filled(brain, count: int = 60) -> list[str]:
    return brain.add_many([{"content": f"atlas team note item{i} about {i % 7} deploys"} for i in range(count)])


def _mean(brain, kept=None):
    with brain.handle.snapshot() as conn:
        return brain.handle.store.vectors.mean_vector(conn, 256, 50, kept)


def test_the_kept_mean_is_the_computed_one_and_is_read_back(fake_brain, tmp_path, monkeypatch) -> None:
    _filled(fake_brain)
    kept = tmp_path / "home" / "cache" / "centering" / "brain.mean"
    plain = _mean(fake_brain)
    assert plain is not None and _mean(fake_brain, kept) == plain  # the same floats, not approximately
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    monkeypatch.setattr(centering, "_arithmetic", lambda *args: pytest.fail("computed again"))
    assert _mean(fake_brain, kept) == plain


def test_a_changed_sample_is_computed_again(fake_brain, tmp_path) -> None:
    ids = _filled(fake_brain)
    kept = tmp_path / "brain.mean"
    before = _mean(fake_brain, kept)
    fake_brain.update(ids[0], content="a wholly different memory about kafka partitions")  # re-embedded
    after = _mean(fake_brain)
    assert after != before and _mean(fake_brain, kept) == after  # not the mean kept for the rows before


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"short",
        b"\0" * 32 + b"\1" * 16,
        "a value cut short",
        "whole values cut short",
        "a value turned NaN",  # the digest and the length right: recall would fail on it at every query
        "the values zeroed",  # as a crash before the data reached the disk may leave them: ranking silently skewed
        "another release's layout",  # a whole file, but its digest made without this release's tag
    ],
)
def test_a_damaged_or_foreign_file_is_computed_again_and_replaced(fake_brain, tmp_path, monkeypatch, damage) -> None:
    _filled(fake_brain)
    kept = tmp_path / "brain.mean"
    plain = _mean(fake_brain)
    if isinstance(damage, str):  # a file as kept, then damaged
        import math
        import struct

        _mean(fake_brain, kept)
        data = kept.read_bytes()
        if damage == "a value turned NaN":
            data = data[:40] + struct.pack("<d", math.nan) + data[48:]
        elif damage == "the values zeroed":
            data = data[:32] + b"\0" * (len(data) - 64) + data[-32:]
        elif damage == "another release's layout":
            with fake_brain.handle.snapshot() as conn:
                blobs = [row[0] for row in conn.execute("SELECT embedding FROM vec_nodes LIMIT 256")]
            digest = centering.paths.sha256(vec.INT8.encode() + b"".join(blobs)).digest()  # without the tag
            other = b"\0" * (len(data) - 64)  # another arithmetic's values, kept as that release keeps them
            data = digest + other + centering._check(digest, other)
        else:
            data = data[: -1 if damage == "a value cut short" else -16]
        damage = data
    kept.write_bytes(damage)
    assert _mean(fake_brain, kept) == plain
    monkeypatch.setattr(centering, "_arithmetic", lambda *args: pytest.fail("computed again"))
    assert _mean(fake_brain, kept) == plain  # the file was written anew


def test_a_home_that_cannot_be_written_costs_only_the_arithmetic(fake_brain, tmp_path) -> None:
    _filled(fake_brain)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    assert _mean(fake_brain, blocker / "centering" / "brain.mean") == _mean(fake_brain)
    assert blocker.read_text() == "" and not list(tmp_path.glob("**/*.tmp"))


def test_only_a_one_shot_process_keeps_the_mean_and_it_ranks_as_without_it(
    fake_brain, fake_brain_path, pinned_clock, monkeypatch
) -> None:
    from cerebro import Brain

    _filled(fake_brain)
    fake_brain.add("deploy runbook for the atlas team")
    kept = centering.file_for(fake_brain_path)

    def ranked(brain) -> list[tuple[str, float]]:
        return [(r.node.id, r.score) for r in brain.recall("atlas deploy", limit=10).results]

    with Brain.open(fake_brain_path) as library:  # a long-lived process: the mean in memory only
        expected = ranked(library)
    assert not kept.exists()
    computed = []
    arithmetic = centering._arithmetic
    monkeypatch.setattr(centering, "_arithmetic", lambda *args: computed.append(1) or arithmetic(*args))
    process.ONE_SHOT = True
    try:
        for _ in range(2):  # the first computes it and keeps it, the second reads it
            with Brain.open(fake_brain_path) as once:
                assert ranked(once) == expected
            assert kept.is_file()
    finally:
        process.ONE_SHOT = False
    assert computed == [1]


def test_the_folder_keeps_the_most_recently_written_means(fake_brain, tmp_path, monkeypatch) -> None:
    """Throwaway brains (an eval's, a test's) leave their files behind: a write beyond KEPT_FILES removes the oldest."""
    import os

    _filled(fake_brain)
    folder = tmp_path / "centering"
    folder.mkdir()
    monkeypatch.setattr(centering, "KEPT_FILES", 5)
    for number in range(7):  # older files of gone brains, oldest first
        stale = folder / f"gone{number}.mean"
        stale.write_bytes(b"\0" * 40)
        os.utime(stale, ns=(10**9 * number, 10**9 * number))
    (folder / "notes.txt").write_text("not a mean")  # not the cache's: left alone
    (folder / "gone0.mean.123.tmp").write_bytes(b"\0" * 8)  # half-written by a process killed long ago: goes
    os.utime(folder / "gone0.mean.123.tmp", ns=(10**9, 10**9))
    (folder / "other.mean.456.tmp").write_bytes(b"\0" * 8)  # being written now, by another process: stays
    kept = folder / "brain.mean"
    assert _mean(fake_brain, kept) == _mean(fake_brain)
    assert sorted(p.name for p in folder.iterdir()) == [
        "brain.mean",
        "gone3.mean",
        "gone4.mean",
        "gone5.mean",
        "gone6.mean",
        "notes.txt",
        "other.mean.456.tmp",
    ]
