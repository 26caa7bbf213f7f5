"""Bad input: a one-line ``cerebro: error:`` message, a non-zero exit, nothing on stdout, and an unchanged
brain. Also: no brain at all (exit 4), ambiguous prefixes, hostile ids and hostile content."""

from __future__ import annotations

import pytest

from cerebro import Brain, paths

from .helpers import MISSING_ID, assert_one_line_error, fts_rows, node, ok, raw_exec

AMBIGUOUS = ("abcd1111-0000-4000-8000-000000000001", "abcd2222-0000-4000-8000-000000000002")


@pytest.fixture(scope="module")
def _seeded_template(_template_brain, tmp_path_factory):
    """Built once per module through the library, then copied for every test (keeps the 70+ cases fast)."""
    import shutil

    path = tmp_path_factory.mktemp("seeded") / "seeded.sqlite"
    shutil.copyfile(_template_brain, path)
    with Brain.open(path) as brain:
        a = brain.add("memory A", subtype="bug", metadata={"k": 1})
        b = brain.add("memory B")
        brain.add_edge(a, b, "supports", valid_at="2026-01-01")
        brain.config_set("prime_limit", "5")
    for node_id in AMBIGUOUS:  # chosen ids, inserted with the sqlean driver
        raw_exec(
            path,
            "INSERT INTO nodes (id, type, content, decay_rate, created_at, last_accessed) "
            "VALUES (?, 'episode', 'chosen id', 0.15, '2026-01-01 00:00:00', '2026-01-01 00:00:00')",
            (node_id,),
        )
    assert not path.with_name(path.name + "-wal").exists()
    return path, {"A": a, "B": b}


@pytest.fixture
def seeded(brain_path, _seeded_template):
    """Two memories with an edge, a config override, and two rows whose ids share the prefix 'abcd'."""
    import shutil

    template, ids = _seeded_template
    shutil.copyfile(template, brain_path)
    return ids


# (argv with {A}/{B} placeholders, expected exit code, fragment of the message)
CASES = [
    # ids
    (("get", MISSING_ID), 3, "no node found"),
    (("get", "ffffffff"), 3, "no node found"),
    (("get", "abc"), 2, "too short"),
    (("get", ""), 2, "empty"),
    (("get", "   "), 2, "empty"),
    (("get", "____"), 2, "invalid id"),
    (("get", "%%%%"), 2, "invalid id"),
    (("get", "' OR 1=1 --"), 2, "invalid id"),
    (("get", "abcd%"), 2, "invalid id"),
    (("get", "abcd"), 2, "ambiguous"),
    (("get", "ABCD"), 2, "ambiguous"),
    (("update", MISSING_ID, "--importance", "0.9"), 3, "no node found"),
    (("update", "abcd", "--importance", "0.9"), 2, "ambiguous"),
    (("update", "' OR 1=1 --", "--content", "pwned"), 2, "invalid id"),
    (("reinforce", MISSING_ID), 3, "no node found"),
    (("reinforce", "abcd"), 2, "ambiguous"),
    (("reinforce", "%%%%"), 2, "invalid id"),
    (("supersede", "abcd", "x"), 2, "ambiguous"),
    (("supersede", "____", "x"), 2, "invalid id"),
    (("edge", "{A}", "abcd", "supports"), 2, "ambiguous"),
    (("edge", "abc", "{B}", "supports"), 2, "too short"),
    # importance
    (("add", "x", "--importance", "1.5"), 2, "importance"),
    (("add", "x", "--importance", "-0.1"), 2, "importance"),
    (("add", "x", "--importance", "nan"), 2, "importance"),
    (("add", "x", "--importance", "inf"), 2, "importance"),
    (("add", "x", "--importance", "abc"), 2, "importance"),
    (("update", "{A}", "--importance", "1.5"), 2, "importance"),
    (("update", "{A}", "--importance", "nan"), 2, "importance"),
    # text Python could not decode from argv (lone surrogates), and JSON Python cannot convert (issue 17)
    (("add", "x", "--subtype", "\udcff"), 2, "not valid UTF-8"),
    (("add", "x", "--origin-actor", "a\udcffb"), 2, "not valid UTF-8"),
    (("relation", "add", "\udcfe"), 2, "not valid UTF-8"),
    (("relation", "add", "x\ny"), 2, "control character"),
    (("config", "reset", "prime_limit", "--all"), 2, "a key or --all, not both"),
    (("stats", "--last", "5"), 2, "--last applies with --metrics"),
    (("relation", "add", "cls1", "--class", "a\x1b[31mb"), 2, "control character"),
    (("relation", "add", "r" * 101), 2, "longer than 100"),
    (("config", "set", "fusion", "\udcff"), 2, "not valid UTF-8"),
    (("add", "x", "--metadata", '{"n": ' + "9" * 5000 + "}"), 2, "cannot read"),
    (("recall", "x", "-l", "0"), 2, "--limit"),
    # type / status
    (("add", "x", "--type", "bogus"), 2, "for --type"),
    (("add", "x", "--type", "Episode"), 2, "for --type"),
    (("add", "x", "--type", ""), 2, "for --type"),
    (("supersede", "{A}", "x", "--type", "bogus"), 2, "unknown type"),
    (("list", "--type", "bogus"), 2, "for --type"),
    (("list", "--status", "deleted"), 2, "for --status"),
    # content
    (("add", ""), 2, "empty"),
    (("add", " \n\t "), 2, "empty"),
    (("add", "nul\x00byte"), 2, "nul"),
    (("update", "{A}", "--content", ""), 2, "empty"),
    # metadata
    (("add", "x", "--metadata", "{bad"), 2, "metadata"),
    (("add", "x", "--metadata", "[1,2]"), 2, "metadata"),
    (("add", "x", "--metadata", '"str"'), 2, "metadata"),
    (("add", "x", "--metadata", "null"), 2, "metadata"),
    (("add", "x", "--metadata", "42"), 2, "metadata"),
    (("add", "x", "--metadata", '{"a": NaN}'), 2, "metadata"),
    (("add", "x", "--metadata", ""), 2, "metadata"),
    (("update", "{A}", "--metadata", "{bad"), 2, "metadata"),
    (("update", "{A}", "--metadata", "[1,2]"), 2, "metadata"),
    (("supersede", "{A}", "x", "--metadata", '"str"'), 2, "metadata"),
    # --as-of
    (("get", "{A}", "--as-of", "garbage"), 2, "timestamp"),
    (("get", "{A}", "--as-of", "2026-02-30"), 2, "timestamp"),
    # config
    (("config", "get", "nope"), 3, "unknown config key"),
    (("config", "set", "nope", "1"), 3, "unknown config key"),
    (("config", "set", "prime_limit", "0"), 2, "invalid value for prime_limit"),
    (("config", "set", "prime_limit", "-1"), 2, "invalid value for prime_limit"),
    (("config", "set", "prime_limit", "abc"), 2, "invalid value for prime_limit"),
    (("config", "set", "gc_threshold", "nan"), 2, "invalid value for gc_threshold"),
    (("config", "set", "gc_threshold", "2"), 2, "invalid value for gc_threshold"),
    (("config", "set", "bm25_enabled", "True"), 2, "invalid value for bm25_enabled"),
    (("config", "set", "bm25_enabled", "yes"), 2, "invalid value for bm25_enabled"),
    (("config", "set", "rerank_fusion", "bogus"), 2, "invalid value for rerank_fusion"),
    # parsing
    (("frob",), 2, "frob"),
    (("config", "frob"), 2, "frob"),
    (("relation", "frob"), 2, "frob"),
    (("get",), 2, ""),
    (("add",), 2, ""),
    (("edge", "{A}", "{B}"), 2, ""),
    (("supersede", "{A}"), 2, ""),
    (("config", "set", "prime_limit"), 2, ""),
    (("update", "{A}", "--subtype"), 2, ""),
    (("add", "x", "--no-such-flag"), 2, ""),
    (("add", "x", "y"), 2, ""),
    (("list", "--limit", "many"), 2, ""),
    # numbers as config takes them: no rounding, no other bases, no "_" separators, ASCII digits only
    (("recall", "memory", "--limit", "1.5"), 2, "--limit"),
    # past SQLite's 64-bit LIMIT: an internal error, or no results at all (a review)
    (("recall", "memory", "--limit", "99999999999999999999"), 2, "limit must be a whole number from 1"),
    (("recall", "--prime", "--limit", "9223372036854775807"), 2, "limit must be a whole number from 1"),
    (("inbox", "list", "--limit", "9223372036854775808"), 2, "limit must be a whole number from 1"),
    (("list", "--limit", "0x10"), 2, "--limit"),
    (("list", "--limit", "1_0"), 2, "--limit"),
    (("list", "--limit", "\u0663"), 2, "--limit"),
    (("add", "x", "--importance", "\u0660.\u0665"), 2, "--importance"),
    (("update", "{A}", "--importance", "0x1p-1"), 2, "--importance"),
    (("recall", "memory", "--threshold", "1_0e-1"), 2, "--threshold"),
    (("--format", "xml", "list"), 2, "--format"),
    # Shapes the one-shot path (cerebro/cli/fast.py) must hand to the full parser: Cyclopts' errors, the brain untouched
    # (a recall that answered would have counted its results' accesses).
    (("recall", "memory", "--limit", "1", "--limit", "2"), 2, "multiple times"),
    (("recall", "memory", "-l", "1", "--limit", "3"), 2, "multiple times"),
    (("recall", "memory", "--explain", "--explain"), 2, "multiple times"),
    (("recall", "--prime", "--prime"), 2, "multiple times"),
    (("recall", "  ", "--prime"), 2, "not both"),  # a blank query with --prime is still both
    (("recall", "--prime", "", ""), 2, "not both"),
    (("recall", "--prime", "--global"), 2, "--prime primes from this project's brain only: drop --global"),
    (("recall", "--team", "--prime"), 2, "--prime primes from this project's brain only: drop --team"),
    (("recall", "--prime", "--as-of", "garbage"), 2, "--prime primes from the brain as it is now: drop --as-of"),
    (("recall", "q", "--as-of", "2026-01-15T10:00:00+99:99"), 2, "the offset +99:99 is not a time of day"),
    # Metadata every reader could not copy (a RecursionError in `list`, `get`, the session-start prime at ~500 levels).
    (("add", "x", "--metadata", '{"a": ' * 65 + "1" + "}" * 65), 2, "nested more than 64 levels"),
    # Labels on one line: a subtype or a relation shown in lists and matched exactly.
    (("add", "x", "--subtype", "two\nlines"), 2, "control character"),
    (("update", "{A}", "--subtype", "nul\x00inside"), 2, "control character"),
    (("edge", "{A}", "{B}", "rel\x00ates"), 2, "control character"),
    (("supersede", "{A}", "replaced", "--subtype", "two\nlines"), 2, "control character"),
]


@pytest.mark.parametrize(("argv", "code", "fragment"), CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_bad_input_one_line_error_and_unchanged_brain(cli, seeded, brain_path, brain_snapshot, argv, code, fragment):
    argv = tuple(seeded[arg[1]] if arg in ("{A}", "{B}") else arg for arg in argv)
    before = brain_snapshot(brain_path)
    result = cli(*argv)
    assert_one_line_error(result, *([fragment] if fragment else []), exit_code=code)
    assert brain_snapshot(brain_path) == before


def test_ambiguous_prefix_message_and_resolution(cli, seeded, brain_path):
    line = assert_one_line_error(cli("get", "abcd"), exit_code=2)
    assert "ambiguous prefix" in line and "matches 2 nodes" in line
    # One more character disambiguates; the library agrees.
    assert ok(cli("get", "abcd1", "--format", "json")).json()["id"] == AMBIGUOUS[0]
    assert ok(cli("get", "ABCD2", "--format", "json")).json()["id"] == AMBIGUOUS[1]
    with Brain.open(brain_path) as brain:
        assert brain.resolve_id("abcd2222") == AMBIGUOUS[1]


def test_ambiguity_found_by_creating_nodes(cli, brain, brain_path, brain_snapshot):
    """Without chosen ids: add memories until two share a 4-character prefix (birthday bound ~ 256).
    Added through the library in one open brain, which is much faster than one CLI run each."""
    seen: dict[str, str] = {}
    for _ in range(5000):
        node_id = brain.add("filler")
        if node_id[:4] in seen:
            break
        seen[node_id[:4]] = node_id
    else:  # pragma: no cover - astronomically unlikely
        pytest.fail("no shared prefix found")
    brain.close()
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("reinforce", node_id[:4]), "ambiguous", exit_code=2)
    assert brain_snapshot(brain_path) == before


# ------------------------------------------------------------------------------------------ no brain


@pytest.mark.parametrize(
    "argv",
    [
        ("add", "x"),
        ("get", "abcd"),
        ("list",),
        ("stats",),
        ("update", "abcd", "--importance", "0.5"),
        ("edge", "abcd", "bcde", "supports"),
        ("reinforce", "abcd"),
        ("supersede", "abcd", "x"),
        ("config", "list"),
        ("config", "get", "prime_limit"),
        ("config", "set", "prime_limit", "5"),
        ("config", "reset", "--all"),
        ("relation", "list"),
        ("relation", "add", "x"),
        ("relation", "rm", "x"),
    ],
    ids=" ".join,
)
def test_no_brain_exit_4(cli, project, isolated_home, argv):
    line = assert_one_line_error(cli(*argv), "cerebro init", exit_code=4)
    assert str(paths.project_brain_path(project)) in line
    assert not paths.project_brain_path(project).exists()
    assert not (isolated_home / "projects").exists() or not any((isolated_home / "projects").iterdir())


# ------------------------------------------------------------------------------------------ hostile content

HOSTILE = [
    "'; DROP TABLE nodes; --",
    "Robert'); DELETE FROM nodes WHERE ('1'='1",
    "He said \"hi\" and 'bye' `ticks`",
    "100% of _all_ rows LIKE '%'",
    "back\\slash \\n not a newline",
    "unicode: café naïve 中文 العربية עברית Ελληνικά",
    "emoji 🧠🔥👩‍💻 and flags 🇿🇦",
    "line one\nline two\r\nline three\ttabbed",
    "  leading and trailing spaces  ",
    "trailing newline\n",
    '{"looks": "like json", "n": [1, 2]}',
    "NULL",
    "<script>alert('x')</script> & &amp;",
    "zero\u200bwidth and \u202eright-to-left override",
    'fts5 syntax: NEAR(a b) OR "phrase" AND -not *',
    "-starts with a dash",
    "x" * 20000,
]


@pytest.mark.parametrize("content", HOSTILE, ids=[repr(h[:24]) for h in HOSTILE])
def test_hostile_content_round_trips_verbatim(cli, project, brain_path, content):
    node_id = ok(cli("-p", str(project), "add", "--", content)).stdout.strip()
    assert node(brain_path, node_id).content == content
    assert ok(cli("get", node_id, "--format", "json")).json()["content"] == content
    assert ok(cli("list", "--format", "json")).json()["memories"][0]["content"] == content
    assert fts_rows(brain_path)[node_id][0] == content
    md = ok(cli("get", node_id)).stdout
    assert content in md
    # Still one table named nodes with the row in it.
    with Brain.open(brain_path) as brain:
        assert brain.stats().total_nodes == 1


def test_hostile_content_in_other_fields(cli, add, brain_path):
    hostile = "'; DROP TABLE nodes; -- 🧠"
    node_id = add(
        "x", "--subtype", hostile, "--metadata", '{"q": "\' OR 1=1 --", "e": "🔥"}', "--origin-actor", hostile
    )
    n = node(brain_path, node_id)
    assert n.subtype == hostile
    assert n.metadata == {"q": "' OR 1=1 --", "e": "🔥"}
    assert n.origin.actor == hostile
    assert ok(cli("list", "--subtype", hostile, "--format", "json")).json()["memories"][0]["id"] == node_id


def test_corrupt_brain_file_is_a_clean_error(cli, brain_path):
    """A file that is not SQLite is a user-environment problem, not a crash: one line, no 'internal error'."""
    for suffix in ("-wal", "-shm"):
        brain_path.with_name(brain_path.name + suffix).unlink(missing_ok=True)
    garbage = b"this is not a database " * 40
    brain_path.write_bytes(garbage)
    result = cli("list")
    assert result.exit_code != 0
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("cerebro: error:")
    assert "internal error" not in result.stderr, result.stderr
    assert brain_path.read_bytes() == garbage


@pytest.mark.parametrize(
    ("argv", "code", "name"),
    [
        (["get", "00000000-0000-4000-8000-000000000000"], 3, "not_found"),
        (["add", "x", "--importance", "7"], 2, "invalid_input"),
        (["frob"], 2, "invalid_input"),  # Cyclopts' own refusal
        (["--project"], 2, "invalid_input"),  # the global options' pre-parser
    ],
)
def test_errors_under_format_json_are_one_json_object_on_stderr(cli, brain_path, brain_snapshot, argv, code, name):
    import json

    before = brain_snapshot(brain_path)
    result = cli(*argv, "--format", "json") if argv != ["--project"] else cli("--format", "json", "--project")
    assert (result.exit_code, result.stdout) == (code, "")
    (line,) = result.stderr.splitlines()
    error = json.loads(line)["error"]
    assert (error["code"], error["name"]) == (code, name) and error["message"] and "\n" not in error["message"]
    assert brain_snapshot(brain_path) == before
    plain = cli(*argv) if argv != ["--project"] else cli("--project")
    assert plain.stderr.startswith("cerebro: error: ")  # markdown (the default) keeps the one plain line


def test_stdin_is_read_only_as_far_as_a_memory_may_go(cli, brain_path, monkeypatch) -> None:
    """`add - < /dev/zero` grew without bound (issue 17): stdin is read up to the largest size a brain accepts."""
    from cerebro.cli.commands import memory

    monkeypatch.setattr(memory, "STDIN_LIMIT", 100)
    result = cli("add", "-", stdin="y" * 500)
    assert_one_line_error(result, "stdin holds more than 100 characters: not a memory", exit_code=2)
    assert cli("list", "--format", "json").json()["memories"] == []
    assert cli("add", "-", stdin="y" * 100).exit_code == 0


def test_a_huge_bad_value_is_named_not_echoed_back_whole(cli, brain_path, brain_snapshot):
    before = brain_snapshot(brain_path)
    line = assert_one_line_error(cli("get", "z" * 50_000), exit_code=2)
    assert "zzzz" in line and len(line) < 600, len(line)
    assert brain_snapshot(brain_path) == before


def test_a_bad_pinned_clock_is_a_one_line_error(cli, brain_path, brain_snapshot, monkeypatch):
    monkeypatch.setenv("CEREBRO_NOW", "garbage")
    before = brain_snapshot(brain_path)
    assert_one_line_error(cli("gc"), "CEREBRO_NOW", exit_code=2)
    assert brain_snapshot(brain_path) == before
