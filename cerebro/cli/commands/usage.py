from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from cerebro.cli.output import emit


def usage(
    *,
    claudemd_block: Annotated[bool, Parameter(help="Print the block for CLAUDE.md, between cerebro's markers")] = False,
) -> None:
    """Which command fits which situation, and what each promises.

    Examples
      cerebro usage
      cerebro usage --claudemd-block
    """
    from cerebro.integration.claude_code import usage as map_

    data = [{"command": name, "situation": s, "invocation": i, "contract": c} for name, (s, i, c) in map_.USAGE.items()]
    text = map_.claudemd_block() if claudemd_block else f"# Cerebro capability map\n\n{map_.render()}"
    emit({"situations": data}, text, items="situations")
