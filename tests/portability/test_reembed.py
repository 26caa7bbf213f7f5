"""reembed: local → a loopback Ollama at 768 dims (interrupted and resumed) → back to local."""

from __future__ import annotations

import hashlib
import http.server
import json
import math
import threading
from collections import Counter
from typing import ClassVar

import pytest

from cerebro import Brain
from cerebro.brain import reembed as reembed_module
from cerebro.embed import registry
from cerebro.embed.base import EmbeddingError
from cerebro.embed.ollama import OllamaEmbedder


class _Ollama(http.server.BaseHTTPRequestHandler):
    prompts: ClassVar[Counter] = Counter()  # class-wide: the handler is instantiated per request
    fail_after: ClassVar[int | None] = None
    served = 0

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        cls = type(self)
        if cls.fail_after is not None and cls.served >= cls.fail_after:
            self.send_response(500)
            self.end_headers()
            return
        cls.served += 1
        cls.prompts[body["prompt"]] += 1
        seed = hashlib.sha256(body["prompt"].encode()).digest()
        vector = [((seed[i % 32] + i) % 17) - 8.0 for i in range(768)]
        norm = math.sqrt(sum(x * x for x in vector))
        payload = json.dumps({"embedding": [x / norm for x in vector]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def ollama(monkeypatch: pytest.MonkeyPatch):
    _Ollama.prompts = Counter()
    _Ollama.fail_after = None
    _Ollama.served = 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ollama)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("CEREBRO_OLLAMA_URL", f"http://127.0.0.1:{server.server_port}")
    fast = registry.ProviderSpec(
        "ollama", "nomic-embed-text", 768, lambda m, d: OllamaEmbedder(m, d, attempts=1, backoff=0.01)
    )
    monkeypatch.setitem(registry.PROVIDERS, "ollama", fast)
    yield _Ollama
    server.shutdown()
    server.server_close()


def test_reembed_interrupted_resumed_and_back(brain_path, ollama, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reembed_module, "BATCH", 2)
    with Brain.open(brain_path) as brain:
        ids = [brain.add(f"memory {i}: kettle {i} descaling note") for i in range(7)]
        brain.supersede(ids[0], "memory 0 replaced: kettle zero")
    ollama.fail_after = 5  # the model's check and two batches land, then the "server" dies mid-run
    with Brain.open(brain_path) as brain, pytest.raises(EmbeddingError, match="ollama API returned 500"):
        brain.reembed(provider="ollama")
    with Brain.open(brain_path) as brain:
        stats = brain.stats()
        assert stats.embedding_model == "all-MiniLM-L6-v2-onnx-int8-dq7"  # still on the old model meanwhile
        assert brain.recall("kettle descaling").results  # recall keeps working
    before = Counter(ollama.prompts)
    ollama.fail_after = None
    with Brain.open(brain_path) as brain:
        report = brain.reembed()  # resumes the recorded switch
        stats = brain.stats()
        assert (stats.embedding_model, stats.embedding_dimensions) == ("nomic-embed-text", 768)
        assert stats.embedded_nodes == stats.active_nodes == 7 and stats.pending_embeddings == 0
        assert brain.recall("kettle descaling").results
    assert report["embedded_now"] == 3  # 4 before the failure, 3 after: none twice
    after_resume = ollama.prompts - before
    assert all(count == 1 for count in after_resume.values())
    assert not (set(after_resume) & set(before))
    with Brain.open(brain_path) as brain:
        brain.reembed(provider="local")
        stats = brain.stats()
        assert (stats.embedding_model, stats.embedding_dimensions, stats.embedded_nodes) == (
            "all-MiniLM-L6-v2-onnx-int8-dq7",
            384,
            7,
        )
        assert brain.recall("kettle descaling").results


def test_another_switch_abandons_a_half_done_one(brain_path, ollama, monkeypatch: pytest.MonkeyPatch) -> None:
    """A half-done switch refused every other target — and one that could never finish (a model whose dimensions
    were not what was recorded, a server gone) left the brain stuck with no way out but editing it by hand."""
    monkeypatch.setattr(reembed_module, "BATCH", 2)
    with Brain.open(brain_path) as brain:
        for i in range(3):
            brain.add(f"note {i}")
    ollama.fail_after = 3  # the model's check and a batch of two pass, the next batch fails: half done
    with Brain.open(brain_path) as brain, pytest.raises(EmbeddingError, match="ollama API returned 500"):
        brain.reembed(provider="ollama")
    warnings: list[str] = []
    with Brain.open(brain_path) as brain:
        brain.on_warning = warnings.append
        report = brain.reembed(provider="local")
        stats = brain.stats()
    assert warnings == ["the half-done switch to nomic-embed-text was abandoned for all-MiniLM-L6-v2-onnx-int8-dq7"]
    assert (stats.embedding_dimensions, stats.embedded_nodes) == (384, 3) and report["embedded_now"] == 3


def test_a_model_that_answers_with_other_dimensions_changes_nothing(brain_path, ollama) -> None:
    """Checked with one text before the switch is recorded: an Ollama model other than nomic-embed-text defaults to
    768 dimensions, and a 1024-dimension one was recorded as a switch that could never finish."""
    from cerebro.errors import InvalidInput

    with Brain.open(brain_path) as brain:
        brain.add("a note")
        before = brain.stats()
    with Brain.open(brain_path) as brain, pytest.raises(InvalidInput, match="returned 768 dimensions, not 1024"):
        brain.reembed(provider="ollama", dims=1024)
    ollama.fail_after = 0  # the server down: nothing recorded either
    with Brain.open(brain_path) as brain, pytest.raises(EmbeddingError):
        brain.reembed(provider="ollama")
    with Brain.open(brain_path) as brain:
        assert brain.stats() == before
        assert brain.handle.store.reads.meta(brain.handle.raw, "reembed.provider") is None


def test_the_same_brain_object_recalls_on_the_new_model_right_after_the_switch(
    brain_path, ollama, pinned_clock
) -> None:
    """What one process cached from the old vectors (the centering mean, the warm index) goes with them: the
    Brain that switched ranks exactly as a freshly opened one (a stale 384-d mean would rank uncentered)."""
    from cerebro.recall import CENTERING_MIN

    with Brain.open(brain_path) as brain:
        for i in range(CENTERING_MIN + 5):
            brain.add(f"memory {i}: kettle {i} descaling note, batch {i % 7}")
        assert brain.recall("kettle descaling").results  # caches the brain's 384-dimension mean
        brain.reembed(provider="ollama")
        same = [(r.node.id, r.score) for r in brain.recall("kettle descaling batch 3", limit=10).results]
    with Brain.open(brain_path) as fresh:
        expected = [(r.node.id, r.score) for r in fresh.recall("kettle descaling batch 3", limit=10).results]
    assert len(same) == 10 and same == expected


def test_reembed_on_the_model_in_use_does_nothing_unless_a_vector_is_missing_or_forced(brain_path, ollama) -> None:
    with Brain.open(brain_path) as brain:
        ids = [brain.add(f"memory {i}: kettle descaling note") for i in range(3)]
        brain.reembed(provider="ollama")
    served = ollama.served
    with Brain.open(brain_path) as brain:
        report = brain.reembed()  # the brain's own model, every vector from it: nothing to do
        assert report["skipped"] is True and (report["embedded_now"], report["active"]) == (0, 3)
        assert ollama.served == served
        forced = brain.reembed(force=True)
        assert forced["skipped"] is False and forced["embedded_now"] == 3
        assert ollama.served == served + 1 + 3  # the model's check, then the three memories
        brain.handle.write(lambda s: brain.handle.store.vectors.delete(s, ids[0]))  # one vector lost
        repaired = brain.reembed()
        assert repaired["skipped"] is False and repaired["embedded_now"] == 3
        assert brain.stats().pending_embeddings == 0


def test_reembed_cli_says_when_there_was_nothing_to_do(cli, brain_path) -> None:
    with Brain.open(brain_path) as brain:
        brain.add("a memory")
    done = cli("reembed")
    assert done.exit_code == 0 and done.stdout.startswith("Nothing to do: the brain is on all-MiniLM-L6-v2-onnx-int8")
    assert cli("reembed", "--format", "json").json()["skipped"] is True
    assert cli("reembed", "--force", "--format", "json").json()["embedded_now"] == 1


def _served_vector(prompt: str) -> list[float]:
    """The vector the loopback Ollama above returns for ``prompt``."""
    seed = hashlib.sha256(prompt.encode()).digest()
    vector = [((seed[i % 32] + i) % 17) - 8.0 for i in range(768)]
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


@pytest.mark.file_only  # sqlite-vec's side table, written behind cerebro's back
def test_a_resumed_switch_embeds_what_changed_meanwhile_and_keeps_no_vector_of_what_went(
    brain_path, ollama, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between an interrupted reembed and its resumption, agents keep writing: a memory already embedded for the
    new model is updated, another is deleted, a new one is added. The switch must carry the updated text's vector
    (not the one made from the old text), no vector for the deleted memory, and one for the new (issue 17)."""
    from cerebro.db.engine import connect_raw
    from cerebro.store import vec

    monkeypatch.setattr(reembed_module, "BATCH", 2)
    with Brain.open(brain_path) as brain:
        ids = [brain.add(f"memory {i}: kettle {i} descaling note") for i in range(6)]
    ollama.fail_after = 4  # ids[0..3] get their new vectors, then the run dies
    with Brain.open(brain_path) as brain, pytest.raises(EmbeddingError):
        brain.reembed(provider="ollama")
    with Brain.open(brain_path) as brain:
        brain.update(ids[0], content="memory 0 rewritten: the kettle was replaced")
        brain.forget(subject="kettle 1 descaling", apply=True, hard=True)
        added = brain.add("memory 6: a new kettle arrived")
    from cerebro.db.engine import connect_raw as raw_connection

    other_tool = raw_connection(brain_path)  # deleted by another tool (Go cerebro, a hand edit): no cerebro hook
    other_tool.execute("BEGIN IMMEDIATE")
    other_tool.execute("DELETE FROM vec_nodes WHERE node_id = ?", (ids[3],))
    other_tool.execute("DELETE FROM nodes WHERE id = ?", (ids[3],))
    other_tool.execute("COMMIT")
    other_tool.close()
    ollama.fail_after = None
    with Brain.open(brain_path) as brain:
        brain.reembed()
        assert brain.stats().embedded_nodes == brain.stats().active_nodes == 5
    conn = connect_raw(brain_path, wal=False)
    try:
        stored = vec.vectors_for(conn, [ids[0], ids[1], added, ids[2]])
        rows = conn.execute("SELECT COUNT(*) FROM vec_nodes").fetchone()[0]
    finally:
        conn.close()
    assert stored[ids[0]] == pytest.approx(_served_vector("memory 0 rewritten: the kettle was replaced"))
    assert stored[added] == pytest.approx(_served_vector("memory 6: a new kettle arrived"))
    assert stored[ids[2]] == pytest.approx(_served_vector("memory 2: kettle 2 descaling note"))
    assert ids[1] not in stored and rows == 5  # no orphan of either deleted memory


def test_a_memory_written_while_the_switch_is_made_gets_its_vector_first(
    brain_path, ollama, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent adds a memory after the last batch was embedded and before the switch: the switch waits for its
    vector (made with the new model) instead of leaving it with none (issue 17)."""
    with Brain.open(brain_path) as brain:
        brain.add("memory 0: the kettle")
    original = reembed_module._fill_next
    late: list[str] = []

    def fill_then_someone_writes(*args, **kwargs):
        done = original(*args, **kwargs)
        if not late:
            with Brain.open(brain_path) as other:
                late.append(other.add("memory 1: written during the switch"))
        return done

    monkeypatch.setattr(reembed_module, "_fill_next", fill_then_someone_writes)
    with Brain.open(brain_path) as brain:
        report = brain.reembed(provider="ollama")
        stats = brain.stats()
    assert report["embedded_now"] == 2 and stats.embedded_nodes == stats.active_nodes == 2
    assert ollama.prompts["memory 1: written during the switch"] == 1


@pytest.mark.file_only
def test_a_brain_on_the_float_model_stays_on_it_until_asked_to_move(cli, project) -> None:
    """ADR 0041: new brains get the local provider's integer model; a brain made before keeps its float32 one —
    ``reembed`` with no options (or ``--force``) re-embeds on the brain's own model, never the provider's new
    default — and ``--model`` moves it."""
    from cerebro import paths

    assert cli("init", "--embed-model", "all-MiniLM-L6-v2-onnx-int8").exit_code == 0
    with Brain.open(paths.project_brain_path(project)) as brain:
        brain.add_many([{"content": f"kettle {i} descaling note"} for i in range(3)])
    kept = cli("reembed", "--format", "json").json()
    assert kept["skipped"] is True and kept["model"] == "all-MiniLM-L6-v2-onnx-int8"
    forced = cli("reembed", "--force", "--format", "json").json()
    assert (forced["model"], forced["embedded_now"]) == ("all-MiniLM-L6-v2-onnx-int8", 3)
    moved = cli("reembed", "--model", "all-MiniLM-L6-v2-onnx-int8-dq7", "--format", "json").json()
    assert (moved["model"], moved["embedded_now"]) == ("all-MiniLM-L6-v2-onnx-int8-dq7", 3)
    with Brain.open(paths.project_brain_path(project)) as brain:
        stats = brain.stats()
        assert (stats.embedding_model, stats.embedded_nodes, stats.pending_embeddings) == (
            "all-MiniLM-L6-v2-onnx-int8-dq7",
            3,
            0,
        )
        assert brain.recall("kettle descaling").results


@pytest.mark.file_only
def test_doctors_fix_for_a_provider_serving_other_dimensions_moves_the_brain_to_them(cli, project, ollama) -> None:
    """The server's model gives 768 dimensions, the brain stores 512: doctor's fix names the dimensions served (a
    bare ``reembed`` now stays on the brain's own settings, which is what failed), and running it repairs the brain."""
    import json
    import shlex

    assert cli("init", "--skip-integration", "--embed-provider", "ollama", "--embed-dims", "512").exit_code == 0
    doctor = cli("doctor", "--format", "json", "--no-latency")
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "embedder")
    assert check["status"] == "fail" and "768-dimensional" in check["detail"]
    fix = shlex.split(check["fix"])
    assert fix[:2] == ["cerebro", "reembed"] and fix[fix.index("--dims") + 1] == "768"
    assert cli(*fix[1:]).exit_code == 0
    with Brain.open(_brain(project)) as brain:
        assert brain.stats().embedding_dimensions == 768
        brain.add("a kettle descaling note")  # embeds now
        assert brain.stats().pending_embeddings == 0


def _brain(project):
    from cerebro import paths

    return paths.project_brain_path(project)


# A team brain has no cheap counter of other sessions' commits: a switch made elsewhere is seen by the MCP server's
# reload (once a minute) or a reopen — a note in the session's "left" list.
@pytest.mark.file_only
def test_a_brain_held_open_while_another_process_switches_the_model_follows_the_switch(
    brain_path, ollama, pinned_clock
) -> None:
    """Another process's `cerebro reembed` (here: another connection): this Brain kept its old settings, so its next
    `add` wrote a 384-dimension vector into the new 768-dimension table ("Dimension mismatch", the memory lost) and its
    next recall failed on the old centering mean. The MCP server re-read them; a plain Brain did not."""
    from cerebro.recall import CENTERING_MIN

    with Brain.open(brain_path) as held:
        for i in range(CENTERING_MIN + 5):
            held.add(f"memory {i}: kettle {i} descaling note")
        assert held.recall("kettle descaling").results  # caches the 384-dimension mean and embedder
        with Brain.open(brain_path) as other:
            other.reembed(provider="ollama")
        added = held.add("written after the switch: kettle descaling at 60 degrees")
        assert held.stats().embedding_dimensions == 768 and held.stats().pending_embeddings == 0
        assert added in [r.node.id for r in held.recall("kettle descaling at 60 degrees", limit=5).results]
