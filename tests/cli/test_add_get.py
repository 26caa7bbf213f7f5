"""cerebro add / get: what is stored, origin stamping, stdin, prefixes, edges in both directions, --as-of."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime

import pytest

from cerebro import clock

from .helpers import detail, fts_rows, node, ok, raw_rows

NODE_KEYS = {
    "id",
    "type",
    "subtype",
    "content",
    "metadata",
    "importance",
    "decay_rate",
    "access_count",
    "times_reinforced",
    "status",
    "embedding_model",
    "created_at",
    "last_accessed",
    "last_reinforced",
    "updated_at",
    "last_surfaced",
    "provenance_root",
    "origin_actor",
    "origin_channel",
    "origin_session",
    "origin_host",
}
EDGE_KEYS = {
    "id",
    "source_id",
    "target_id",
    "relation",
    "weight",
    "metadata",
    "created_at",
    "valid_at",
    "invalid_at",
}
T0 = datetime(2026, 3, 11, 10, 0, 0, tzinfo=UTC)


def test_add_prints_id_and_stores_defaults(cli, brain_path):
    clock.set_now(T0)
    result = ok(cli("add", "Use uv for the venv"))
    node_id = result.stdout.strip()
    assert result.stdout == node_id + "\n"
    assert len(node_id) == 36 and node_id.count("-") == 4

    n = node(brain_path, node_id)
    assert n.content == "Use uv for the venv"
    assert n.type == "episode"
    assert n.subtype is None
    assert n.importance == 0.5
    assert n.decay_rate == 0.15
    assert n.status == "active"
    assert n.metadata is None
    assert n.provenance_root is False
    assert n.access_count == 0 and n.times_reinforced == 0
    assert n.created_at == T0 and n.last_accessed == T0
    assert (n.updated_at, n.last_reinforced, n.last_surfaced) == (None, None, None)  # nothing has happened to it yet
    # Indexed for keyword recall in the same transaction.
    assert fts_rows(brain_path)[node_id] == ("Use uv for the venv", "")


def test_add_json_shape(cli, brain_path):
    data = ok(cli("add", "json please", "--format", "json")).json()
    assert set(data) == {"id"}
    assert node(brain_path, data["id"]).content == "json please"


def test_add_stores_every_option(cli, brain_path):
    node_id = ok(
        cli(
            "add",
            "Decided on SQLite",
            "--type",
            "concept",
            "--subtype",
            "decision",
            "--importance",
            "0.9",
            "--metadata",
            '{"ticket": "CB-1", "tags": ["db"], "n": 3}',
            "--provenance-root",
            "--origin-actor",
            "alice",
            "--origin-channel",
            "skill",
            "--origin-session",
            "sess-42",
            "--origin-host",
            "box-1",
        )
    ).stdout.strip()
    n = node(brain_path, node_id)
    assert (n.type, n.subtype, n.importance) == ("concept", "decision", 0.9)
    assert n.decay_rate == 0.02
    assert n.metadata == {"ticket": "CB-1", "tags": ["db"], "n": 3}
    assert n.provenance_root is True
    origin = (n.origin.actor, n.origin.channel, n.origin.session, n.origin.host)
    assert origin == ("alice", "skill", "sess-42", "box-1")
    assert fts_rows(brain_path)[node_id] == ("Decided on SQLite", "decision")


@pytest.mark.parametrize(
    ("node_type", "rate"), [("episode", 0.15), ("concept", 0.02), ("procedure", 0.005), ("reflection", 0.05)]
)
def test_add_decay_rate_follows_type(cli, brain_path, node_type, rate):
    node_id = ok(cli("add", "typed", "--type", node_type)).stdout.strip()
    assert node(brain_path, node_id).decay_rate == rate


@pytest.mark.parametrize("importance", ["1", "1.0", "0.25", "0.001", ".5", "25e-2", "+0.75"])
def test_add_importance_bounds_accepted(cli, brain_path, importance):
    node_id = ok(cli("add", "bounds", "--importance", importance)).stdout.strip()
    assert node(brain_path, node_id).importance == float(importance)
    ok(cli("update", node_id, "--importance", importance, "--content", "bounds again"))  # through Cyclopts
    assert node(brain_path, node_id).importance == float(importance)


def test_whole_numbers_take_a_sign(cli, brain_path):
    for text in ("one", "two", "three"):
        ok(cli("add", text))
    listed = json.loads(ok(cli("list", "--limit", "+2", "--format", "json")).stdout)["memories"]
    assert len(listed) == 2


# Upstream's CLI stores --importance 0 as the default 0.5 (ADR 0006, revised): not evicted at the next gc.
@pytest.mark.parametrize("command", [["add", "zero"], ["supersede", "OLD", "zero again"]])
@pytest.mark.parametrize("importance", ["0", "0.0"])
def test_importance_zero_on_insert_is_the_default(cli, brain_path, importance, command):
    old = ok(cli("add", "the old one")).stdout.strip()
    args = [old if a == "OLD" else a for a in command]
    node_id = ok(cli(*args, "--importance", importance)).stdout.strip()
    assert node(brain_path, node_id).importance == 0.5
    ok(cli("update", node_id, "--importance", "0"))
    assert node(brain_path, node_id).importance == 0.0  # an explicit update keeps its value


def test_origin_stamped_from_environment(cli, brain_path, monkeypatch):
    monkeypatch.setenv("CEREBRO_ORIGIN_ACTOR", "claude-code")
    monkeypatch.setenv("CEREBRO_ORIGIN_SESSION", "s-cerebro")
    monkeypatch.setenv("CLAUDE_SESSION_ID", "s-claude")
    n = node(brain_path, ok(cli("add", "stamped")).stdout.strip())
    assert n.origin.actor == "claude-code"
    assert n.origin.session == "s-cerebro"
    assert n.origin.channel == "cli"
    assert n.origin.host == socket.gethostname()


def test_origin_session_falls_back_to_claude_session_id(cli, brain_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_SESSION_ID", "s-claude")
    n = node(brain_path, ok(cli("add", "stamped")).stdout.strip())
    assert n.origin.session == "s-claude"
    assert n.origin.actor is None
    assert n.origin.channel == "cli"


def test_origin_without_environment(cli, brain_path):
    n = node(brain_path, ok(cli("add", "stamped")).stdout.strip())
    assert (n.origin.actor, n.origin.session) == (None, None)
    assert (n.origin.channel, n.origin.host) == ("cli", socket.gethostname())


def test_origin_flags_override_environment(cli, brain_path, monkeypatch):
    monkeypatch.setenv("CEREBRO_ORIGIN_ACTOR", "env-actor")
    monkeypatch.setenv("CEREBRO_ORIGIN_SESSION", "env-session")
    result = ok(cli("add", "x", "--origin-actor", "flag-actor", "--origin-session", "flag-s"))
    n = node(brain_path, result.stdout.strip())
    assert (n.origin.actor, n.origin.session) == ("flag-actor", "flag-s")


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\n\n", ""])
def test_add_dash_reads_stdin_without_the_closing_line_ending(cli, brain_path, ending):
    text = "  from stdin\n\nsecond line ✓ " + ending
    node_id = ok(cli("add", "-", stdin=text)).stdout.strip()
    assert node(brain_path, node_id).content == "  from stdin\n\nsecond line ✓ "  # inner lines and spaces kept


# ---------------------------------------------------------------------------------------------- get


def test_get_by_full_id_md(cli, add, brain_path):
    node_id = add("Pin ruff to 0.9", "--subtype", "decision", "--importance", "0.8")
    out = ok(cli("get", node_id)).stdout
    lines = out.splitlines()
    assert lines[0] == f"## {node_id[:8]} [episode/active] (importance: 0.80)"
    assert lines[1] == "Pin ruff to 0.9"
    assert f"- id: {node_id}" in lines
    assert "- subtype: decision" in lines


def test_get_json_shape(cli, add, brain_path):
    clock.set_now(T0)
    node_id = add("shape", "--metadata", '{"k": "v"}')
    data = ok(cli("get", node_id, "--format", "json")).json()
    assert set(data) == NODE_KEYS | {"edges", "provenance_status", "origin_status", "anchor_status", "anchors"}
    assert data["provenance_status"] in ("none", "legacy") and data["origin_status"] in ("unknown", "legacy")
    assert data["id"] == node_id
    assert data["content"] == "shape"
    assert data["metadata"] == {"k": "v"}
    assert data["created_at"] == "2026-03-11T10:00:00Z"
    assert data["last_accessed"] == "2026-03-11T10:00:00Z"
    assert data["updated_at"] is None
    assert data["provenance_root"] is False
    assert data["origin_channel"] == "cli"
    assert data["edges"] == []


@pytest.mark.parametrize("length", [4, 5, 8, 13, 35])
def test_get_by_prefix(cli, add, length):
    node_id = add("prefixed")
    assert ok(cli("get", node_id[:length], "--format", "json")).json()["id"] == node_id


def test_get_prefix_is_case_insensitive_and_trimmed(cli, add):
    node_id = add("prefixed")
    assert ok(cli("get", node_id[:8].upper(), "--format", "json")).json()["id"] == node_id
    assert ok(cli("get", f"  {node_id[:8]} ", "--format", "json")).json()["id"] == node_id


def test_get_is_read_only(cli, add, brain_path, brain_snapshot):
    node_id = add("read me")
    before = brain_snapshot(brain_path)
    ok(cli("get", node_id))
    ok(cli("get", node_id[:6], "--format", "json"))
    assert brain_snapshot(brain_path) == before


def test_get_lists_edges_in_both_directions(cli, add, brain_path):
    a, b, c = add("A"), add("B"), add("C")
    ok(cli("edge", a, b, "supports", "--weight", "0.5"))
    ok(cli("edge", c, a, "derived_from"))

    data = ok(cli("get", a, "--format", "json")).json()
    assert len(data["edges"]) == 2
    for edge in data["edges"]:
        assert set(edge) == EDGE_KEYS
    by_rel = {e["relation"]: e for e in data["edges"]}
    assert (by_rel["supports"]["source_id"], by_rel["supports"]["target_id"]) == (a, b)
    assert by_rel["supports"]["weight"] == 0.5
    assert (by_rel["derived_from"]["source_id"], by_rel["derived_from"]["target_id"]) == (c, a)

    md = ok(cli("get", a)).stdout
    assert "### Edges" in md
    assert f"- → {b[:8]} supports (weight 0.50)" in md
    assert f"- ← {c[:8]} derived_from (weight 1.00)" in md

    # Same edges through the library.
    edges = detail(brain_path, a).edges
    triples = {(e.source_id, e.target_id, e.relation) for e in edges}
    assert triples == {(a, b, "supports"), (c, a, "derived_from")}
    # And B sees its incoming edge.
    assert [e["source_id"] for e in ok(cli("get", b, "--format", "json")).json()["edges"]] == [a]


def _edge_relations(cli, node_id, as_of):
    data = ok(cli("get", node_id, "--as-of", as_of, "--format", "json")).json()
    return sorted(e["relation"] for e in data["edges"])


def test_get_as_of_uses_half_open_window(cli, add, brain_path):
    a, b = add("A"), add("B")
    ok(cli("edge", a, b, "january", "--valid-at", "2026-01-01", "--invalid-at", "2026-02-01", "-q"))
    ok(cli("edge", a, b, "forever", "-q"))
    ok(cli("edge", a, b, "from-march", "--valid-at", "2026-03-01T00:00:00Z", "-q"))
    ok(cli("edge", a, b, "until-march", "--invalid-at", "2026-03-01", "-q"))
    ok(cli("edge", a, b, "empty", "--valid-at", "2026-01-10", "--invalid-at", "2026-01-10", "-q"))

    # Without --as-of every edge is listed.
    assert len(ok(cli("get", a, "--format", "json")).json()["edges"]) == 5
    assert _edge_relations(cli, a, "2025-12-31T23:59:59Z") == ["forever", "until-march"]
    # valid_at is inclusive.
    assert _edge_relations(cli, a, "2026-01-01") == ["forever", "january", "until-march"]
    # Equal bounds: valid at no instant.
    assert _edge_relations(cli, a, "2026-01-10") == ["forever", "january", "until-march"]
    # invalid_at is exclusive.
    assert _edge_relations(cli, a, "2026-01-31T23:59:59Z") == ["forever", "january", "until-march"]
    assert _edge_relations(cli, a, "2026-02-01T00:00:00Z") == ["forever", "until-march"]
    assert _edge_relations(cli, a, "2026-03-01") == ["forever", "from-march"]
    # A zone offset is normalised to UTC before comparing: 2026-03-01T01:00+02:00 is 2026-02-28T23:00Z.
    assert _edge_relations(cli, a, "2026-03-01T01:00:00+02:00") == ["forever", "until-march"]
    # The target sees the same windows from its side; the library agrees.
    assert _edge_relations(cli, b, "2026-01-15") == ["forever", "january", "until-march"]
    lib = detail(brain_path, a, as_of="2026-01-15")
    assert sorted(e.relation for e in lib.edges) == ["forever", "january", "until-march"]


def test_get_md_shows_window(cli, add):
    a, b = add("A"), add("B")
    ok(cli("edge", a, b, "supports", "--valid-at", "2026-01-01", "--invalid-at", "2026-02-01"))
    assert "[2026-01-01T00:00:00Z, 2026-02-01T00:00:00Z)" in ok(cli("get", a)).stdout


def test_window_stored_in_storage_layout(cli, add, brain_path):
    a, b = add("A"), add("B")
    ok(cli("edge", a, b, "supports", "--valid-at", "2026-01-01T02:00:00+02:00", "--invalid-at", "2026-02-01"))
    assert raw_rows(brain_path, "SELECT valid_at, invalid_at FROM edges") == [
        ("2026-01-01 00:00:00", "2026-02-01 00:00:00")
    ]


def test_add_dash_after_double_dash_reads_stdin(cli, project, brain_path):
    node_id = ok(cli("-p", str(project), "add", "--", "-", stdin="piped text")).stdout.strip()
    assert node(brain_path, node_id).content == "piped text"


def test_json_output_does_not_escape_html_or_unicode(cli, add):
    node_id = add("a <b> & c 🧠")
    out = ok(cli("get", node_id, "--format", "json")).stdout
    assert '"content": "a <b> & c 🧠"' in out


# --------------------------------------------------------------------------- the fast path (ADR 0028)

# (arguments after "add", taken by the fast path?) — the fast path must store exactly what Cyclopts' command
# stores, and leave every other shape (and every refusal) to Cyclopts.
ADD_SHAPES = [
    (["plain text"], True),
    (["text", "--type", "procedure"], True),
    (["text", "--importance", "0"], True),  # upstream's 0 → the default 0.5
    (["text", "--importance", ".25", "--subtype", "decision", "--type", "concept"], True),
    (["--type", "concept", "--importance", "0.8", "options first"], True),
    (["--subtype", "decision", "between", "--type", "procedure"], True),
    (["--type", "concept"], False),  # no text: Cyclopts says what is missing
    (["--type"], False),
    (["text", "--type"], False),
    (["text", "--subtype", ""], True),
    (["text", "--importance", "1"], True),
    (["text", "--importance", "1.000"], True),
    ([""], True),  # the library's refusal, the same on both paths
    (["text", "--type", "bogus"], False),
    (["text", "--importance", "1.5"], False),
    (["text", "--importance", "-0.1"], False),
    (["text", "--importance", "nan"], False),
    (["text", "--importance", "1e-1"], False),
    (["text", "--importance", ""], False),
    (["text", "--type", "concept", "--type", "episode"], False),
    (["text", "--subtype", "-x"], False),
    (["text", "--type=concept"], False),
    (["text", "--metadata", '{"a": 1}'], False),
    (["-"], False),
    (["--help"], False),
    (["a", "b"], False),
    (["a", "--type", "concept", "b"], False),
    (["text", "--"], False),
]


@pytest.mark.parametrize(("args", "fast"), ADD_SHAPES, ids=[" ".join(a) or "empty" for a, _ in ADD_SHAPES])
def test_the_add_fast_path_and_cyclopts_agree(cli, brain_path, monkeypatch, args, fast) -> None:
    from cerebro.cli import fast as fast_path

    assert (fast_path.parse_add(["add", *args]) is not None) == fast
    stored = []
    outcomes = []
    for take_fast in (True, False):
        if not take_fast:
            monkeypatch.setattr(fast_path, "parse_add", lambda tokens: None)
        result = cli("add", *args, stdin="from stdin\n")
        outcomes.append((result.exit_code, result.stderr))
        if result.exit_code == 0 and "--help" not in args:
            n = node(brain_path, result.stdout.strip())
            stored.append((n.content, n.type, n.subtype, n.importance, n.decay_rate, n.origin.channel))
    assert outcomes[0] == outcomes[1]
    assert len(stored) in (0, 2) and (not stored or stored[0] == stored[1])


def test_the_add_fast_path_stores_what_it_was_given(cli, brain_path) -> None:
    result = ok(cli("add", "Deploys need AWS_REGION", "--type", "procedure", "--importance", "0.8", "--subtype", "ops"))
    n = node(brain_path, result.stdout.strip())
    assert (n.content, n.type, n.subtype, n.importance, n.origin.channel) == (
        "Deploys need AWS_REGION",
        "procedure",
        "ops",
        0.8,
        "cli",
    )


@pytest.mark.parametrize(
    ("args", "quick_start"),
    [
        (["add", "one memory"], True),
        (["add", "with metadata", "--metadata", "{}"], True),  # through Cyclopts: the same one text
        (["recall", "one query"], True),
        (["recall", "--prime"], False),  # embeds nothing
        (["hook", "prime", "--event", "sessionstart"], False),  # neither do the hooks: they pay no import for it
        (["list"], False),
    ],
)
def test_one_shot_commands_load_the_model_for_a_quick_start(cli, brain_path, args, quick_start) -> None:
    """ADR 0028: the commands that embed one text and exit skip ONNX Runtime's weight pre-packing."""
    from cerebro.embed import local

    cli(*args, stdin="{}")
    assert local._FAST_START is quick_start
