"""Cerebro: local-first persistent memory for AI coding agents.

``import cerebro`` is cheap: :class:`Brain` and friends load on first use, so hooks that only need a
path or a version number never pay for SQLAlchemy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Brain", "CerebroError", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from cerebro.api import Brain
    from cerebro.errors import CerebroError


def __getattr__(name: str) -> Any:  # noqa: ANN401 - a lazily imported class or module of the package
    if name == "Brain":
        from cerebro.api import Brain

        return Brain
    if name == "CerebroError":
        from cerebro.errors import CerebroError

        return CerebroError
    if name in ("errors", "values", "reports", "clock", "paths", "config"):
        import importlib

        return importlib.import_module(f"cerebro.{name}")
    raise AttributeError(f"module 'cerebro' has no attribute {name!r}")
