"""Executable architecture rules: layers point one way, and ``import cerebro`` stays cheap."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "cerebro"

LEAVES = {
    "errors",
    "values",
    "reports",
    "clock",
    "paths",
    "config",
    "logs",
    "retry",
    "cli_state",
    "redaction",
    "onnx_wire",
    "process",
}
# module prefix → prefixes it must never import
FORBIDDEN = {
    "cerebro.store": ("cerebro.api", "cerebro.cli"),
    "cerebro.db": ("cerebro.api", "cerebro.cli", "cerebro.store"),
    "cerebro.models": ("cerebro.api", "cerebro.cli", "cerebro.store", "cerebro.db"),
    "cerebro.embed": ("cerebro.api", "cerebro.cli", "cerebro.store"),
    "cerebro.api": ("cerebro.cli",),
    "cerebro.brain": ("cerebro.cli", "cerebro.api"),
    "cerebro.recall": ("cerebro.cli", "cerebro.api", "cerebro.brain"),
    "cerebro.prime": ("cerebro.cli", "cerebro.api", "cerebro.brain"),
    "cerebro.scoring": ("cerebro.cli", "cerebro.api", "cerebro.brain", "cerebro.store", "cerebro.db"),
    "cerebro.mcp": ("cerebro.cli", "cerebro.integration"),
    # The command line and the agent integrations go through the library (cerebro.Brain), never around it.
    "cerebro.cli": ("cerebro.store", "cerebro.db"),
    "cerebro.integration": ("cerebro.store", "cerebro.db"),
    **{
        f"cerebro.{leaf}": ("cerebro.api", "cerebro.cli", "cerebro.store", "cerebro.db", "cerebro.models")
        for leaf in LEAVES
    },
}


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_layers_point_one_way() -> None:
    violations = []
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        for prefix, banned in FORBIDDEN.items():
            if module == prefix or module.startswith(prefix + "."):
                for imported in _imports(path):
                    if any(imported == b or imported.startswith(b + ".") for b in banned):
                        violations.append(f"{module} imports {imported}")
    assert violations == []


# Outside store/ and db/, the store is reached through its interface (cerebro.store.interface, types only)
# and the store object a brain's handle carries — so a second engine implements the interface instead of
# touching the domain. Modules that may name the SQLite store itself, and why:
SQLITE_STORE_USERS = {
    "cerebro.brain.handle": "binds a brain file to the SQLite store, and keeps its warm vector index",
    "cerebro.brain.registry": "lists the SQLite brain files under CEREBRO_HOME without opening them as brains",
    "cerebro.doctor.brain": "examines a SQLite brain file",
    "cerebro.doctor.embedder": "reads the embedding settings of a SQLite brain file",
    "cerebro.mcp.server": "preloads the store modules before the first call",
    "cerebro.mcp.warm": "keeps a server's warm vector index (an in-memory copy of the SQLite vector lane)",
}


def test_the_domain_reaches_the_store_through_its_interface() -> None:
    violations = []
    for path in PACKAGE.rglob("*.py"):
        module = _module_name(path)
        if module.startswith(("cerebro.store", "cerebro.db")):
            continue
        for imported in _imports(path):
            if not imported.startswith("cerebro.store."):
                continue
            part = imported.split(".")[2]
            # connectors: the way in, which picks the engine (a brain file, or a team database) and so its store
            if part in ("interface", "connectors") or (module in SQLITE_STORE_USERS and part in ("sqlite", "warm")):
                continue
            violations.append(f"{module} imports {imported}")
    assert violations == []


# The front ends own the terminal; the library reports through cerebro.logs (ADR 0024).
FRONT_ENDS = ("cerebro.cli", "cerebro.integration", "cerebro.mcp", "cerebro.logs", "cerebro.__main__")


def _writes_to_the_terminal(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Name) and func.id == "print") or (
            isinstance(func, ast.Attribute)
            and func.attr == "write"
            and isinstance(func.value, ast.Attribute)
            and func.value.attr in ("stdout", "stderr")
        ):
            lines.append(node.lineno)
    return lines


def test_the_library_never_prints() -> None:
    found = [
        f"{_module_name(path)}:{line}"
        for path in PACKAGE.rglob("*.py")
        if not _module_name(path).startswith(FRONT_ENDS)
        for line in _writes_to_the_terminal(path)
    ]
    assert found == []


def test_the_print_rule_sees_a_print(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import sys\nprint('x')\nsys.stderr.write('y')\nsys.stdout.write('z')\n")
    assert _writes_to_the_terminal(module) == [2, 3, 4]


def test_import_cerebro_is_cheap() -> None:
    code = (
        "import sys, cerebro; cerebro.__version__; "
        "heavy = [m for m in ('sqlalchemy', 'sqlmodel', 'alembic', 'cyclopts', 'structlog', 'onnxruntime') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_add_recall_and_prime_do_not_import_the_orm(project: Path) -> None:
    """The commands an agent runs all day pay no SQLAlchemy/SQLModel import (~290 ms of CPU): recall and prime
    read raw, and a new memory is written raw (ADR 0028)."""
    from cerebro import Brain, paths

    Brain.init(paths.project_brain_path(project), embed_provider="none")
    code = (
        "import sys, io, contextlib\n"
        "from cerebro.cli.app import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for args in (['add', 'the deploy needs AWS_REGION', '--type', 'procedure', '--importance', '0.7'],\n"
        "                 ['recall', 'deploy region'], ['recall', '--prime']):\n"
        f"        assert run([*args, '-p', {str(project)!r}]) == 0, args\n"
        "print([m for m in ('sqlalchemy', 'sqlmodel', 'alembic') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    with Brain.open(paths.project_brain_path(project)) as brain:
        assert [(n.content, n.type, n.importance) for n in brain.list()] == [
            ("the deploy needs AWS_REGION", "procedure", 0.7)
        ]


def test_cli_help_does_not_import_the_orm() -> None:
    code = (
        "import sys; from cerebro.cli.app import run; run(['--help']); "
        "print('MODULES', [m for m in ('sqlalchemy', 'sqlmodel', 'alembic') if m in sys.modules], file=sys.stderr)"
    )
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    assert "MODULES []" in err


MAX_MODULE_LINES = 400
# The only modules allowed past the cap, each with its reason and a ceiling it may not grow past.
LONGER_MODULES = {
    "api.py": (630, "the public face: one short delegation per public method, each with its signature pinned"),
    "store/interface.py": (500, "the whole store interface in one place, one Protocol per part"),
}


def test_modules_stay_small() -> None:
    too_long = {}
    for path in PACKAGE.rglob("*.py"):
        name = str(path.relative_to(PACKAGE))
        lines = len(path.read_text().splitlines())
        if lines > LONGER_MODULES.get(name, (MAX_MODULE_LINES, ""))[0]:
            too_long[name] = lines
    assert too_long == {}


# SQL lives in the storage layers: the brain's store and engine, the metrics database's own store and schema,
# and the migrations. A statement anywhere else is a storage detail leaking into the domain.
SQL_HOMES = (
    "cerebro/store/",
    "cerebro/db/",
    "cerebro/metrics/store.py",
    "cerebro/metrics/schema.py",
    "cerebro/metrics/migrations/",
)
_SQL = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|ROLLBACK|REPLACE|WITH)\b")


def _sql_strings(path: Path) -> list[tuple[int, str]]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
            text = node.values[0].value
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        else:
            continue
        if isinstance(text, str) and _SQL.match(text):
            found.add((node.lineno, text[:50]))  # an f-string's first part is also walked as a Constant
    return sorted(found)


def test_sql_stays_in_the_storage_layers() -> None:
    leaks = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE.parent))
        if not relative.startswith(SQL_HOMES) and (found := _sql_strings(path)):
            leaks[relative] = found
    assert leaks == {}


def test_the_sql_rule_sees_a_statement(tmp_path: Path) -> None:
    # The rule above is only as good as its detector: a plain and an f-string statement are both caught.
    source = 'q = "SELECT id FROM nodes"\nr = f"  DELETE FROM edges WHERE id = {1}"\ns = "selected nodes"\n'
    probe = tmp_path / "probe.py"
    probe.write_text(source)
    assert [line for line, _ in _sql_strings(probe)] == [1, 2]


def test_every_error_lives_in_errors_py_with_an_exit_code_of_its_own() -> None:
    """A script tells failures apart by exit code alone: two errors must never share one (a subclass that
    refines its parent's meaning, such as AmbiguousId under InvalidInput, keeps the parent's)."""
    import importlib
    import inspect

    from cerebro import errors

    for path in PACKAGE.rglob("*.py"):
        if "migrations" in path.parts or path.name == "__main__.py":
            continue
        importlib.import_module(_module_name(path))
    classes = set(_subclasses(errors.CerebroError))
    assert {cls.__module__ for cls in classes} == {"cerebro.errors"}
    own = {
        cls.__name__: cls.__dict__["exit_code"]
        for cls in classes | {errors.CerebroError}
        if "exit_code" in cls.__dict__
    }
    assert len(set(own.values())) == len(own), own
    readme = (PACKAGE.parent / "README.md").read_text()
    section = readme.split("### Exit codes", 1)[1].split("###", 1)[0]
    for code in own.values():
        assert f"`{code}`" in section, f"exit code {code} not in README"
        assert f"`{errors.exit_name(code)}`" in section, f"the name of exit code {code} not in README"
    assert inspect.getmodule(errors.EmbeddingError) is errors


def _subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def test_the_session_start_prime_path_imports_no_orm(tmp_path: Path) -> None:
    """What the SessionStart hook asks of a brain with memories in it — prime, the active count, the token
    budget, the surfaced stamps — runs on the raw connection: the ORM's import would cost the hook ~250 ms."""
    from cerebro import Brain

    path = tmp_path / "b.db"
    Brain.init(path, embed_provider="none")
    with Brain.open(path) as brain:
        brain.add("a concept worth priming", type="concept")
    code = (
        "import sys; from cerebro.api import Brain; b = Brain.open(sys.argv[1]); primed = b.prime(); "
        "assert primed and b.active_count() == 1 and b.config_value('prime_token_budget') > 0; "
        "b.touch_surfaced([p.node.id for p in primed]); "
        "print([m for m in ('sqlalchemy', 'sqlmodel', 'alembic', 'numpy', 'onnxruntime') if m in sys.modules])"
    )
    ran = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "[]"


def test_the_hooks_and_prime_leave_out_what_they_do_not_use(project: Path) -> None:
    """Every hook call pays its whole start-up, on every prompt (ADR 0036): the has-brain probe defines no frozen values
    (~2 ms each on a slow machine), prime and the SessionStart hook no operation reports, and none of them loads the
    secret patterns, the modules a write needs (socket) or a nonce once needed (secrets), logging (never used
    unless something warns), the standard library's second SQLite (sqlite3: the sqlean driver is the one used) or
    subprocess (the session-start hook looks for pending end-of-session work; it starts a worker only when some is
    left) — nor the Brain facade's other modules, hashlib's OpenSSL or the export module (ADR 0053), nor the
    end-of-session worker's module when nothing is pending."""
    from cerebro import Brain, paths

    Brain.init(paths.project_brain_path(project), embed_provider="none")
    with Brain.for_project(project) as brain:
        brain.add("a concept worth priming", type="concept")
    (paths.aftercare_dir() / "pending").mkdir(parents=True)  # as an earlier session's end left it: nothing pending
    event = {"session_id": "s1", "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    code = (
        "import contextlib, io, json, sys\n"
        "from cerebro.cli.app import run\n"
        "watched = ('cerebro.values', 'cerebro.reports', 'cerebro.redaction', 'secrets', 'socket', 'logging',"
        " 'sqlite3', 'subprocess', 'cerebro.api', 'hashlib', 'cerebro.brain.exports', 'cerebro.portability',"
        " 'cerebro.integration.claude_code.aftercare')\n"
        "seen = []\n"
        "for args in (['hook', 'has-brain'], ['recall', '--prime'], ['hook', 'prime', '--event', 'sessionstart']):\n"
        f"    sys.stdin = io.StringIO({json.dumps(event)!r})\n"
        "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "        assert run(args) == 0, args\n"
        "    assert args[0] != 'recall' or 'worth priming' in out.getvalue()\n"
        "    seen.append([m for m in watched if m in sys.modules])\n"
        "print(json.dumps(seen))\n"
    )
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=project, check=False
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(ran.stdout) == [[], ["cerebro.values"], ["cerebro.values"]]


def test_recall_prime_decodes_no_json_when_no_memory_carries_metadata(project: Path) -> None:
    """JSON is imported where metadata or a JSON output needs it: `recall --prime`'s text output over memories without
    metadata does without the module (~1.5 ms of every prime)."""
    from cerebro import Brain, paths

    Brain.init(paths.project_brain_path(project), embed_provider="none")
    with Brain.for_project(project) as brain:
        brain.add("a concept worth priming", type="concept")
    code = (
        "import contextlib, io, sys\n"
        "from cerebro.cli.app import run\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    assert run(['recall', '--prime']) == 0\n"
        "assert 'worth priming' in out.getvalue()\n"
        "print('json' in sys.modules)\n"
    )
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    ran = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=project, check=False
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.strip() == "False"


def test_every_environment_variable_cerebro_reads_is_in_the_readme() -> None:
    """A knob nobody can find is a knob nobody can use (issue 16)."""
    readme = (PACKAGE.parent / "README.md").read_text()
    read = set()
    for path in PACKAGE.rglob("*.py"):
        read.update(re.findall(r"[\"'](CEREBRO_[A-Z_]+)[\"']", path.read_text()))
    assert read and sorted(name for name in read if f"`{name}`" not in readme) == []
