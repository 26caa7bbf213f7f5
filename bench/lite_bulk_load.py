"""Bulk-load the benchmark's items into mcp-memory-service-lite's database: the state N ``memory_store`` calls produce.

The lite service has no batch tool, and one ``memory_store`` a call loads ~20 memories/s here (99,000 items: ~85 min),
so ``mcp_peers_bench.py`` loads the untimed bulk of a size this way, then starts the server on the file. Each item goes
through the tool's own handler (``handle_store_memory``: content hash, tags, type, metadata, conversation id) against
a storage proxy that queues the memory it built; the texts are embedded with the package's model, tokenizer and pooling
(each batch padded to its longest text rather than to the tokenizer's fixed 128 tokens: bit-identical vectors, ~3×
less CPU); the memories go in through the storage's own ``store_batch``; and the conflict detection ``store()`` runs
after each insert (which ``store_batch`` skips) is replayed in insertion order. Compared table by table with the same
items sent through the real server over MCP, the files were identical but for timestamps (2026-12-03). Before it
returns, a sample of the stored vectors is checked against the package's own one-text embedding.

Run by the benchmark under ``bench/peers/lite/bin/python`` with the server's environment (``lite_env``):

    bench/peers/lite/bin/python bench/lite_bulk_load.py ITEMS.jsonl
"""

# Runs in the peer's own environment, on its objects (bench/peers/lite): no types to name here.
# ruff: noqa: ANN001, ANN201, ANN202, ANN204
import asyncio
import json
import logging
import random
import sys
from difflib import SequenceMatcher
from types import SimpleNamespace

import numpy as np


class _Deferred:
    """Storage proxy for MemoryService: store() queues the Memory the real handler built; the rest delegates."""

    def __init__(self, storage):
        self._storage, self.queued = storage, []

    def __getattr__(self, name):
        return getattr(self._storage, name)

    async def store(self, memory, skip_semantic_dedup=False, store="default", recreate=None):
        assert skip_semantic_dedup and store == "default" and recreate is False, (skip_semantic_dedup, store, recreate)
        self.queued.append(memory)
        return True, "deferred"


class _Precomputed:
    """Stands in for storage.embedding_model inside store_batch(): returns the rows computed beforehand."""

    def __init__(self, vectors, contents):
        self.vectors, self.contents = vectors, contents

    def encode(self, texts, convert_to_numpy=True):
        assert list(texts) == self.contents
        return self.vectors


def embed_all(model, texts, threads=1, batch=32):
    """ONNXEmbeddingModel.encode (same model, tokenizer, mean pooling, normalisation), but each batch padded to its
    longest text instead of the tokenizer's fixed 128 and batches of similar lengths: bit-identical output (checked),
    ~3x less CPU. Own session: `threads` intra-op threads, no spinning."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(
        str(model._resolve_model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    encoded = model._tokenizer.encode_batch(texts)  # truncation (128) and fixed padding as configured
    lengths = np.array([sum(e.attention_mask) for e in encoded])
    order = np.argsort(lengths, kind="stable")
    out = np.empty((len(texts), model.embedding_dimension), dtype=np.float32)
    for start in range(0, len(texts), batch):
        idx = order[start : start + batch]
        width = int(lengths[idx].max())
        ids = np.array([encoded[i].ids[:width] for i in idx], dtype=np.int64)
        mask = np.array([encoded[i].attention_mask[:width] for i in idx], dtype=np.int64)
        types = np.array([encoded[i].type_ids[:width] for i in idx], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        last = session.run(None, {k: v for k, v in feeds.items() if k in model._input_names})[0]
        m = mask[..., np.newaxis].astype(np.float32)  # the same pooling arithmetic as ONNXEmbeddingModel.encode
        pooled = np.sum(last * m, axis=1) / np.clip(m.sum(axis=1), a_min=1e-9, a_max=None)
        out[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return out


async def _replay_conflicts(storage, vectors, hashes, contents, block=256):
    """StoreMixin.store() runs _detect_conflicts after each insert (the 5 nearest of the memories already stored;
    similarity >= 0.95 and text divergence >= 0.20) and _record_conflicts on a hit; store_batch() does not. Replay
    it in insertion order: numpy finds candidates (with slack), sqlite-vec gives the exact distances."""
    from sqlite_vec import serialize_float32

    found = 0
    for a in range(0, len(hashes), block):
        b = min(a + block, len(hashes))
        sims = vectors[a:b] @ vectors[:b].T
        for k in range(b - a):
            i = a + k
            near = np.nonzero(sims[k, :i] >= 0.949)[0]
            if not len(near):
                continue
            blob = serialize_float32(vectors[i].tolist())
            cands = sorted(
                (
                    storage.conn.execute(
                        "SELECT vec_distance_cosine(?, ?)", (serialize_float32(vectors[j].tolist()), blob)
                    ).fetchone()[0],
                    int(j),
                )
                for j in near
            )
            conflicts = []
            for d, j in cands[:5]:  # the query's ORDER BY distance LIMIT 5
                similarity = max(0.0, 1.0 - float(d))
                if similarity < 0.95:
                    continue
                divergence = 1.0 - SequenceMatcher(None, contents[i].lower(), contents[j].lower()).ratio()
                if divergence < 0.20:
                    continue
                conflicts.append(
                    {
                        "existing_hash": hashes[j],
                        "existing_content": contents[j],
                        "similarity": round(similarity, 4),
                        "divergence": round(divergence, 4),
                    }
                )
            if conflicts:
                found += len(conflicts)
                await storage._record_conflicts(hashes[i], conflicts)
    return found


async def bulk_load_lite(items, threads=1, chunk=2000, log=print):
    """items: the benchmark's dicts ({"content", "type", ...}), stored as Lite.write's memory_store arguments."""
    import time

    logging.getLogger("mcp_memory_service").setLevel(logging.ERROR)  # else an 'Invalid memory_type' line per item
    from mcp_memory_service.config import EMBEDDING_MODEL_NAME, SQLITE_VEC_PATH, STORAGE_BACKEND
    from mcp_memory_service.server.handlers.memory import handle_store_memory
    from mcp_memory_service.services.memory_service import MemoryService
    from mcp_memory_service.storage.sqlite_vec import SqliteVecMemoryStorage

    assert STORAGE_BACKEND == "sqlite_vec" and SQLITE_VEC_PATH
    storage = SqliteVecMemoryStorage(SQLITE_VEC_PATH, embedding_model=EMBEDDING_MODEL_NAME)  # as server_impl does
    await storage.initialize()
    assert storage.conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0, "expects a new database"
    deferred = _Deferred(storage)

    async def _ready():
        return storage

    server = SimpleNamespace(
        storage=storage, memory_service=MemoryService(deferred), _ensure_storage_initialized=_ready
    )
    for item in items:  # the tool handler itself: hash, tags, type coercion, metadata, conversation_id
        arguments = {"content": item["content"], "metadata": {"type": item["type"]}, "conversation_id": "bench"}
        await handle_store_memory(server, arguments)
    memories = deferred.queued
    contents = [m.content for m in memories]
    started = time.perf_counter()
    vectors = embed_all(storage.embedding_model, contents, threads=threads)
    log(f"lite bulk: embedded {len(contents)} in {time.perf_counter() - started:.0f}s")
    model = storage.embedding_model
    try:
        for start in range(0, len(memories), chunk):
            part = memories[start : start + chunk]
            storage.embedding_model = _Precomputed(vectors[start : start + chunk], contents[start : start + chunk])
            results = await storage.store_batch(part, store="default", recreate=False)
            bad = [r for r in results if not r[0]]
            if bad:  # memory_store would have answered isError (an exact duplicate…): so would the bench
                raise RuntimeError(f"lite bulk load: {len(bad)} not stored, e.g. {bad[0][1]}")
    finally:
        storage.embedding_model = model
    started = time.perf_counter()
    conflicts = await _replay_conflicts(storage, vectors, [m.content_hash for m in memories], contents)
    log(f"lite bulk: {conflicts} conflicts replayed in {time.perf_counter() - started:.0f}s")
    checked = await _check_sample(storage, memories, vectors)
    await storage.close()
    return {"stored": len(memories), "conflicts": conflicts, "vectors_checked": checked}


async def _check_sample(storage, memories, vectors, sample=20):
    """The batched embedding must equal what ``memory_store`` computes for one text (the package's own path)."""
    rng = random.Random(0)
    picked = rng.sample(range(len(memories)), min(sample, len(memories)))
    for i in picked:
        own = np.asarray(await asyncio.to_thread(storage.embedding_model.encode, [memories[i].content]))[0]
        if not np.allclose(own, vectors[i], rtol=0, atol=1e-6):
            raise RuntimeError(f"lite bulk load: memory {i}'s vector differs from the package's own embedding")
    return len(picked)


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as lines:
        loaded = [json.loads(line) for line in lines]
    print(json.dumps(asyncio.run(bulk_load_lite(loaded, log=lambda m: print(m, file=sys.stderr)))))
