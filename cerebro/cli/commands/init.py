from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro import paths
from cerebro.cli.common import brain_path
from cerebro.cli.output import emit


def init(
    *,
    global_: Annotated[bool, Parameter(name="--global", help="Create the global brain (CEREBRO_HOME/global.sqlite)")] = False,
    embed_provider: Annotated[str | None, Parameter(help="local (default: offline MiniLM), ollama, voyage or none")] = None,
    embed_model: Annotated[str | None, Parameter(help="Embedding model (default: the provider's)")] = None,
    embed_dims: Annotated[int | None, Parameter(help="Vector dimensions (0 or omitted: the provider's)")] = None,
    force: Annotated[bool, Parameter(help="Re-write the embedding settings of an existing brain (backup first)")] = False,
    skip_integration: Annotated[bool, Parameter(help="Only create the brain; write no Claude Code files")] = False,
) -> None:
    """Create the brain for this project (or the global brain). Safe to run again."""
    from cerebro.api import Brain

    target = paths.global_brain_path() if global_ else brain_path()
    result = Brain.init(
        target, embed_provider=embed_provider, embed_model=embed_model, embed_dims=embed_dims, force=force
    )
    data = result.to_dict() | {"is_global": global_}

    def md() -> str:
        what = "Global brain" if global_ else "Brain"
        if result.created:
            lines = [f"{what} initialized at {result.path}"]
        elif result.backup and force:
            lines = [f"{what} re-initialized at {result.path} (backup: {result.backup})"]
        else:
            lines = [f"{what} already initialized at {result.path}"]
        lines.append(f"Embeddings: {result.embedding_provider}" + (f" ({result.embedding_model}, {result.embedding_dimensions} dims)" if result.embedding_dimensions else ""))
        lines.append("Tune it with: cerebro config list")
        return "\n".join(lines)

    emit(data, md)
