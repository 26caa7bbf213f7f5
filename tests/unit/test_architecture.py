"""Executable architecture rules: layers point one way, and ``import cerebro`` stays cheap."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "cerebro"

LEAVES = {"errors", "values", "clock", "paths", "config", "logs", "retry", "cli_state"}
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
    **{f"cerebro.{leaf}": ("cerebro.api", "cerebro.cli", "cerebro.store", "cerebro.db", "cerebro.models")
       for leaf in LEAVES},
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


def test_import_cerebro_is_cheap() -> None:
    code = (
        "import sys, cerebro; cerebro.__version__; "
        "heavy = [m for m in ('sqlalchemy', 'sqlmodel', 'alembic', 'cyclopts', 'structlog', 'onnxruntime') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_cli_help_does_not_import_the_orm() -> None:
    code = (
        "import sys; from cerebro.cli.app import run; run(['--help']); "
        "print('MODULES', [m for m in ('sqlalchemy', 'sqlmodel', 'alembic') if m in sys.modules], file=sys.stderr)"
    )
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    assert "MODULES []" in err


def test_modules_stay_small() -> None:
    too_long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py") if (n := len(p.read_text().splitlines())) > 800}
    assert too_long == {}
