"""What ``importing.read`` makes of each record, and the exact message for each refusal: the message is
what a user fixing a hand-edited or truncated file has to go on, so it names the record and the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cerebro import importing
from cerebro.errors import InvalidInput

ARCHIVED = {
    "kind": "archive",
    "id": "abcd1234-0000",
    "type": "concept",
    "subtype": "decision",
    "content": "Use WAL",
    "metadata": {"note": "größer"},
    "importance": 0.7,
    "status": "active",
    "archive_reason": "decayed",
    "original_created_at": "2026-01-02T03:04:05Z",
    "archived_at": "2026-02-03T04:05:06+01:00",
}


def _jsonl(tmp_path: Path, *records: dict[str, Any]) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _bundle(tmp_path: Path, bundle: dict[str, Any]) -> Path:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    return path


def test_an_archive_record_is_read_field_for_field_with_times_normalised(tmp_path: Path) -> None:
    # Two lines, so that the file is read as jsonl (a single object line is a bundle).
    meta = {"kind": "meta", "key": "config.prime_limit", "value": "7"}
    parsed = importing.read(_jsonl(tmp_path, meta, ARCHIVED))
    assert parsed.archive == [
        {
            "id": "abcd1234-0000",
            "type": "concept",
            "subtype": "decision",
            "content": "Use WAL",
            "metadata": '{"note": "größer"}',
            "importance": 0.7,
            "status": "active",
            "archive_reason": "decayed",
            "original_created_at": "2026-01-02 03:04:05",
            "archived_at": "2026-02-03 03:05:06",
        }
    ]
    assert parsed.config == {"config.prime_limit": "7"}


def test_an_archive_record_with_only_what_is_required_gets_the_defaults(tmp_path: Path) -> None:
    bare = {"kind": "archive", "id": "abcd1234", "type": "episode", "content": "x"}
    parsed = importing.read(_jsonl(tmp_path, bare, bare | {"id": "abcd5678"}))
    assert parsed.archive[0] == {
        "id": "abcd1234",
        "type": "episode",
        "subtype": None,
        "content": "x",
        "metadata": None,
        "importance": 0.5,
        "status": None,
        "archive_reason": None,
        "original_created_at": None,
        "archived_at": None,
    }


ARCHIVE_REFUSALS = {
    "unknown reason": ({"archive_reason": "bored"}, 'unknown archive_reason "bored"'),
    "reason not text": ({"archive_reason": 3}, "archive_reason must be text"),
    "metadata a list": ({"metadata": [1]}, "metadata must be an object"),
    "no type": ({"type": None}, "missing type"),
    "no content": ({"content": None}, "missing content"),
    "subtype not text": ({"subtype": 5}, "subtype must be text"),
    "status not text": ({"status": 5}, "status must be text"),
    "bad id": ({"id": "zz"}, 'id "zz" is not a node id'),
    "importance too high": ({"importance": 2}, "importance 2 is out of range"),
    "bad original time": ({"original_created_at": "soon"}, 'original_created_at "soon" is not a timestamp'),
    "bad archive time": ({"archived_at": "later"}, 'archived_at "later" is not a timestamp'),
    # held to a memory's rules: an archived memory is one, restored as it was by a later import or sync
    "unknown type": ({"type": "thought"}, 'unknown type "thought"'),
    "unknown status": ({"status": "lost"}, 'unknown status "lost"'),
    "empty content": ({"content": "  "}, "content is empty"),
}


@pytest.mark.parametrize("case", sorted(ARCHIVE_REFUSALS))
def test_a_bad_archive_record_is_refused_naming_its_line_and_field(tmp_path: Path, case: str) -> None:
    change, message = ARCHIVE_REFUSALS[case]
    good = {"kind": "meta", "key": "config.prime_limit", "value": "7"}
    path = _jsonl(tmp_path, good, ARCHIVED | change)
    with pytest.raises(InvalidInput) as refused:
        importing.read(path)
    assert str(refused.value) == f"{path}:2: {message}"


NODE = {"id": "abcd1234", "type": "episode", "content": "x"}
EDGE = {"source_id": "abcd1234", "target_id": "abcd1234", "relation": "supports"}

BUNDLE_REFUSALS = {
    "node type": ({"nodes": [NODE | {"type": "memo"}]}, 'node 1: unknown type "memo"'),
    "node no type": ({"nodes": [NODE | {"type": None}]}, "node 1: missing type"),
    "node type not text": ({"nodes": [NODE | {"type": 7}]}, "node 1: type must be text"),
    "node no content": ({"nodes": [NODE | {"content": None}]}, "node 1: missing content"),
    "node no id": ({"nodes": [NODE | {"id": None}]}, "node 1: missing id"),
    "node bad id": ({"nodes": [NODE | {"id": "zz"}]}, 'node 1: id "zz" is not a node id'),
    "node empty id": ({"nodes": [NODE | {"id": ""}]}, 'node 1: id "" is not a node id'),
    "node nul": ({"nodes": [NODE | {"content": "a\x00b"}]}, "node 1: content holds a NUL character"),
    "node surrogate": ({"nodes": [NODE | {"subtype": "\ud800"}]}, "node 1: subtype is not valid UTF-8"),
    "node importance low": ({"nodes": [NODE | {"importance": -0.5}]}, "node 1: importance -0.5 is out of range"),
    "node importance nan": (
        {"nodes": [NODE | {"importance": float("nan")}]},
        "node 1: importance must be a finite number",
    ),
    "node status": ({"nodes": [NODE | {"status": "gone"}]}, 'node 1: unknown status "gone"'),
    "node blank content": ({"nodes": [NODE | {"content": " "}]}, "node 1: content is empty"),
    "node metadata text": ({"nodes": [NODE | {"metadata": "{nope"}]}, "node 1: metadata is not JSON"),
    "node metadata json list": ({"nodes": [NODE | {"metadata": "[1]"}]}, "node 1: metadata must be an object"),
    "node metadata list": ({"nodes": [NODE | {"metadata": [1]}]}, "node 1: metadata must be an object"),
    "node count": (
        {"nodes": [NODE | {"times_reinforced": 1.5}]},
        "node 1: times_reinforced must be a whole number from 0 to 2^63 - 1",
    ),
    "node decay": ({"nodes": [NODE | {"decay_rate": -1}]}, "node 1: decay_rate -1 is out of range"),
    "node importance": ({"nodes": [NODE | {"importance": True}]}, "node 1: importance must be a finite number"),
    "node not object": ({"nodes": [NODE, 3]}, "node 2: a node must be an object"),
    "edge not object": ({"nodes": [NODE], "edges": [[]]}, "edge 1: an edge must be an object"),
    "edge relation": ({"nodes": [NODE], "edges": [EDGE | {"relation": " "}]}, "edge 1: relation is empty"),
    "edge metadata": ({"nodes": [NODE], "edges": [EDGE | {"metadata": 4}]}, "edge 1: metadata must be an object"),
    "edge weight": ({"nodes": [NODE], "edges": [EDGE | {"weight": -0.5}]}, "edge 1: weight -0.5 is out of range"),
    "edge window": (
        {"nodes": [NODE], "edges": [EDGE | {"valid_at": "2026-02-01", "invalid_at": "2026-01-01"}]},
        "edge 1: valid_at is after invalid_at",
    ),
    "edge no relation": (
        {"nodes": [NODE], "edges": [{k: v for k, v in EDGE.items() if k != "relation"}]},
        "edge 1: missing relation",
    ),
    "edge valid time": (
        {"nodes": [NODE], "edges": [EDGE | {"valid_at": "soon"}]},
        'edge 1: valid_at "soon" is not a timestamp',
    ),
    "edge invalid time": (
        {"nodes": [NODE], "edges": [EDGE | {"invalid_at": "never"}]},
        'edge 1: invalid_at "never" is not a timestamp',
    ),
    "edge source": ({"nodes": [NODE], "edges": [EDGE | {"source_id": "x"}]}, 'edge 1: source_id "x" is not a node id'),
    "edges not a list": ({"nodes": [NODE], "edges": {"a": 1}}, "edges must be a list"),
    "meta not an object": ({"meta": ["config.x"], "nodes": []}, "meta must be an object"),
    "meta value": (
        {"meta": {"config.prime_limit": 3}, "nodes": []},
        'meta "config.prime_limit": meta keys and values must be text',
    ),
    "version": ({"version": 2, "nodes": []}, 'export version "2" is not supported'),
}


@pytest.mark.parametrize("case", sorted(BUNDLE_REFUSALS))
def test_a_bad_bundle_is_refused_naming_the_record(tmp_path: Path, case: str) -> None:
    bundle, message = BUNDLE_REFUSALS[case]
    path = _bundle(tmp_path, bundle)
    with pytest.raises(InvalidInput) as refused:
        importing.read(path)
    assert str(refused.value) == f"{path}: {message}"


def test_an_edge_keeps_its_metadata_weight_and_a_zero_length_window(tmp_path: Path) -> None:
    edge = EDGE | {
        "weight": 0.25,
        "metadata": {"why": "größer"},
        "created_at": "2026-01-01T00:00:00Z",
        "valid_at": "2026-03-01T00:00:00Z",
        "invalid_at": "2026-03-01T00:00:00Z",
    }
    parsed = importing.read(_bundle(tmp_path, {"nodes": [NODE], "edges": [edge]}))
    assert parsed.edges == [
        {
            "source_id": "abcd1234",
            "target_id": "abcd1234",
            "relation": "supports",
            "weight": 0.25,
            "metadata": '{"why": "größer"}',
            "created_at": "2026-01-01 00:00:00",
            "valid_at": "2026-03-01 00:00:00",
            "invalid_at": "2026-03-01 00:00:00",
        }
    ]


def test_a_node_listed_twice_or_an_edge_to_nowhere_is_refused_before_any_write(tmp_path: Path) -> None:
    from cerebro import Brain

    brain_file = tmp_path / "b.db"
    Brain.init(brain_file, embed_provider="none")
    twice = _bundle(tmp_path, {"nodes": [NODE, NODE | {"content": "y"}]})
    dangling = tmp_path / "dangling.json"
    dangling.write_text(json.dumps({"nodes": [NODE], "edges": [EDGE, EDGE | {"target_id": "abcd5678-9999"}]}))
    with Brain.open(brain_file) as brain:
        with pytest.raises(InvalidInput) as refused:
            brain.import_file(twice)
        assert str(refused.value) == "the file lists a node id twice"
        with pytest.raises(InvalidInput) as refused:
            brain.import_file(dangling)
        assert str(refused.value) == "edge 2 points at abcd5678, which is in neither the file nor the brain"
        assert brain.stats().total_nodes == 0


def test_export_defaults_to_the_json_bundle_and_names_the_formats_it_knows(tmp_path: Path) -> None:
    from cerebro import Brain

    brain_file = tmp_path / "b.db"
    Brain.init(brain_file, embed_provider="none")
    with Brain.open(brain_file) as brain:
        assert brain.export()["version"] == "1"
        with pytest.raises(InvalidInput) as refused:
            brain.export("yaml")
    assert str(refused.value) == "unknown export format 'yaml': use json, jsonl, sql or sqlite"


def test_an_empty_time_reads_as_none_as_go_writes_never(tmp_path: Path) -> None:
    parsed = importing.read(_bundle(tmp_path, {"nodes": [NODE | {"last_accessed": "", "access_count": None}]}))
    assert (parsed.nodes[0]["last_accessed"], parsed.nodes[0]["access_count"]) == (None, 0)


def test_a_node_record_is_read_field_for_field(tmp_path: Path) -> None:
    full = {
        "id": "abcd1234-0001",
        "type": "procedure",
        "subtype": "deploy",
        "content": "Tag, then push",
        "metadata": '{"note": "größer"}',
        "importance": 0.9,
        "decay_rate": 0.25,
        "access_count": 3,
        "times_reinforced": 2,
        "status": "superseded",
        "created_at": "2026-01-02T03:04:05Z",
        "last_accessed": "2026-01-03T00:00:00Z",
        "last_reinforced": "2026-01-04T00:00:00Z",
        "updated_at": "2026-01-05T00:00:00Z",
        "last_surfaced": "2026-01-06T00:00:00Z",
        "provenance_root": True,
        "origin_actor": "claude-code",
        "origin_channel": "hook",
        "origin_session": "s1",
        "origin_host": "laptop",
    }
    (node,) = importing.read(_bundle(tmp_path, {"nodes": [full]})).nodes
    assert node == full | {
        "metadata": '{"note": "größer"}',
        "created_at": "2026-01-02 03:04:05",
        "last_accessed": "2026-01-03 00:00:00",
        "last_reinforced": "2026-01-04 00:00:00",
        "updated_at": "2026-01-05 00:00:00",
        "last_surfaced": "2026-01-06 00:00:00",
        "provenance_root": 1,
    }


def test_a_bare_node_gets_its_types_decay_rate_and_the_import_time(tmp_path: Path, pinned_clock) -> None:
    bare = {"id": "abcd1234", "type": "concept", "content": "x", "subtype": ""}
    (node,) = importing.read(_bundle(tmp_path, {"nodes": [bare]})).nodes
    assert node == {
        "id": "abcd1234",
        "type": "concept",
        "subtype": None,
        "content": "x",
        "metadata": None,
        "importance": 0.5,
        "decay_rate": 0.02,
        "access_count": 0,
        "times_reinforced": 0,
        "status": "active",
        "created_at": "2026-03-11 10:00:00",
        "last_accessed": None,
        "last_reinforced": None,
        "updated_at": None,
        "last_surfaced": None,
        "provenance_root": 0,
        "origin_actor": None,
        "origin_channel": None,
        "origin_session": None,
        "origin_host": None,
    }


def test_a_bundle_is_read_however_it_is_laid_out(tmp_path: Path) -> None:
    # indent=0 puts every object at the start of a line: still one document, not a record per line.
    path = tmp_path / "laid-out.json"
    path.write_text("\n\n" + json.dumps({"nodes": [NODE, NODE | {"id": "abcd5678"}]}, indent=0) + "\n\n")
    assert [n["id"] for n in importing.read(path).nodes] == ["abcd1234", "abcd5678"]


def test_a_one_line_jsonl_file_is_read_as_records(tmp_path: Path) -> None:
    path = _jsonl(tmp_path, {"kind": "meta", "key": "config.prime_limit", "value": "9"})
    assert importing.read(path).config == {"config.prime_limit": "9"}


def test_blank_lines_are_skipped_and_errors_name_the_real_line(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    meta = json.dumps({"kind": "meta", "key": "config.prime_limit", "value": "9"})
    path.write_text(f"{meta}\n\n   \n{json.dumps({'kind': 'node'} | NODE)}\n\n{json.dumps({'kind': 'virus'})}\n")
    with pytest.raises(InvalidInput) as refused:
        importing.read(path)
    assert str(refused.value) == f'{path}:6: unknown record kind "virus"'
    path.write_text(f"{meta}\n\n{json.dumps({'kind': 'node'} | NODE)}\n")
    assert [n["id"] for n in importing.read(path).nodes] == ["abcd1234"]


def test_unreadable_files_are_refused_naming_the_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refusal(path: Path) -> str:
        with pytest.raises(InvalidInput) as refused:
            importing.read(path)
        return str(refused.value)

    missing = tmp_path / "missing.json"
    assert refusal(missing) == f"cannot read {missing}: No such file or directory"
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{")
    assert refusal(binary) == f"{binary} is not UTF-8 text"
    cut = tmp_path / "cut.json"
    cut.write_text('{"nodes": [{"id": "abcd1234",')
    assert refusal(cut) == f"{cut} is not valid JSON (truncated or malformed)"
    nodes = tmp_path / "nodes.json"
    nodes.write_text('{"nodes": {"a": 1}}')
    assert refusal(nodes) == f"{nodes}: not a cerebro export (no nodes list)"
    lines = tmp_path / "lines.jsonl"
    lines.write_text('{"kind": "meta", "key": "config.prime_limit", "value": "9"}\n[1]\n')
    assert refusal(lines) == f"{lines}:2: each line must be an object"
    lines.write_text('{"kind": "meta", "key": "config.prime_limit", "value": "9"}\n{nope\n')
    assert refusal(lines) == f"{lines}:2: malformed JSON line"
    exact = _bundle(tmp_path, {"nodes": []})
    monkeypatch.setattr(importing, "MAX_BYTES", exact.stat().st_size)
    assert importing.read(exact).nodes == []  # exactly the limit: read
    exact.write_text(exact.read_text() + " ")
    assert refusal(exact) == f"{exact} is larger than {exact.stat().st_size - 1} bytes: not a brain export"


def test_a_jsonl_file_whose_first_line_is_bad_names_that_line(tmp_path: Path) -> None:
    meta = json.dumps({"kind": "meta", "key": "config.prime_limit", "value": "9"})
    for first, message in (("{nope", "malformed JSON line"), ('{"x": 1}', 'unknown record kind "None"')):
        path = tmp_path / "first.jsonl"
        path.write_text(f"{first}\n{meta}\n")
        with pytest.raises(InvalidInput) as refused:
            importing.read(path)
        assert str(refused.value) == f"{path}:1: {message}"
    laid_out = tmp_path / "cut.json"
    laid_out.write_text(json.dumps({"nodes": [NODE]}, indent=2)[:-10])  # a pretty-printed bundle, cut short
    with pytest.raises(InvalidInput) as refused:
        importing.read(laid_out)
    assert str(refused.value) == f"{laid_out} is not valid JSON (truncated or malformed)"


NODE_FIELD_REFUSALS = {
    **{
        f: ({f: "soon"}, f'{f} "soon" is not a timestamp')
        for f in ("created_at", "last_accessed", "last_reinforced", "updated_at", "last_surfaced")
    },
    **{
        f: ({f: 5}, f"{f} must be text")
        for f in ("status", "subtype", "origin_actor", "origin_channel", "origin_session", "origin_host")
    },
    **{f: ({f: -1}, f"{f} must be a whole number from 0 to 2^63 - 1") for f in ("access_count", "times_reinforced")},
    "access_count 10^30": ({"access_count": 10**30}, "access_count must be a whole number from 0 to 2^63 - 1"),
    "decay_rate 10^400": ({"decay_rate": 10**400}, "decay_rate must be a finite number"),  # past float's range
}


def _nested(levels: int) -> dict[str, Any]:
    """An object ``levels`` objects deep (itself the first)."""
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


NODE_FIELD_REFUSALS["metadata 65 levels"] = ({"metadata": _nested(65)}, "metadata is nested more than 64 levels deep")
NODE_FIELD_REFUSALS["metadata lone surrogate"] = (
    {"metadata": {"note": "\ud800"}},
    "metadata holds text that is not valid UTF-8",
)


@pytest.mark.parametrize("field", sorted(NODE_FIELD_REFUSALS))
def test_every_node_field_refusal_names_the_node(tmp_path: Path, field: str) -> None:
    change, message = NODE_FIELD_REFUSALS[field]
    path = _bundle(tmp_path, {"nodes": [NODE, NODE | {"id": "abcd5678"} | change]})
    with pytest.raises(InvalidInput) as refused:
        importing.read(path)
    assert str(refused.value) == f"{path}: node 2: {message}"


def test_metadata_sixty_four_levels_deep_is_read() -> None:
    """The bound, not a refusal of nesting: 64 levels are read as given."""
    record = NODE | {"metadata": _nested(64)}
    assert json.loads(importing._node(record, "node 1")["metadata"]) == _nested(64)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target_id": "x"}, 'target_id "x" is not a node id'),
        ({"created_at": "soon"}, 'created_at "soon" is not a timestamp'),
        ({"metadata": _nested(65)}, "metadata is nested more than 64 levels deep"),
        ({"metadata": json.dumps(_nested(65))}, "metadata is nested more than 64 levels deep"),  # as text
        ({"metadata": {"note": "\ud800"}}, "metadata holds text that is not valid UTF-8"),
    ],
)
def test_edge_field_refusals_name_the_edge(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    path = _bundle(tmp_path, {"nodes": [NODE], "edges": [EDGE, EDGE | change]})
    with pytest.raises(InvalidInput) as refused:
        importing.read(path)
    assert str(refused.value) == f"{path}: edge 2: {message}"


@pytest.mark.parametrize(
    ("metadata", "message"),
    [(_nested(65), "metadata is nested more than 64 levels deep"), ({"n": "\ud800"}, "not valid UTF-8")],
)
def test_archived_metadata_is_held_to_the_same_rules(tmp_path: Path, metadata: Any, message: str) -> None:
    path = _jsonl(tmp_path, ARCHIVED | {"metadata": metadata})
    with pytest.raises(InvalidInput, match=message):
        importing.read(path)


def test_an_archived_importance_below_zero_is_refused(tmp_path: Path) -> None:
    meta = {"kind": "meta", "key": "config.prime_limit", "value": "7"}
    path = _jsonl(tmp_path, meta, ARCHIVED | {"importance": -0.1})
    with pytest.raises(InvalidInput) as refused:
        importing.read(path)
    assert str(refused.value) == f"{path}:2: importance -0.1 is out of range"


def test_a_bare_edge_weighs_one_and_provenance_root_reads_true_false_one_or_zero(tmp_path: Path) -> None:
    parsed = importing.read(
        _bundle(
            tmp_path,
            {
                "nodes": [
                    NODE | {"provenance_root": True},
                    NODE | {"id": "abcd0002", "provenance_root": 1},
                    NODE | {"id": "abcd0003", "provenance_root": False},
                    NODE | {"id": "abcd0004", "provenance_root": 0},
                    NODE | {"id": "abcd0005", "provenance_root": None},
                ],
                "edges": [EDGE],
            },
        )
    )
    assert [n["provenance_root"] for n in parsed.nodes] == [1, 1, 0, 0, 0]
    assert parsed.edges[0]["weight"] == 1.0


@pytest.mark.parametrize("value", [2, "yes", "true", 1.0, [1]])
def test_a_provenance_root_that_is_not_true_or_false_is_refused(tmp_path: Path, value: Any) -> None:
    """It was read as false: a root marked "yes" lost its mark without a word."""
    path = _bundle(tmp_path, {"nodes": [NODE | {"provenance_root": value}]})
    with pytest.raises(InvalidInput, match=r"node 1: provenance_root must be true or false, got "):
        importing.read(path)


def test_an_edge_from_a_memory_to_itself_is_skipped_with_a_warning(tmp_path: Path) -> None:
    """``cerebro edge`` refuses one (the memory would cite itself: in-degree and expansion count it); an import
    skips it, counted among the skipped edges, and writes the rest."""
    from cerebro import Brain

    Brain.init(tmp_path / "b.db", embed_provider="none")
    link = EDGE | {"target_id": "abcd5678"}
    bundle = _bundle(tmp_path, {"nodes": [NODE, NODE | {"id": "abcd5678"}], "edges": [link, EDGE]})
    assert EDGE["source_id"] == EDGE["target_id"]
    warnings: list[str] = []
    with Brain.open(tmp_path / "b.db") as brain:
        brain.on_warning = warnings.append
        done = brain.import_file(bundle)
        assert (done["edges_imported"], done["edges_skipped"]) == (1, 1)
        assert [(e.source_id, e.target_id) for e in brain.get("abcd1234").edges] == [("abcd1234", "abcd5678")]
    assert warnings == [f"{bundle}: skipped 1 edge linking a memory to itself"]


def test_replace_rewrites_archived_rows_and_skip_keeps_them(tmp_path: Path) -> None:
    from cerebro import Brain
    from cerebro.store import reads

    meta = {"kind": "meta", "key": "config.prime_limit", "value": "7"}
    brain_file = tmp_path / "b.db"
    Brain.init(brain_file, embed_provider="none")

    def archived_content(brain: Brain) -> str:
        with brain.handle.snapshot() as conn:
            return reads.rows(conn, "nodes_archive", ("content",), "id")[0][0]

    with Brain.open(brain_file) as brain:
        brain.import_file(_jsonl(tmp_path, meta, ARCHIVED))
        changed = tmp_path / "changed.jsonl"
        changed.write_text(json.dumps(meta) + "\n" + json.dumps(ARCHIVED | {"content": "Use WAL, always"}) + "\n")
        brain.import_file(changed)
        assert archived_content(brain) == "Use WAL"  # skip: the row there stays
        brain.import_file(changed, on_conflict="replace")
        assert archived_content(brain) == "Use WAL, always"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"kind": "node"} | NODE | {"type": "memo"}, 'unknown type "memo"'),
        ({"kind": "edge"} | EDGE | {"relation": ""}, "relation is empty"),
        ({"kind": "meta", "key": "config.prime_limit", "value": 3}, "meta keys and values must be text"),
    ],
)
def test_jsonl_refusals_name_the_line(tmp_path: Path, record: dict[str, Any], message: str) -> None:
    meta = {"kind": "meta", "key": "config.prime_limit", "value": "7"}
    path = _jsonl(tmp_path, meta, record)
    with pytest.raises(InvalidInput) as refused:
        importing.read(path)
    assert str(refused.value) == f"{path}:2: {message}"


def test_a_folder_is_not_an_export(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as refused:
        importing.read(tmp_path)
    assert str(refused.value) == f"{tmp_path} is not a regular file: not a brain export"


def test_importing_the_same_file_twice_skips_every_node_and_edge(tmp_path: Path) -> None:
    from cerebro import Brain

    Brain.init(tmp_path / "b.db", embed_provider="none")
    bundle = _bundle(
        tmp_path,
        {
            "nodes": [NODE, NODE | {"id": "abcd5678"}],
            "edges": [EDGE | {"target_id": "abcd5678"}, EDGE | {"source_id": "abcd5678"}],
        },
    )
    with Brain.open(tmp_path / "b.db") as brain:
        first = brain.import_file(bundle)
        again = brain.import_file(bundle)
    assert (first["edges_imported"], first["edges_skipped"]) == (2, 0)
    assert (again["nodes_imported"], again["nodes_skipped"], again["edges_imported"], again["edges_skipped"]) == (
        0,
        2,
        0,
        2,
    )
