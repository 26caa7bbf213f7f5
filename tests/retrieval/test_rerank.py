"""The optional subprocess reranker (upstream rerank/command/command_test, rerank_config_test,
search_rerank_test): the contract, every failure mode, fusion, and its wiring into Brain.recall.

Rerankers are real Python scripts written into tmp_path and run as ``sys.executable script.py``.
"""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cerebro import rerank
from cerebro.errors import InvalidInput
from tests.postgres import connect_brain

PY = sys.executable

GOOD = """
    import json, sys
    data = json.load(sys.stdin)
    docs = data["documents"]
    if len(sys.argv) > 1:
        with open(sys.argv[1], "a") as out:
            out.write(json.dumps({"query": data["query"], "documents": docs, "argv": sys.argv[1:]}) + "\\n")
    # Ascending scores: the last document scores highest, so "reorder" reverses the list.
    print(json.dumps({"scores": list(range(len(docs)))}))
"""

SLOW = """
    import sys, time
    sys.stdin.read()
    time.sleep(30)
    print('{"scores": []}')
"""

CRASH = """
    import sys
    sys.stdin.read()
    print('{"scores": [1]}')
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
"""

LIAR = """
    import json, sys
    mode = sys.argv[1]
    n = len(json.load(sys.stdin)["documents"])
    out = {
        "wrong_length": json.dumps({"scores": [1.0] * (n + 1)}),
        "too_short": json.dumps({"scores": [1.0] * (n - 1)}),
        "nan": '{"scores": [' + ", ".join(["NaN"] + ["1"] * (n - 1)) + "]}",
        "infinity": '{"scores": [' + ", ".join(["1"] * (n - 1) + ["Infinity"]) + "]}",
        "minus_infinity": '{"scores": [' + ", ".join(["-Infinity"] * n) + "]}",
        "strings": json.dumps({"scores": [str(i) for i in range(n)]}),
        "bools": json.dumps({"scores": [True] * n}),
        "nulls": json.dumps({"scores": [None] * n}),
        "nested": json.dumps({"scores": [[1]] * n}),
        "no_scores_key": json.dumps({"score": [1.0] * n}),
        "scores_not_list": json.dumps({"scores": 3}),
        "scores_object": json.dumps({"scores": {"0": 1}}),
        "top_level_list": json.dumps([1.0] * n),
        "null": "null",
        "not_json": "definitely not json",
        "truncated": '{"scores": [1, 2',
        "empty": "",
        "huge": json.dumps({"scores": [1.0] * n, "padding": "x" * 100_000}),
        "past_float": '{"scores": [' + ", ".join(["1" + "0" * 400] * n) + "]}",
        "deep": "[" * 200_000 + "]" * 200_000,
    }[mode]
    sys.stdout.write(out)
"""

IGNORES_STDIN = """
    import sys
    print('{"scores": [0.5, 0.25]}')
"""

NOISY = """
    import json, sys
    n = len(json.load(sys.stdin)["documents"])
    print("lots of diagnostics " * 1000, file=sys.stderr)
    print(json.dumps({"scores": [1] * n}))
"""


def script(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    return path


# ----------------------------------------------------------------------------- the subprocess contract


def test_good_reranker_scores(tmp_path):
    good = script(tmp_path, "good", GOOD)
    record = tmp_path / "record.jsonl"
    scores = rerank.score(f"{PY} {good} {record}", "the query", ["d0", "d1", "d2"])
    assert scores == [0.0, 1.0, 2.0]
    assert all(isinstance(s, float) for s in scores)
    (call,) = [json.loads(line) for line in record.read_text().splitlines()]
    assert call == {"query": "the query", "documents": ["d0", "d1", "d2"], "argv": [str(record)]}


def test_unicode_and_large_payload_round_trip(tmp_path):
    good = script(tmp_path, "good", GOOD)
    record = tmp_path / "record.jsonl"
    documents = ['日本語 🚀 "quoted" \\ back', "x" * 300_000, ""]  # stdin payload larger than a pipe buffer
    assert rerank.score(f"{PY} {good} {record}", "café", documents) == [0.0, 1.0, 2.0]
    assert json.loads(record.read_text())["documents"] == documents


def test_command_is_split_on_whitespace_never_a_shell(tmp_path):
    good = script(tmp_path, "good", GOOD)
    record = tmp_path / "record.jsonl"
    pwned = tmp_path / "pwned"
    command = f"  {PY}\t{good}   {record} ; touch {pwned} $(id) |  cat  "
    assert rerank.score(command, "q", ["a"]) == [0.0]
    assert not pwned.exists()
    argv = json.loads(record.read_text())["argv"]
    assert argv == [str(record), ";", "touch", str(pwned), "$(id)", "|", "cat"]


def test_slow_reranker_times_out(tmp_path):
    slow = script(tmp_path, "slow", SLOW)
    started = time.monotonic()
    with pytest.raises(rerank.RerankError, match=r"timed out after 1s"):
        rerank.score(f"{PY} {slow}", "q", ["a", "b"], timeout=1)
    assert time.monotonic() - started < 10  # the hung child was killed, not waited for


def test_default_limits():
    assert rerank.TIMEOUT_SECONDS == 30.0
    assert rerank.MAX_OUTPUT_BYTES == 4 * 1024 * 1024
    assert rerank.OVER_RETRIEVE == 40


@pytest.mark.parametrize("status", ["1", "2", "255"])
def test_crashing_reranker(tmp_path, status):
    crash = script(tmp_path, "crash", CRASH)
    with pytest.raises(rerank.RerankError, match=f"exited with status {status}"):
        rerank.score(f"{PY} {crash} {status}", "q", ["a"])  # valid JSON on stdout does not rescue it


LIES = [
    ("wrong_length", r"3 scores for 2 documents"),
    ("too_short", r"1 scores for 2 documents"),
    ("nan", r"non-finite or non-numeric score nan"),
    ("infinity", r"non-finite or non-numeric score inf"),
    ("minus_infinity", r"non-finite or non-numeric score -inf"),
    ("strings", r"non-finite or non-numeric score '0'"),
    ("bools", r"non-finite or non-numeric score True"),
    ("nulls", r"non-finite or non-numeric score None"),
    ("nested", r"non-finite or non-numeric score \[1\]"),
    ("no_scores_key", r'no "scores" list'),
    ("scores_not_list", r'no "scores" list'),
    ("scores_object", r'no "scores" list'),
    ("top_level_list", r'no "scores" list'),
    ("null", r'no "scores" list'),
    ("not_json", r"malformed JSON"),
    ("truncated", r"malformed JSON"),
    ("empty", r"malformed JSON"),
    # Past float's range: its repr cut short in the message. Nested deeper than the decoder recurses (400 KB).
    ("past_float", r"non-finite or non-numeric score 1" + "0" * 199 + "…$"),
    ("deep", r"malformed JSON"),
]


@pytest.mark.parametrize(("mode", "message"), LIES, ids=[m for m, _ in LIES])
def test_lying_reranker(tmp_path, mode, message):
    liar = script(tmp_path, "liar", LIAR)
    with pytest.raises(rerank.RerankError, match=message):
        rerank.score(f"{PY} {liar} {mode}", "q", ["a", "b"])


def test_output_over_the_cap(tmp_path):
    liar = script(tmp_path, "liar", LIAR)
    with pytest.raises(rerank.RerankError, match=r"output exceeded 1000 bytes"):
        rerank.score(f"{PY} {liar} huge", "q", ["a", "b"], max_output=1000)
    # The same answer under the default 4 MiB cap is fine.
    assert rerank.score(f"{PY} {liar} huge", "q", ["a", "b"]) == [1.0, 1.0]


def test_output_exactly_at_the_cap_is_accepted(tmp_path):
    good = script(tmp_path, "good", GOOD)
    answer = json.dumps({"scores": [0, 1]}) + "\n"
    assert rerank.score(f"{PY} {good}", "q", ["a", "b"], max_output=len(answer)) == [0.0, 1.0]
    with pytest.raises(rerank.RerankError, match="output exceeded"):
        rerank.score(f"{PY} {good}", "q", ["a", "b"], max_output=len(answer) - 1)


def test_missing_binary():
    with pytest.raises(rerank.RerankError, match=r"cannot start: No such file or directory"):
        rerank.score("/nonexistent/cerebro-reranker --flag", "q", ["a"])


def test_a_command_holding_a_nul_character_does_not_start():
    with pytest.raises(rerank.RerankError, match=r"cannot start: embedded null byte"):
        rerank.score("python3\x00 x", "q", ["a"])


def test_not_executable(tmp_path):
    plain = tmp_path / "not-executable"
    plain.write_text("#!/bin/sh\necho '{}'\n")
    with pytest.raises(rerank.RerankError, match=r"cannot start"):
        rerank.score(str(plain), "q", ["a"])


@pytest.mark.parametrize("command", ["", "   ", "\t\n"])
def test_empty_command(command):
    with pytest.raises(rerank.RerankError, match="empty reranker command"):
        rerank.score(command, "q", ["a"])
    assert rerank.command_name(command) == ""


def test_reranker_that_ignores_stdin(tmp_path):
    ignorer = script(tmp_path, "ignorer", IGNORES_STDIN)
    assert rerank.score(f"{PY} {ignorer}", "q", ["a" * 500_000, "b"]) == [0.5, 0.25]


def test_stderr_is_ignored(tmp_path):
    noisy = script(tmp_path, "noisy", NOISY)
    assert rerank.score(f"{PY} {noisy}", "q", ["a", "b"]) == [1.0, 1.0]


def test_integer_and_negative_scores_are_fine(tmp_path):
    body = 'import sys, json; sys.stdin.read(); print(json.dumps({"scores": [-3, 2.5e300, 0]}))'
    path = tmp_path / "ints.py"
    path.write_text(body)
    assert rerank.score(f"{PY} {path}", "q", ["a", "b", "c"]) == [-3.0, 2.5e300, 0.0]


def test_command_name():
    assert rerank.command_name("/usr/bin/python3 rerank.py --model x") == "/usr/bin/python3"


# ----------------------------------------------------------------------------- fusion (by hand)


def test_reorder_is_a_stable_sort_by_reranker_score():
    assert rerank.reorder(["a", "b", "c", "d"], [0.1, 0.4, 0.3, 0.2], "reorder") == ["b", "c", "d", "a"]
    assert rerank.reorder(["a", "b", "c"], [0, 1, 2], "reorder") == ["c", "b", "a"]
    assert rerank.reorder(["a", "b", "c"], [1, 1, 1], "reorder") == ["a", "b", "c"]  # ties: composite order
    assert rerank.reorder(["a", "b", "c"], [0, 5, 5], "reorder") == ["b", "c", "a"]


def test_rrf_fusion_by_hand():
    # composite ranks a1 b2 c3 d4; reranker ranks b1 c2 d3 a4
    # a: 1/61 + 1/64 = 0.016393 + 0.015625 = 0.032018
    # b: 1/62 + 1/61 = 0.016129 + 0.016393 = 0.032522
    # c: 1/63 + 1/62 = 0.015873 + 0.016129 = 0.032002
    # d: 1/64 + 1/63 = 0.015625 + 0.015873 = 0.031498
    assert rerank.reorder(["a", "b", "c", "d"], [0.1, 0.4, 0.3, 0.2], "rrf") == ["b", "a", "c", "d"]


def test_rrf_fusion_of_a_reversal_by_hand():
    # composite a1 b2 c3; reranker (reversed) c1 b2 a3
    # a: 1/61 + 1/63 = 0.0322664; b: 1/62 + 1/62 = 0.0322581; c: 1/63 + 1/61 = 0.0322664 (ties a)
    # a and c tie: composite order keeps a first.
    assert rerank.reorder(["a", "b", "c"], [0, 1, 2], "rrf") == ["a", "c", "b"]
    # Two items reversed: a 1/61+1/62, b 1/62+1/61 — a tie, composite order wins.
    assert rerank.reorder(["a", "b"], [0, 1], "rrf") == ["a", "b"]


@pytest.mark.parametrize("fusion", ["rrf", "", "RRF", "Reorder", "bogus"])
def test_anything_but_reorder_is_rrf(fusion):
    assert rerank.reorder(["a", "b", "c"], [0, 1, 2], fusion) == ["a", "c", "b"]


def test_reorder_empty():
    assert rerank.reorder([], [], "reorder") == []
    assert rerank.reorder([], [], "rrf") == []


# ----------------------------------------------------------------------------- through Brain.recall

QUERY = "walrus tusk"
TEXTS = ["walrus tusk", "walrus tusk ivory", "walrus tusk ivory arctic"]  # cosine 1.0, 0.816, 0.707


@pytest.fixture
def ranked(fake_brain):
    """Three memories, plus their composite (rerank-off) order."""
    ids = [fake_brain.add(text) for text in TEXTS]
    baseline = fake_brain.recall(QUERY).ids
    assert sorted(baseline) == sorted(ids)
    assert baseline == ids  # composite order follows the similarity here
    return fake_brain, baseline


def enable(brain, command: str | None = None, fusion: str | None = None) -> None:
    brain.config_set("rerank_enabled", "true")
    if command is not None:
        brain.config_set("rerank_command", command)
    if fusion is not None:
        brain.config_set("rerank_fusion", fusion)


def raw_config(path: Path, key: str, value: str) -> None:
    conn = connect_brain(path)
    try:
        conn.execute(
            "INSERT INTO schema_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (f"config.{key}", value),
        )
        conn.commit()
    finally:
        conn.close()


def calls(record: Path) -> list[dict]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def test_recall_rerank_reorder(ranked, tmp_path):
    brain, baseline = ranked
    record = tmp_path / "record.jsonl"
    enable(brain, f"{PY} {script(tmp_path, 'good', GOOD)} {record}", "reorder")
    result = brain.recall(QUERY)
    assert result.ids == baseline[::-1]
    assert result.notices == []
    (call,) = calls(record)
    assert call["query"] == QUERY
    assert call["documents"] == TEXTS  # the candidates, in composite order


def test_recall_rerank_rrf_is_the_default(ranked, tmp_path):
    brain, (a, b, c) = ranked
    enable(brain, f"{PY} {script(tmp_path, 'good', GOOD)}")
    # reversal fused by RRF: a and c tie at 1/61+1/63, b gets 2/62 — see test_rrf_fusion_of_a_reversal_by_hand
    assert brain.recall(QUERY).ids == [a, c, b]
    brain.config_set("rerank_fusion", "rrf")
    assert brain.recall(QUERY).ids == [a, c, b]


def test_recall_unknown_stored_fusion_resolves_to_rrf(ranked, tmp_path, fake_brain_path):
    brain, (a, b, c) = ranked
    enable(brain, f"{PY} {script(tmp_path, 'good', GOOD)}")
    with pytest.raises(InvalidInput):
        brain.config_set("rerank_fusion", "bogus")
    raw_config(fake_brain_path, "rerank_fusion", "bogus")  # e.g. written by another version
    assert brain.recall(QUERY).ids == [a, c, b]


def test_recall_rerank_cuts_to_limit_after_reranking(ranked, tmp_path):
    brain, baseline = ranked
    enable(brain, f"{PY} {script(tmp_path, 'good', GOOD)}", "reorder")
    assert brain.recall(QUERY, limit=1).ids == [baseline[-1]]  # the reranker's favourite, not composite #1


@pytest.mark.parametrize(
    ("body", "args", "reason"),
    [
        (CRASH, "1", "exited with status 1"),
        (LIAR, "nan", "non-finite or non-numeric score nan"),
        (LIAR, "wrong_length", "4 scores for 3 documents"),
        (LIAR, "not_json", "malformed JSON on stdout"),
    ],
    ids=["crash", "nan", "wrong-length", "not-json"],
)
def test_recall_rerank_failure_keeps_composite_order(ranked, tmp_path, body, args, reason):
    brain, baseline = ranked
    path = script(tmp_path, "bad", body)
    enable(brain, f"{PY} {path} {args}", "reorder")
    result = brain.recall(QUERY)
    assert result.ids == baseline
    assert result.notices == [f'reranker "command:{PY}" failed ({reason}); using composite order']


def test_recall_rerank_missing_binary(ranked):
    brain, baseline = ranked
    enable(brain, "/nonexistent/cerebro-rr --model mini")
    result = brain.recall(QUERY)
    assert result.ids == baseline
    assert result.notices == [
        (
            'reranker "command:/nonexistent/cerebro-rr" failed (cannot start: No such file or directory); '
            "using composite order"
        )
    ]


def test_recall_rerank_failure_via_cli_warns(cli, ranked, tmp_path):
    brain, baseline = ranked
    enable(brain, f"{PY} {script(tmp_path, 'crash', CRASH)}")
    result = cli("recall", QUERY, "--format", "json")
    assert result.exit_code == 0, result
    assert [r["id"] for r in result.json()["results"]] == baseline
    assert result.stderr.strip() == (
        f'cerebro: warning: reranker "command:{PY}" failed (exited with status 1); using composite order'
    )


def test_recall_rerank_enabled_without_command(ranked, monkeypatch):
    brain, baseline = ranked
    monkeypatch.delenv(rerank.ENV_COMMAND, raising=False)
    enable(brain)
    result = brain.recall(QUERY)
    assert result.ids == baseline
    assert result.notices == ["rerank enabled but no reranker command configured; using composite order"]
    brain.config_set("rerank_command", "   ")  # blank counts as none
    assert brain.recall(QUERY).notices == result.notices


@pytest.mark.parametrize("value", ["True", "TRUE", "1", "yes", "on", " true", "true "])
def test_rerank_enabled_accepts_only_the_literal_true(fake_brain, value):
    with pytest.raises(InvalidInput, match="rerank_enabled"):
        fake_brain.config_set("rerank_enabled", value)


@pytest.mark.parametrize("value", ["True", "TRUE", "1", "yes", " true"])
def test_stored_non_literal_true_does_not_enable(ranked, tmp_path, fake_brain_path, value):
    brain, baseline = ranked
    record = tmp_path / "record.jsonl"
    brain.config_set("rerank_command", f"{PY} {script(tmp_path, 'good', GOOD)} {record}")
    brain.config_set("rerank_fusion", "reorder")
    raw_config(fake_brain_path, "rerank_enabled", value)  # bypassing the validator
    result = brain.recall(QUERY)
    assert result.ids == baseline
    assert result.notices == []
    assert calls(record) == []


@pytest.mark.parametrize("stored", [None, "false"])
def test_env_command_alone_never_enables(ranked, tmp_path, monkeypatch, stored):
    brain, baseline = ranked
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv(rerank.ENV_COMMAND, f"{PY} {script(tmp_path, 'good', GOOD)} {record}")
    monkeypatch.setenv("CEREBRO_RERANK_ENABLED", "true")  # no such switch exists
    if stored is not None:
        brain.config_set("rerank_enabled", stored)
    result = brain.recall(QUERY)
    assert result.ids == baseline
    assert result.notices == []
    assert calls(record) == []


def test_env_command_used_when_config_command_empty(ranked, tmp_path, monkeypatch):
    brain, baseline = ranked
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv(rerank.ENV_COMMAND, f"{PY} {script(tmp_path, 'good', GOOD)} {record}")
    enable(brain, fusion="reorder")
    assert brain.recall(QUERY).ids == baseline[::-1]
    assert len(calls(record)) == 1
    brain.config_set("rerank_command", "")  # explicitly empty: still falls back to the environment
    assert brain.recall(QUERY).ids == baseline[::-1]
    assert len(calls(record)) == 2


def test_config_command_wins_over_env(ranked, tmp_path, monkeypatch):
    brain, baseline = ranked
    good = script(tmp_path, "good", GOOD)
    from_config, from_env = tmp_path / "config.jsonl", tmp_path / "env.jsonl"
    monkeypatch.setenv(rerank.ENV_COMMAND, f"{PY} {good} {from_env}")
    enable(brain, f"{PY} {good} {from_config}", "reorder")
    assert brain.recall(QUERY).ids == baseline[::-1]
    assert len(calls(from_config)) == 1
    assert calls(from_env) == []


@pytest.mark.parametrize(("limit", "expected"), [(5, 40), (1, 40), (45, 45)])
def test_reranker_receives_max_limit_40_candidates(fake_brain, tmp_path, limit, expected):
    for i in range(50):
        fake_brain.add(f"walrus tusk note{i}")
    record = tmp_path / "record.jsonl"
    enable(fake_brain, f"{PY} {script(tmp_path, 'good', GOOD)} {record}", "reorder")
    result = fake_brain.recall(QUERY, limit=limit)
    (call,) = calls(record)
    assert len(call["documents"]) == expected
    assert len(result) == limit
    assert result.notices == []


def test_reranker_not_called_when_nothing_is_found(fake_brain, tmp_path):
    fake_brain.add("zulu yankee xray")
    record = tmp_path / "record.jsonl"
    enable(fake_brain, f"{PY} {script(tmp_path, 'good', GOOD)} {record}")
    result = fake_brain.recall("walrus tusk")
    assert result.ids == []
    assert result.notices == []
    assert calls(record) == []


def test_keyword_fallback_path_is_never_reranked(fake_brain, tmp_path):
    """Upstream §3: the keyword-only fallback has no expansion, rerank or global lane."""
    from tests.fakes import FakeEmbedder

    ids = [fake_brain.add(text) for text in TEXTS]
    record = tmp_path / "record.jsonl"
    enable(fake_brain, f"{PY} {script(tmp_path, 'good', GOOD)} {record}", "reorder")
    FakeEmbedder.broken = True
    result = fake_brain.recall(QUERY)
    assert result.mode == "keyword-fallback"
    assert sorted(result.ids) == sorted(ids)
    assert calls(record) == []
