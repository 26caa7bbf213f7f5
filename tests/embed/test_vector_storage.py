"""How vectors are stored (ADR 0029): int8 — a byte a dimension, a quarter of float32 — unless the brain's provider
is one Go cerebro embeds with too (its vectors stay float32 so Go can go on using them). A table made before
keeps its float32 and works; `reembed` converts it."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cerebro import Brain
from cerebro.db.engine import connect_raw
from cerebro.store import vec
from cerebro.store.sql import text
from tests.fakes import hashed_vector


def _definition(path: Path) -> str:
    conn = connect_raw(path, wal=False)
    try:
        return conn.execute("SELECT sql FROM sqlite_master WHERE name = 'vec_nodes'").fetchone()[0]
    finally:
        conn.close()


def _blob_lengths(path: Path) -> set[int]:
    conn = connect_raw(path, wal=False)
    try:
        return {r[0] for r in conn.execute("SELECT length(embedding) FROM vec_nodes").fetchall()}
    finally:
        conn.close()


def test_int8_round_trip_keeps_the_direction_and_gives_a_unit_vector() -> None:
    vector = hashed_vector("the deploy runs through the staging cluster first")
    blob = vec.to_blob(vector, vec.INT8)
    assert len(blob) == len(vector)  # a byte a dimension
    assert max(abs(b) for b in memoryview(blob).cast("b")) == 127  # the largest component uses the whole range
    back = vec.from_blob(blob, vec.INT8)
    assert math.hypot(*back) == pytest.approx(1.0)
    assert _cosine(back, vector) > 0.9999
    assert vec.from_blob(vec.to_blob([0.0, 0.0, 0.0], vec.INT8), vec.INT8) == [0.0, 0.0, 0.0]  # no division by 0
    assert vec.to_blob([0.5, -1.0, 0.25], vec.INT8) == bytes([64, 256 - 127, 32])  # round(63.5) is 64: half to even
    assert vec.from_blob(vec.to_blob([0.5, -2.0], vec.FLOAT)) == [0.5, -2.0]  # float32 as before


def test_int8_bytes_are_the_same_with_and_without_numpy() -> None:
    # A bulk write packs int8 vectors with NumPy once it is loaded, a lone one without: both are the column's bytes,
    # or one brain would hold two roundings (the warm index's exact scan multiplies the stored integers).
    import random

    rng = random.Random(5)
    vectors = [[rng.gauss(0.0, 1.0) for _ in range(384)] for _ in range(200)]
    vectors += [[0.5, -1.0, 0.25, 1.5 / 127, -2.5 / 127], [3.0, -3.0, 1.5], [1e-300, -2e-300], [0.0] * 4]
    vectors += [[round(rng.uniform(-127, 127)) / 2 for _ in range(384)] for _ in range(50)]  # halves: ties to even
    for vector in vectors:
        assert vec.to_blob(vector, vec.INT8) == vec._int8_blob(vector) == vec.int8_values(vector).tobytes()
    for bad in ([float("nan"), 1.0], [1.0, float("nan")], [float("inf"), 1.0], [1e-310, -1e-311]):
        with pytest.raises(ValueError):  # no int8 form: refused on both paths, never garbage bytes
            vec._int8_blob(bad)
        with pytest.raises(ValueError):
            vec.int8_values(bad)


def test_a_new_brain_stores_int8_a_byte_a_dimension(fake_brain, fake_brain_path) -> None:
    node_id = fake_brain.add("the kettle was descaled on monday")
    dims = fake_brain.stats().embedding_dimensions
    assert f"embedding int8[{dims}]" in _definition(fake_brain_path)
    assert _blob_lengths(fake_brain_path) == {dims}
    with fake_brain.handle.snapshot() as conn:
        stored = vec.vectors_for(conn, [node_id])[node_id]
    expected = hashed_vector("the kettle was descaled on monday")
    assert stored == pytest.approx(vec.from_blob(vec.to_blob(expected, vec.INT8), vec.INT8))


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.hypot(*a) * math.hypot(*b))


def test_knn_over_int8_finds_what_float_finds(fake_brain) -> None:
    """The vector lane on int8 ranks as float32 would (the fake embedder's vectors): the same nearest, the same
    distances down the list (ties in any order), each within the rounding."""
    texts = [f"{a} {b} note" for a in ("kettle", "boiler", "deploy", "token") for b in ("red", "blue", "green")]
    ids = fake_brain.add_many([{"content": t} for t in texts])
    query = hashed_vector("kettle blue")
    with fake_brain.handle.snapshot() as conn:
        hits = vec.knn(conn, query, 5)
    exact_all = sorted((1 - _cosine(hashed_vector(t), query), i) for t, i in zip(texts, ids, strict=True))
    exact = exact_all[:5]
    exact_by_id = {i: d for d, i in exact_all}
    assert hits[0][0] == exact[0][1]  # "kettle blue note"
    assert [d for _, d in hits] == pytest.approx([d for d, _ in exact], abs=0.01)  # as deep, ties in any order
    assert all(exact_by_id[i] == pytest.approx(d, abs=0.01) for i, d in hits)


def test_an_ollama_brain_keeps_float32_for_go(tmp_path: Path) -> None:
    path = tmp_path / "go-shared.sqlite"
    Brain.init(path, embed_provider="ollama")
    assert "embedding float[768]" in _definition(path)
    assert vec.element_for_provider("ollama") == vec.element_for_provider("voyage") == vec.FLOAT
    assert vec.element_for_provider("local") == vec.element_for_provider("fake") == vec.INT8


def _as_before_adr_0029(path: Path) -> None:
    """The float32 table every brain had before: same vectors, as float32 blobs."""
    conn = connect_raw(path, wal=False)
    rows = conn.execute("SELECT rowid, node_id, embedding FROM vec_nodes").fetchall()
    dims = len(rows[0][2])
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DROP TABLE vec_nodes")
    conn.execute(
        f"CREATE VIRTUAL TABLE vec_nodes USING vec0(node_id TEXT, embedding float[{dims}] distance_metric=cosine)"
    )
    for rowid, node_id, blob in rows:
        conn.execute(
            "INSERT INTO vec_nodes (rowid, node_id, embedding) VALUES (?, ?, ?)",
            (rowid, node_id, vec.to_blob(vec.from_blob(blob, vec.INT8))),
        )
    conn.execute("COMMIT")
    conn.close()


def test_a_float32_table_from_before_keeps_working_and_reembed_converts_it(fake_brain_path: Path) -> None:
    with Brain.open(fake_brain_path) as brain:
        first = brain.add("the kettle was descaled on monday")
    _as_before_adr_0029(fake_brain_path)
    dims = len(hashed_vector("x"))
    assert f"embedding float[{dims}]" in _definition(fake_brain_path)
    with Brain.open(fake_brain_path) as brain:
        second = brain.add("the boiler pressure was checked")  # written as float32, as the table says
        assert _blob_lengths(fake_brain_path) == {4 * dims}
        assert brain.recall("kettle descaled", limit=1).ids == [first]
        assert brain.recall("boiler pressure", limit=1).ids == [second]
        report = brain.reembed()  # same model: only the storage changes
        assert (report["skipped"], report["embedded_now"], report["active"]) == (False, 2, 2)
    assert f"embedding int8[{dims}]" in _definition(fake_brain_path)
    assert _blob_lengths(fake_brain_path) == {dims}
    with Brain.open(fake_brain_path) as brain:
        assert brain.recall("kettle descaled", limit=1).ids == [first]
        assert brain.reembed()["skipped"]  # converted: nothing left to do


def test_the_side_table_of_a_reembed_takes_the_new_providers_element_type(fake_brain) -> None:
    """Going back to a provider Go shares (``reembed --provider ollama``) builds a float32 table again."""
    for provider, kind in (("ollama", "float"), ("local", "int8")):

        def build(session, provider: str = provider) -> str:
            vec.ensure_next_table(session, 8, provider)
            made = vec.element(session, vec.NEXT_TABLE)
            session.execute(text(f"DROP TABLE {vec.NEXT_TABLE}"))
            return made

        assert fake_brain.handle.write(build) == kind


def test_a_float32_table_from_before_loads_into_the_warm_index_and_ranks_as_sqlite_vec(fake_brain_path: Path) -> None:
    from cerebro.store import warm

    with Brain.open(fake_brain_path) as brain:
        brain.add_many([{"content": f"{a} {b} note"} for a in ("kettle", "boiler", "deploy") for b in ("red", "blue")])
    _as_before_adr_0029(fake_brain_path)
    query = hashed_vector("boiler blue")
    conn = connect_raw(fake_brain_path, wal=False)
    try:
        index = warm.WarmVectors()
        assert index.load(conn)
        assert index._matrix.shape[1] == len(query)
        expected = vec.knn(conn, query, 4)
    finally:
        conn.close()
    got = index.knn(query, 4)
    assert [d for _, d in got] == pytest.approx([d for _, d in expected], abs=1e-6)
    assert got[0][0] == expected[0][0]


def test_the_centering_mean_of_a_float32_table_is_the_mean_of_its_vectors(fake_brain_path: Path) -> None:
    import numpy as np

    with Brain.open(fake_brain_path) as brain:
        brain.add_many([{"content": f"memory {i} about topic{i % 7} and thing{i % 5}"} for i in range(60)])
    _as_before_adr_0029(fake_brain_path)
    conn = connect_raw(fake_brain_path, wal=False)
    try:
        blobs = [r[0] for r in conn.execute("SELECT embedding FROM vec_nodes LIMIT 256").fetchall()]
        mean = vec.mean_vector(conn, 256, 50)
    finally:
        conn.close()
    expected = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1).mean(axis=0)
    assert mean == pytest.approx(expected.tolist(), abs=1e-6)


@pytest.mark.parametrize("stored", ["int8", "float32"])
def test_the_centering_mean_is_the_same_with_numpy_loaded_or_not(fake_brain_path: Path, stored: str) -> None:
    """A one-shot process without NumPy sums the mean in Python; one that loaded NumPy already (the local model, the
    warm index) in NumPy (ADR 0036): the same mean, so the same ranking, either way."""
    import json
    import subprocess
    import sys

    with Brain.open(fake_brain_path) as brain:
        brain.add_many([{"content": f"memory {i} about topic{i % 7} and thing{i % 5}"} for i in range(60)])
    if stored == "float32":
        _as_before_adr_0029(fake_brain_path)
    code = (
        "import json, sys\n"
        "from cerebro.db.engine import connect_raw\n"
        "from cerebro.store import vec\n"
        "conn = connect_raw(sys.argv[1], wal=False)\n"
        "mean = vec.mean_vector(conn, 256, 50)\n"
        "print(json.dumps(['numpy' in sys.modules, mean]))\n"
    )
    ran = subprocess.run([sys.executable, "-c", code, str(fake_brain_path)], capture_output=True, text=True, check=True)
    loaded, by_list = json.loads(ran.stdout)
    assert loaded is False  # the list arithmetic ran
    import numpy  # noqa: F401 - loaded: mean_vector takes the NumPy path

    conn = connect_raw(fake_brain_path, wal=False)
    try:
        by_numpy = vec.mean_vector(conn, 256, 50)
    finally:
        conn.close()
    assert by_numpy is not None and len(by_numpy) == len(by_list) > 0
    assert by_numpy == pytest.approx(by_list, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("stored", ["int8", "float32"])
def test_a_kept_centering_mean_is_read_back_whatever_the_element_type(
    fake_brain_path: Path, tmp_path: Path, stored: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file a one-shot process keeps the mean in (ADR 0055) holds one float64 a dimension, for int8 rows (a byte
    a dimension) and float32 ones (four) alike."""
    from cerebro.store import centering

    with Brain.open(fake_brain_path) as brain:
        brain.add_many([{"content": f"memory {i} about topic{i % 7} and thing{i % 5}"} for i in range(60)])
    if stored == "float32":
        _as_before_adr_0029(fake_brain_path)
    kept = tmp_path / "kept.mean"
    conn = connect_raw(fake_brain_path, wal=False)
    try:
        plain = vec.mean_vector(conn, 256, 50)
        assert plain is not None and vec.mean_vector(conn, 256, 50, kept) == plain
        monkeypatch.setattr(centering, "_arithmetic", lambda *args: pytest.fail("computed again"))
        assert vec.mean_vector(conn, 256, 50, kept) == plain
    finally:
        conn.close()
