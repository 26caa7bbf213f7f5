"""Team sync (issue 20, ADR 0031): two laptops' brain files share memories through one team brain on PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cerebro import Brain, clock
from cerebro.brain import exports
from cerebro.values import Origin

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
SHARED = {"shared": True}


@pytest.fixture
def machines(tmp_path, team_url):
    """Two laptops (brain files on the fake model) and their project's team brain."""
    clock.set_now(T0)
    Brain.init(team_url, embed_provider="fake", team_project="acme")
    opened = []
    for name in ("laptop-a", "laptop-b"):
        Brain.init(tmp_path / f"{name}.sqlite", embed_provider="fake")
        opened.append(Brain.open(tmp_path / f"{name}.sqlite"))
    opened.append(Brain.open(team_url, team_project="acme"))
    yield tuple(opened)
    for brain in opened:
        brain.close()
    clock.set_now(None)


def _memories(brain: Brain) -> dict[str, tuple]:
    """What a user sees of each memory: its id → (content, type, subtype, status, importance, metadata, created,
    updated, provenance root, origin)."""
    return {
        n.id: (
            n.content,
            n.type,
            n.subtype,
            n.status,
            n.importance,
            n.metadata,
            n.created_at,
            n.updated_at,
            n.provenance_root,
            n.origin,
        )
        for n in brain.list(status=None, limit=1000)
    }


def _edges(brain: Brain) -> set[tuple]:
    found = set()
    for node_id in _memories(brain):
        for edge in brain.get(node_id).edges:
            found.add((edge.source_id, edge.target_id, edge.relation, edge.weight, edge.valid_at, edge.invalid_at))
    return found


def _story(laptop: Brain) -> dict[str, str]:
    """A small shared history: a decision derived from two observations, one superseded, plus a private note."""
    origin = Origin("claude-code", "cli", "s-1", "laptop-a")
    seen = laptop.add("deploys fail when the VPN drops", metadata=SHARED, origin=origin)
    also = laptop.add("the VPN drops every night at 02:00", metadata=SHARED, origin=origin)
    decision = laptop.add(
        "deploy only between 08:00 and 20:00", type="concept", subtype="decision", metadata=SHARED, origin=origin
    )
    laptop.add_edge(decision, seen, "derived_from")
    laptop.add_edge(decision, also, "derived_from", weight=0.5)
    old = laptop.add("the staging database is MySQL", type="concept", metadata=SHARED, origin=origin)
    clock.set_now(T0.replace(hour=10))
    new = laptop.supersede(old, "the staging database is PostgreSQL 18", metadata=SHARED)
    private = laptop.add("my own scratch note about lunch")
    return {"seen": seen, "also": also, "decision": decision, "old": old, "new": new, "private": private}


def test_a_round_trip_through_the_team_brain_keeps_everything_that_was_shared(machines) -> None:
    a, b, team = machines
    story = _story(a)
    pushed = a.team_push(team)
    assert pushed.written == 5 and pushed.considered == 5  # the private note stays on the laptop
    pulled = b.team_pull(team)
    assert pulled.written == 5
    shared = {k: v for k, v in _memories(a).items() if k != story["private"]}
    assert _memories(team) == shared
    assert _memories(b) == shared
    assert _edges(b) == _edges(team) == _edges(a)
    assert b.get(story["old"]).node.status == "superseded"
    assert b.provenance_status([story["decision"]]) == a.provenance_status([story["decision"]])
    assert b.recall("deploy only between", lanes=("vector",)).ids[:1] == [story["decision"]]  # embedded on arrival


def test_a_second_run_changes_nothing(machines) -> None:
    a, b, team = machines
    _story(a)
    a.team_push(team)
    b.team_pull(team)
    before = (_memories(team), _edges(team), _memories(b), _edges(b))
    again = a.team_push(team), b.team_pull(team)
    assert [(r.written, r.edges, r.archived) for r in again] == [(0, 0, 0), (0, 0, 0)]
    assert (_memories(team), _edges(team), _memories(b), _edges(b)) == before


def test_the_later_version_wins_either_way(machines) -> None:
    a, b, team = machines
    story = _story(a)
    a.team_push(team)
    b.team_pull(team)
    clock.set_now(T0.replace(hour=12))
    b.update(story["decision"], content="deploy only between 09:00 and 18:00")
    assert b.team_push(team, everything=True).written == 1
    # Laptop a still has the older version: pushing it does not overwrite the newer one…
    assert a.team_push(team).written == 0
    assert team.get(story["decision"]).node.content == "deploy only between 09:00 and 18:00"
    # … and pulling brings the newer one to it.
    assert a.team_pull(team).written == 1
    assert a.get(story["decision"]).node.content == "deploy only between 09:00 and 18:00"


def test_a_memory_archived_on_one_laptop_leaves_the_team_and_the_other(machines) -> None:
    a, b, team = machines
    story = _story(a)
    a.team_push(team)
    b.team_pull(team)
    clock.set_now(T0.replace(hour=15))
    a.forget("every night at 02:00", apply=True)
    assert a.team_push(team, everything=False).archived == 1
    assert story["also"] not in {n.id for n in team.list(status=None, limit=100)}
    assert b.team_pull(team).archived == 1
    assert story["also"] not in {n.id for n in b.list(status=None, limit=100)}
    assert [r.node.id for r in b.recall("VPN drops every night")].count(story["also"]) == 0


def test_a_supersession_and_a_consolidation_after_the_first_sync_travel(machines) -> None:
    """Both changed a memory's status without a new version: the next push wrote nothing, the team and the other
    laptop kept recalling the old fact as active (and the replacement, not marked shared, was never sent)."""
    a, b, team = machines
    story = _story(a)
    episode = a.add("the 02:00 drop lasts ten minutes", metadata=SHARED)
    a.team_push(team)
    b.team_pull(team)
    clock.set_now(T0.replace(hour=13))
    newest = a.supersede(story["new"], "the staging database is PostgreSQL 18.1")  # no --share: inherited
    a.consolidate(story["decision"], [episode])
    pushed = a.team_push(team)
    assert pushed.written == 3  # the superseded one, its replacement, the consolidated episode
    assert b.team_pull(team).written == 3
    for brain in (team, b):
        assert brain.get(story["new"]).node.status == "superseded"
        assert brain.get(newest).node.content == "the staging database is PostgreSQL 18.1"
        assert brain.get(episode).node.status == "consolidated"
    assert a.get(newest).node.metadata == {"shared": True}


def test_a_memory_forgotten_here_does_not_come_back_from_an_older_copy(machines) -> None:
    """The rule compared versions with the memories alone: one archived on the target looked new, and any older copy
    — a pull from the team, a push from a laptop that had not pulled — brought it back active."""
    a, b, team = machines
    story = _story(a)
    a.team_push(team)
    b.team_pull(team)
    clock.set_now(T0.replace(hour=15))
    a.forget("every night at 02:00", apply=True)
    assert a.team_pull(team).written == 0  # the team's copy is older than the forgetting
    assert story["also"] not in {n.id for n in a.list(status=None, limit=100)}
    a.team_push(team)
    assert b.team_push(team, everything=True).written == 0  # b has not pulled: its copy is the older one
    assert story["also"] not in {n.id for n in team.list(status=None, limit=100)}
    clock.set_now(T0.replace(hour=16))
    b.update(story["also"], content="the VPN drops every night at 03:00")  # edited after the forgetting: a newer one
    assert b.team_push(team, everything=True).written == 1
    assert team.get(story["also"]).node.content == "the VPN drops every night at 03:00"
    with team.handle.snapshot() as conn:  # active again, and out of the archive: one row of it, not two
        assert team.handle.store.reads.rows(conn, "nodes_archive", ["id"], "id") == []


def test_an_interrupted_run_resumes_where_it_stopped(machines, monkeypatch) -> None:
    a, _, team = machines
    ids = [a.add(f"shared memory number {i}", metadata=SHARED) for i in range(7)]
    real = exports.import_records
    calls = []

    def power_cut_on_the_third_batch(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("power cut")
        return real(*args, **kwargs)

    monkeypatch.setattr(exports, "import_records", power_cut_on_the_third_batch)
    from cerebro.brain import sync

    with pytest.raises(RuntimeError, match="power cut"):
        sync.push(a.handle, team.handle, batch=2)
    assert len({n.id for n in team.list(limit=100)}) == 4  # two whole batches, nothing of the third
    monkeypatch.setattr(exports, "import_records", real)
    resumed = sync.push(a.handle, team.handle, batch=2)
    assert (resumed.written, resumed.unchanged) == (3, 4)
    assert {n.id for n in team.list(limit=100)} == set(ids)


def test_two_project_folders_share_through_the_team_commands(cli, team_url, project, tmp_path) -> None:
    from tests.helpers import assert_one_line_error

    other = tmp_path / "laptop-b"
    other.mkdir()
    for folder in (project, other):
        assert cli("init", "--skip-integration", "--embed-provider", "fake", project_dir=folder).exit_code == 0
    assert_one_line_error(cli("team", "push"), "team connect", exit_code=2)  # not connected yet
    connected = cli("--format", "json", "team", "connect", team_url, "--team-project", "acme")
    assert connected.json() == {"team": connected.json()["team"], "team_project": "acme", "created": True}
    shared = cli("--format", "json", "add", "--share", "staging deploys need the VPN").json()
    cli("add", "a private note")
    assert cli("--format", "json", "team", "push").json()["written"] == 1
    assert cli("team", "connect", team_url, "--team-project", "acme", project_dir=other).exit_code == 0
    pulled = cli("--format", "json", "team", "pull", project_dir=other).json()
    assert (pulled["direction"], pulled["written"], pulled["considered"]) == ("pull", 1, 1)
    found = cli("--format", "json", "recall", "staging deploys VPN", project_dir=other).json()["results"]
    assert [r["id"] for r in found] == [shared["id"]]
    assert cli("--format", "json", "team", "pull", project_dir=other).json()["written"] == 0


def test_recall_team_merges_the_team_brain_as_the_projects_own(cli, team_url, project) -> None:
    from tests.helpers import assert_one_line_error

    assert cli("init", "--skip-integration", "--embed-provider", "fake").exit_code == 0
    assert_one_line_error(cli("recall", "--team", "deploy"), "team connect", exit_code=2)
    assert_one_line_error(cli("recall", "--team", "--global", "deploy"), "one other brain", exit_code=2)
    assert cli("team", "connect", team_url, "--team-project", "acme").exit_code == 0
    mine = cli("--format", "json", "add", "--metadata", '{"shared": true}', "deploy needs the VPN").json()["id"]
    assert cli("team", "push").exit_code == 0
    with Brain.open(team_url, team_project="acme") as team:
        theirs = team.add("deploy window is 08:00 to 20:00")
    found = cli("--format", "json", "recall", "--team", "deploy", "--with-provenance").json()["results"]
    assert sorted((r["id"], r["store"]) for r in found) == sorted([(mine, "project"), (theirs, "team")])
    with Brain.open(team_url, team_project="acme") as team:
        assert team.get(theirs).node.access_count == 1  # the team brain counted its memory's use
    plain = cli("--format", "json", "recall", "deploy").json()["results"]
    assert [r["id"] for r in plain] == [mine] and "store" not in plain[0]


def test_add_share_marks_a_memory_for_push_keeping_its_other_metadata(cli, project) -> None:
    from tests.helpers import assert_one_line_error

    assert cli("init", "--skip-integration", "--embed-provider", "none").exit_code == 0
    node = cli("--format", "json", "add", "--share", "--metadata", '{"k": 1}', "a shared note").json()["id"]
    assert cli("--format", "json", "get", node).json()["metadata"] == {"k": 1, "shared": True}
    plain = cli("--format", "json", "add", "a private note").json()["id"]
    assert not cli("--format", "json", "get", plain).json()["metadata"]  # nothing marked
    assert_one_line_error(cli("add", "--share", "--metadata", "{not json", "x"), "metadata", exit_code=2)


def test_promote_team_shares_one_memory_now_under_its_own_id(cli, team_url, project, brain_snapshot) -> None:
    from cerebro import paths
    from tests.helpers import assert_one_line_error

    clock.set_now(T0)
    assert cli("init", "--skip-integration", "--embed-provider", "fake").exit_code == 0
    lesson = cli("--format", "json", "add", "--type", "concept", "retry the flaky parser test once").json()["id"]
    other = cli("--format", "json", "add", "a private note about lunch").json()["id"]
    assert cli("edge", lesson, other, "relates_to").exit_code == 0
    assert_one_line_error(cli("promote", lesson, "--team"), "team connect", exit_code=2)
    assert cli("team", "connect", team_url, "--team-project", "acme").exit_code == 0
    before = brain_snapshot(paths.project_brain_path(project))
    assert_one_line_error(cli("promote", lesson, "a generalised lesson", "--team"), "global brain", exit_code=2)
    assert brain_snapshot(paths.project_brain_path(project)) == before  # refused: nothing written

    done = cli("--format", "json", "promote", lesson[:8], "--team").json()
    assert done["id"] == lesson and done["push"]["written"] == 1
    assert cli("--format", "json", "get", lesson).json()["metadata"] == {"shared": True}
    with Brain.open(team_url, team_project="acme") as team:
        assert [(n.id, n.content) for n in team.list()] == [(lesson, "retry the flaky parser test once")]
        assert team.get(lesson).edges == []  # the private note stays home, and the edge to it
    assert cli("--format", "json", "promote", lesson, "--team").json()["push"]["written"] == 0  # already there
    clock.set_now(T0.replace(hour=10))
    assert cli("update", lesson, "--content", "retry the flaky parser test once, then quarantine it").exit_code == 0
    assert cli("--format", "json", "team", "push").json()["written"] == 1  # marked shared: later versions go too
    with Brain.open(team_url, team_project="acme") as team:
        assert team.get(lesson).node.content == "retry the flaky parser test once, then quarantine it"


def test_promote_team_on_a_team_brain_is_refused(cli, team_url, project) -> None:
    from tests.helpers import assert_one_line_error

    assert cli("init", "--store", team_url, "--team-project", "acme", "--embed-provider", "none").exit_code == 0
    node = cli("--format", "json", "add", "already the team's").json()["id"]
    assert cli("team", "connect", team_url, "--team-project", "acme").exit_code == 0
    assert_one_line_error(cli("promote", node, "--team"), "team brain itself", exit_code=2)


def test_a_push_reports_the_secrets_of_what_it_writes_only(machines) -> None:
    """Every push sends every shared memory: the team brain redacted a kept secret's text each time and said so
    each time ("redacted 2 secrets"), though it wrote nothing. A memory archived since counts once, with its row."""
    a, _, team = machines
    warnings: list[str] = []
    team.on_warning = warnings.append
    a.config_set("redact_secrets", "false")  # this laptop keeps its secrets; the team brain does not
    a.add("the staging key is AKIAQX3NZ7VGLD5KPW2M", metadata=SHARED)
    a.add("the old key was AKIAQX3NZ7VGLD5KPW3N", metadata=SHARED)
    a.team_push(team)
    assert warnings == ["redacted 2 secrets before storing (aws-access-key ×2)"]
    a.team_push(team)
    assert len(warnings) == 1
    clock.set_now(T0.replace(hour=15))
    a.forget("the old key was", apply=True)
    assert a.team_push(team).archived == 1
    assert warnings[1:] == ["redacted 1 secret before storing (aws-access-key)"]
    a.team_push(team)
    assert len(warnings) == 2
    assert {n.content for n in team.list(status=None, limit=10)} == {"the staging key is [secret:aws-access-key]"}
