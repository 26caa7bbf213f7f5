"""The Python API's surface: every public ``Brain`` member's signature, as users call it, pinned in
``brain_api.txt``. A change here is a change for every caller: edit the file on purpose, with a CHANGELOG line."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from cerebro import Brain

API_FILE = Path(__file__).with_name("brain_api.txt")
# Made by open/init/for_project, not by callers: its parameters are the library's own business.
CONSTRUCTION = "__init__"
ATTRIBUTES = {"path": False, "project": True, "upgrade_backup": False, "on_warning": True, "on_vectors_written": True}


def public_api() -> list[str]:
    lines = []
    for name in sorted(dir(Brain)):
        if name.startswith("_") and name not in ("__enter__", "__exit__"):
            continue
        member = inspect.getattr_static(Brain, name)
        if isinstance(member, property):
            lines.append(f"{name}: property{' (settable)' if member.fset else ''}")
        elif isinstance(member, classmethod):
            lines.append(f"{name}: classmethod{inspect.signature(member.__func__)}")
        else:
            lines.append(f"{name}{inspect.signature(member)}")
    return lines


def test_every_public_method_keeps_its_signature() -> None:
    expected = [line for line in API_FILE.read_text().splitlines() if line and not line.startswith("#")]
    assert public_api() == expected


def test_every_public_methods_type_hints_resolve_and_load_the_reports_only_then() -> None:
    """Tools that read annotations (typing.get_type_hints: documentation, validators) see real types; the report
    classes they name load when asked for, not when cerebro.api is imported by a hook (ADR 0036)."""
    import subprocess
    import sys

    code = (
        "import inspect, sys, typing\n"
        "from cerebro.api import Brain\n"
        "before = 'cerebro.reports' in sys.modules\n"
        "for name, member in vars(Brain).items():\n"
        "    function = member.__func__ if isinstance(member, classmethod) else member\n"
        "    if inspect.isfunction(function) and not name.startswith('_'):\n"
        "        hints = typing.get_type_hints(function)\n"
        "        assert all(isinstance(h, type) or typing.get_origin(h) for h in hints.values()), (name, hints)\n"
        "from cerebro.reports import Stats\n"
        "assert typing.get_type_hints(Brain.stats)['return'] is Stats\n"
        "print(before)\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "False"


def test_the_public_attributes_are_there_and_the_settable_ones_take_a_value(tmp_path: Path) -> None:
    Brain.init(tmp_path / "b.db", embed_provider="none")
    with Brain.open(tmp_path / "b.db") as brain:
        assert brain.path == tmp_path / "b.db"
        assert brain.project is None and brain.upgrade_backup is None and brain.on_vectors_written is None
        for name, settable in ATTRIBUTES.items():
            if settable:
                value = object()
                setattr(brain, name, value)
                assert getattr(brain, name) is value


def test_purging_a_brain_that_is_not_there_is_refused_and_makes_nothing(tmp_path: Path, isolated_home: Path) -> None:
    from cerebro.errors import BrainNotFound

    missing = tmp_path / "gone.db"
    with pytest.raises(BrainNotFound) as refused:
        Brain.purge(missing)
    assert str(refused.value) == f"no brain at {missing}: nothing to purge"
    assert not missing.exists() and not (isolated_home / "backups").exists()


def test_a_brain_is_never_created_for_a_folder_that_does_not_exist(tmp_path: Path, isolated_home: Path) -> None:
    from cerebro import Brain
    from cerebro.errors import InvalidInput

    before = sorted(p.relative_to(isolated_home) for p in isolated_home.rglob("*"))
    with pytest.raises(InvalidInput, match="does not exist"):
        Brain.for_project(tmp_path / "no-such-folder", create=True)
    assert sorted(p.relative_to(isolated_home) for p in isolated_home.rglob("*")) == before
    with Brain.for_project(tmp_path, create=True) as brain:  # an existing folder gets its brain
        assert brain.active_count() == 0


def test_create_for_project_initialises_once_and_opens(tmp_path: Path, isolated_home: Path) -> None:
    from cerebro import Brain, paths
    from cerebro.errors import InvalidInput

    with Brain.create_for_project(tmp_path, embed_provider="none") as brain:
        assert brain.project == tmp_path and brain.path == paths.project_brain_path(tmp_path)
        memory = brain.add("made from Python")
        assert brain.stats().embedding_provider == "none"
    with Brain.create_for_project(tmp_path) as again:  # an existing brain is kept as it is, settings included
        assert again.get(memory).node.content == "made from Python"
        assert again.stats().embedding_provider == "none"
    with pytest.raises(InvalidInput, match="does not exist"):
        Brain.create_for_project(tmp_path / "missing")


def test_active_count_counts_active_memories_only(fake_brain) -> None:
    first, _ = fake_brain.add("one"), fake_brain.add("two")
    fake_brain.supersede(first, "one, again")  # one superseded, its replacement active
    fake_brain.inbox_add("a candidate is not a memory yet")
    assert fake_brain.active_count() == 2 == fake_brain.stats().active_nodes
