"""Code anchors (ADR 0018): recorded at write time, checked at read time, ranked below when the code changed.

Every test runs on a real git repository (the test's project directory) and a brain on the fake embedder.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cerebro import Brain, clock, scoring
from cerebro.errors import InvalidInput
from tests.cli.helpers import assert_one_line_error, ok
from tests.conftest import snapshot

T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
AUTH = "def login(user):\n    check(user)\n    issue_token(user)\n    audit(user)\n    return True\n"


def git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(project: Path, fake_brain_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The test's project as a git repository with src/auth.py, src/cache.py and README.md committed."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(project.parent))
    (project / "src").mkdir()
    (project / "src" / "auth.py").write_text(AUTH)
    (project / "src" / "cache.py").write_text("CACHE = {}\n")
    (project / "README.md").write_text("# demo\n")
    git(project, "init", "-q")
    git(project, "add", ".")
    git(project, "commit", "-q", "-m", "init")
    return project


@pytest.fixture
def pinned():
    clock.set_now(T0)
    yield
    clock.set_now(None)


def add(cli, content: str, *args: str) -> str:
    return ok(cli("add", content, *args)).stdout.strip()


def get_json(cli, node_id: str) -> dict:
    return ok(cli("get", node_id, "--format", "json")).json()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------------------- writing


def test_add_records_path_hash_and_head_commit(cli, repo):
    node_id = add(cli, "login issues the token", "--anchor", "src/auth.py")
    data = get_json(cli, node_id)
    head = git(repo, "rev-parse", "HEAD")
    assert data["metadata"]["anchors"] == [{"path": "src/auth.py", "sha256": sha(AUTH.encode()), "commit": head}]
    assert data["anchor_status"] == "verified"
    assert data["anchors"] == [{"path": "src/auth.py", "lines": None, "commit": head, "status": "verified"}]


def test_line_range_hashes_exactly_those_lines_and_anchor_ref_is_recorded(cli, repo):
    node_id = add(cli, "token issue", "--anchor", "src/auth.py:2-3", "--anchor", "README.md", "--anchor-ref", "v1.2")
    records = get_json(cli, node_id)["metadata"]["anchors"]
    assert records[0]["lines"] == [2, 3]
    assert records[0]["sha256"] == sha(b"    check(user)\n    issue_token(user)")
    assert records[1]["path"] == "README.md" and "lines" not in records[1]
    assert {r["ref"] for r in records} == {"v1.2"}
    assert {r["commit"] for r in records} == {git(repo, "rev-parse", "HEAD")}


def test_single_line_and_absolute_path_inside_the_project(cli, repo):
    node_id = add(cli, "audit", "--anchor", f"{repo / 'src' / 'auth.py'}:4")
    (record,) = get_json(cli, node_id)["metadata"]["anchors"]
    assert record["path"] == "src/auth.py" and record["lines"] == [4, 4]


def test_no_git_no_commit(cli, project, fake_brain_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(project.parent))
    (project / "notes.txt").write_text("x\n")
    node_id = add(cli, "notes", "--anchor", "notes.txt")
    (record,) = get_json(cli, node_id)["metadata"]["anchors"]
    assert "commit" not in record
    assert get_json(cli, node_id)["anchor_status"] == "verified"


def test_supersede_takes_anchors(cli, repo):
    old = add(cli, "login checks the user")
    new = ok(
        cli(
            "supersede",
            old,
            "login checks and audits the user",
            "--anchor",
            "src/auth.py:2-4",
            "--beads-id",
            "bd-a1b2",
            "--format",
            "json",
        )
    ).json()["id"]
    data = get_json(cli, new)
    assert data["anchor_status"] == "verified"
    assert data["anchors"][0]["lines"] == [2, 4]
    assert data["metadata"]["beadsId"] == "bd-a1b2"


@pytest.mark.parametrize(
    ("anchor", "fragment"),
    [
        ("src/nope.py", "no such file"),
        ("src", "directory"),
        ("../outside.py", "outside the project"),
        ("OUTSIDE_ABS", "outside the project"),
        ("src/link.py", "outside the project"),
        ("src/auth.py:0-2", "numbered from 1"),
        ("src/auth.py:3-2", "after END"),
        ("src/auth.py:4-9", "beyond the end"),
        ("src/auth.py:x-2", None),
        ("src/auth.py:2-", "START-END"),
    ],
)
def test_bad_anchors_fail_before_any_write(cli, repo, fake_brain_path, anchor, fragment):
    outside = repo.parent / "outside.py"
    outside.write_text("secret\n")
    (repo / "src" / "link.py").symlink_to(outside)
    anchor = str(outside) if anchor == "OUTSIDE_ABS" else anchor
    before = snapshot(fake_brain_path)
    result = cli("add", "something", "--anchor", "README.md", "--anchor", anchor)
    if fragment is None:  # "x-2" is not a range: the whole text is a path, and there is no such file
        fragment = "no such file"
    assert_one_line_error(result, fragment, exit_code=2)
    assert snapshot(fake_brain_path) == before


def test_anchor_ref_without_anchor_and_supersede_with_a_bad_anchor_write_nothing(cli, repo, fake_brain_path):
    old = add(cli, "a fact")
    before = snapshot(fake_brain_path)
    assert_one_line_error(cli("add", "x", "--anchor-ref", "v1"), "--anchor-ref needs", exit_code=2)
    assert_one_line_error(cli("supersede", old, "y", "--anchor", "gone.py"), "no such file", exit_code=2)
    assert_one_line_error(
        cli("add", "x", "--anchor", "README.md", "--metadata", '{"anchors": []}'), "anchors", exit_code=2
    )
    assert snapshot(fake_brain_path) == before


# ----------------------------------------------------------------------------- beads


@pytest.mark.parametrize(("given", "stored"), [("bd-a1b2", "bd-a1b2"), ("  my-proj-x9z  ", "my-proj-x9z")])
def test_beads_id_valid_and_trimmed(cli, repo, given, stored):
    node_id = add(cli, "fix", "--beads-id", given)
    assert get_json(cli, node_id)["metadata"] == {"beadsId": stored}


def test_beads_id_whitespace_only_is_absent(cli, repo):
    node_id = add(cli, "fix", "--beads-id", "   ")
    assert get_json(cli, node_id)["metadata"] is None


@pytest.mark.parametrize("bad", ["BD-a1b2", "bd-ab", "1bd-abc", "bd_abc", "bdabc", "bd-a1b2\nx", "b" * 40 + "-abc"])
def test_invalid_beads_id_exits_2_and_writes_nothing(cli, repo, fake_brain_path, bad):
    before = snapshot(fake_brain_path)
    assert_one_line_error(cli("add", "fix", "--beads-id", bad), "beads id", exit_code=2)
    assert snapshot(fake_brain_path) == before


# ----------------------------------------------------------------------------- statuses


def test_verified_stale_missing_restored(cli, repo):
    node_id = add(cli, "login issues the token", "--anchor", "src/auth.py")

    def statuses():
        return [
            get_json(cli, node_id)["anchor_status"],
            ok(cli("list", "--format", "json")).json()["memories"][0]["anchor_status"],
            ok(cli("recall", "login token", "--format", "json")).json()["results"][0]["anchor_status"],
        ]

    assert statuses() == ["verified"] * 3
    assert "[stale" not in ok(cli("get", node_id)).stdout

    (repo / "src" / "auth.py").write_text(AUTH.replace("audit", "log"))
    assert statuses() == ["stale"] * 3
    for command in (("get", node_id), ("list",), ("recall", "login token")):
        heading = next(line for line in ok(cli(*command)).stdout.splitlines() if line.startswith("## "))
        assert heading.startswith("## ") and heading.endswith("[stale: src/auth.py changed]"), heading

    (repo / "src" / "auth.py").unlink()
    assert statuses() == ["missing"] * 3
    assert ok(cli("get", node_id)).stdout.splitlines()[0].endswith("[missing: src/auth.py]")
    assert "- anchor: src/auth.py missing" in ok(cli("get", node_id)).stdout

    git(repo, "checkout", "--", "src/auth.py")
    assert statuses() == ["verified"] * 3
    assert "[" not in ok(cli("get", node_id)).stdout.splitlines()[0].split(")", 1)[1]


def test_a_directory_where_the_file_was_is_missing(cli, repo):
    node_id = add(cli, "cache", "--anchor", "src/cache.py")
    (repo / "src" / "cache.py").unlink()
    (repo / "src" / "cache.py").mkdir()
    assert get_json(cli, node_id)["anchor_status"] == "missing"


def test_node_status_is_the_worst_of_its_anchors(cli, repo):
    node_id = add(cli, "both", "--anchor", "src/auth.py", "--anchor", "src/cache.py", "--anchor", "README.md")
    (repo / "src" / "auth.py").write_text("changed\n")
    data = get_json(cli, node_id)
    assert [a["status"] for a in data["anchors"]] == ["stale", "verified", "verified"]
    assert data["anchor_status"] == "stale"
    (repo / "src" / "cache.py").unlink()
    data = get_json(cli, node_id)
    assert [a["status"] for a in data["anchors"]] == ["stale", "missing", "verified"]
    assert data["anchor_status"] == "missing"
    assert ok(cli("get", node_id)).stdout.splitlines()[0].endswith("[missing: src/cache.py]")


def test_line_range_survives_edits_outside_it(cli, repo):
    node_id = add(cli, "token issue", "--anchor", "src/auth.py:2-3")
    path = repo / "src" / "auth.py"

    path.write_text(AUTH.replace("def login(user):", "def login(user, remember=False):"))  # line 1, no shift
    (anchor,) = get_json(cli, node_id)["anchors"]
    assert anchor["status"] == "verified" and "moved_to" not in anchor

    path.write_text("import os\nimport sys\n\n" + path.read_text() + "\n# trailing\n")  # 3 lines above, 2 below
    (anchor,) = get_json(cli, node_id)["anchors"]
    assert anchor == {**anchor, "status": "verified", "lines": [2, 3], "moved_to": [5, 6]}
    assert "- anchor: src/auth.py:2-3 verified (now at lines 5-6" in ok(cli("get", node_id)).stdout

    path.write_text(path.read_text().replace("issue_token(user)", "issue_token(user, ttl=60)"))  # inside
    assert get_json(cli, node_id)["anchor_status"] == "stale"


def test_moved_block_nearest_copy_wins(cli, repo):
    path = repo / "src" / "dup.py"
    path.write_text("a\nX\nY\nb\nc\nd\ne\nX\nY\n")
    node_id = add(cli, "dup", "--anchor", "src/dup.py:8-9")
    path.write_text("new\n" + path.read_text())  # both copies move down by one
    (anchor,) = get_json(cli, node_id)["anchors"]
    assert anchor["moved_to"] == [9, 10]


def test_last_line_without_newline_survives_an_appended_line(cli, repo):
    path = repo / "src" / "tail.py"
    path.write_text("one\ntwo")
    node_id = add(cli, "tail", "--anchor", "src/tail.py:2")
    path.write_text("one\ntwo\nthree\n")
    assert get_json(cli, node_id)["anchor_status"] == "verified"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")  # CRLF conversion: same lines
    assert get_json(cli, node_id)["anchor_status"] == "verified"


def test_a_symlink_redirected_outside_the_project_reads_as_missing(cli, repo):
    (repo / "src" / "real.py").write_text("x = 1\n")
    (repo / "src" / "alias.py").symlink_to(repo / "src" / "real.py")
    node_id = add(cli, "alias", "--anchor", "src/alias.py")
    # Stored resolved, relative to the project.
    assert get_json(cli, node_id)["metadata"]["anchors"][0]["path"] == "src/real.py"
    (repo / "src" / "real.py").unlink()
    outside = repo.parent / "elsewhere.py"
    outside.write_text("x = 1\n")
    (repo / "src" / "real.py").symlink_to(outside)
    assert get_json(cli, node_id)["anchor_status"] == "missing"


# ----------------------------------------------------------------------------- upstream's `anchor`


def test_upstream_anchor_forms_are_read(repo, fake_brain_path):
    data = (repo / "src" / "auth.py").read_bytes()
    with Brain.open(fake_brain_path) as brain:
        brain.project = repo
        hashed = brain.add("go form", metadata={"anchor": {"path": "src/auth.py", "sha256": sha(data)}})
        absolute = brain.add(
            "go form, absolute", metadata={"anchor": {"path": str(repo / "src/auth.py"), "sha256": sha(data)}}
        )
        bare = brain.add("go form, bare path", metadata={"anchor": "src/cache.py"})
        junk = brain.add("junk", metadata={"anchor": 7, "anchors": ["", {"nopath": 1}, 3]})

        def status(i):
            return brain.get(i).node.anchor_status

        assert [status(hashed), status(absolute), status(bare), status(junk)] == [
            "verified",
            "verified",
            "unknown",
            None,
        ]
        (repo / "src" / "auth.py").write_text("changed\n")
        (repo / "src" / "cache.py").unlink()
        assert [status(hashed), status(absolute), status(bare)] == ["stale", "stale", "missing"]


# ----------------------------------------------------------------------------- library


def test_library_anchors_need_a_project(repo, fake_brain_path):
    with Brain.open(fake_brain_path) as brain:
        assert brain.project is None
        with pytest.raises(InvalidInput, match="project"):
            brain.add("x", anchors=["src/auth.py"])
    with Brain.for_project(repo) as brain:
        assert brain.project == repo
        node_id = brain.add("x", anchors=["src/auth.py:1-2"], beads_id="bd-xyz")
        ids = brain.add_many([{"content": "y", "anchors": ["README.md"]}])
        assert brain.get(node_id).node.anchor_status == "verified"
        assert brain.get(ids[0]).node.anchors[0]["path"] == "README.md"
    with Brain.open(fake_brain_path) as brain:  # no project known: nothing to check against
        node = brain.get(node_id).node
        assert node.anchor_status == "unknown" and node.anchors[0]["status"] == "unknown"


def test_reads_never_run_git_and_hash_each_file_once(cli, repo, monkeypatch):
    from cerebro import anchors

    for i in range(3):
        add(cli, f"login fact {i}", "--anchor", "src/auth.py", "--anchor", "src/auth.py:2-3")
    monkeypatch.setattr(anchors, "head_commit", lambda *_: pytest.fail("git ran at read time"))
    loads = []
    real_load = anchors._load
    monkeypatch.setattr(anchors, "_load", lambda path: loads.append(path) or real_load(path))
    data = ok(cli("recall", "login fact", "--format", "json")).json()
    assert len(data["results"]) == 3 and {r["anchor_status"] for r in data["results"]} == {"verified"}
    assert len(loads) == 1
    for command in (("list",), ("recall", "--prime"), ("anchors",), ("get", data["results"][0]["id"])):
        loads.clear()
        ok(cli(*command))
        assert len(loads) == 1, command


# ----------------------------------------------------------------------------- ranking


def _two_twins(repo: Path, brain: Brain) -> tuple[str, str, Path]:
    """Two otherwise-equal memories anchored to different files: (the one recall ranks first on the tie, the
    other, the first one's file). Changing that file must move it below its twin."""
    files = {}
    for name in ("a.py", "b.py"):
        (repo / "src" / name).write_text(f"{name} = 1\n")
        files[brain.add("the session cache expires after ten minutes", type="concept", anchors=[f"src/{name}"])] = name
    first, second = brain.recall("session cache expiry").ids[:2]
    return first, second, repo / "src" / files[first]


@pytest.mark.parametrize(("change", "status", "factor"), [("edit", "stale", 0.8), ("delete", "missing", 0.6)])
def test_recall_ranks_a_changed_anchor_below_its_twin_by_the_factor(repo, pinned, change, status, factor):
    with Brain.for_project(repo) as brain:
        stale, control, path = _two_twins(repo, brain)
        before = {r.node.id: r for r in brain.recall("session cache expiry")}
        assert before[stale].score == before[control].score
        if change == "edit":
            path.write_text("changed = 2\n")
        else:
            path.unlink()
        after = brain.recall("session cache expiry")
    assert after.ids[:2] == [control, stale]
    got = {r.node.id: r for r in after}
    assert got[stale].node.anchor_status == status
    assert got[stale].score == pytest.approx(factor * before[stale].score)
    assert got[stale].fused == pytest.approx(factor * before[stale].fused)
    assert got[stale].parts.anchor == factor and got[stale].parts.score == pytest.approx(got[stale].score)
    assert got[control].score == pytest.approx(before[control].score) and got[control].parts.anchor == 1.0
    assert scoring.anchor_factor(status) == factor


def test_recall_explain_shows_the_factor(cli, repo, pinned):
    with Brain.for_project(repo) as brain:
        stale, _, path = _two_twins(repo, brain)
    path.write_text("changed = 2\n")
    text = ok(cli("recall", "session cache expiry", "--explain")).stdout
    block = next(b for b in text.split("\n\n") if b.startswith(f"## {stale[:8]}"))
    assert f"[stale: src/{path.name} changed]" in block.splitlines()[0]
    assert "anchor×0.80 (stale)" in block
    data = ok(cli("recall", "session cache expiry", "--explain", "--format", "json")).json()
    item = next(r for r in data["results"] if r["id"] == stale)
    assert item["explain"]["components"]["anchor"] == 0.8
    assert item["anchors"] == [
        {"path": f"src/{path.name}", "lines": None, "commit": item["anchors"][0]["commit"], "status": "stale"}
    ]


def test_prime_demotes_and_marks_a_stale_memory(cli, repo, pinned):
    from cerebro.integration.claude_code.hooks import render_prime

    (repo / "src" / "a.py").write_text("A = 1\n")
    (repo / "src" / "b.py").write_text("B = 1\n")
    with Brain.for_project(repo) as brain:
        leader = brain.add(
            "deploys go through the blue green pipeline", type="concept", importance=0.8, anchors=["src/a.py"]
        )
        runner = brain.add(
            "database migrations run before the web tier", type="concept", importance=0.75, anchors=["src/b.py"]
        )
        before = {p.node.id: p for p in brain.prime()}
        assert next(p.node.id for p in brain.prime()) == leader
        (repo / "src" / "a.py").write_text("A = 2\n")
        primed = brain.prime()
    assert next(p.node.id for p in primed) == runner
    after = {p.node.id: p for p in primed}
    assert after[leader].score == pytest.approx(0.8 * before[leader].score)
    assert after[runner].score == pytest.approx(before[runner].score)
    assert after[leader].node.anchor_status == "stale"
    text, _ = render_prime(primed, 2, 2000, "")
    openings = {line.split('id="')[1][:8]: line for line in text.splitlines() if line.startswith("<memory-")}
    assert 'type="concept" importance="0.80"' in openings[leader[:8]]
    assert openings[leader[:8]].endswith('anchor="stale: src/a.py changed">')
    assert 'importance="0.75"' in openings[runner[:8]] and "anchor=" not in openings[runner[:8]]
    md = ok(cli("recall", "--prime")).stdout
    assert f"## {leader[:8]} [concept]" in md and "[stale: src/a.py changed]" in md
    data = ok(cli("recall", "--prime", "--format", "json")).json()
    assert {r["id"]: r.get("anchor_status") for r in data["results"]} == {leader: "stale", runner: "verified"}


# ----------------------------------------------------------------------------- cerebro anchors


def test_anchors_command_lists_and_filters(cli, repo):
    verified = add(cli, "cache fact", "--anchor", "src/cache.py")
    stale = add(cli, "auth fact", "--anchor", "src/auth.py:2-3")
    missing = add(cli, "readme fact", "--anchor", "README.md")
    add(cli, "no anchor here")
    (repo / "src" / "auth.py").write_text("rewritten\n")
    (repo / "README.md").unlink()

    everything = ok(cli("anchors", "--format", "json")).json()["memories"]
    assert [m["id"] for m in everything] == [missing, stale, verified]
    only = ok(cli("anchors", "--stale", "--format", "json")).json()["memories"]
    assert [(m["id"], m["anchor_status"]) for m in only] == [(missing, "missing"), (stale, "stale")]
    assert [m["id"] for m in ok(cli("anchors", "--stale", "--limit", "1", "--format", "json")).json()["memories"]] == [
        missing
    ]

    md = ok(cli("anchors", "--stale")).stdout
    assert md.splitlines()[0].endswith("[missing: README.md]")
    assert "- anchor: src/auth.py:2-3 stale" in md and verified[:8] not in md

    git(repo, "checkout", "--", ".")
    assert ok(cli("anchors", "--stale", "--format", "json")).json() == {"memories": []}
    assert ok(cli("anchors", "--stale")).stdout.strip() == "No stale or missing anchors."
    assert_one_line_error(cli("anchors", "--limit", "0"), exit_code=2)


def test_nothing_is_changed_at_read_time(cli, repo, fake_brain_path):
    add(cli, "auth fact", "--anchor", "src/auth.py")
    (repo / "src" / "auth.py").unlink()
    before = snapshot(fake_brain_path)
    for command in (("anchors", "--stale"), ("list",)):
        ok(cli(*command))
    assert snapshot(fake_brain_path) == before


def test_adjacency_lends_a_stale_results_demoted_value_and_demotes_a_stale_neighbour(repo, pinned):
    """ADR 0033 after ADR 0018: what a result lends is its value after its anchor factor, and a memory brought along
    pays its own factor too."""
    for name in ("a.py", "b.py"):
        (repo / "src" / name).write_text(f"{name} = 1\n")
    with Brain.for_project(repo) as brain:
        hit = brain.add("walrus tusk ivory arctic", anchors=["src/a.py"])
        beside = brain.add("ivory zulu", anchors=["src/b.py"])  # related to the hit, nothing to do with the query

        def fused() -> tuple[float, float]:
            got = {r.node.id: r for r in brain.recall("walrus tusk")}
            assert got[beside].lanes == {"adjacent": 1}
            return got[hit].fused, got[beside].fused

        hit_value, lent = fused()
        assert lent == pytest.approx(0.4 * hit_value)
        (repo / "src" / "a.py").write_text("changed = 2\n")
        stale_hit, lent = fused()
        assert stale_hit == pytest.approx(0.8 * hit_value) and lent == pytest.approx(0.4 * stale_hit)
        (repo / "src" / "b.py").write_text("changed = 2\n")
        stale_hit, lent = fused()
        assert lent == pytest.approx(0.8 * 0.4 * stale_hit)
