"""brains: every brain under CEREBRO_HOME and the project it serves; relink a moved project's brain."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import App, Parameter

from cerebro.cli.output import emit
from cerebro.reports import BrainInfo

app = App(
    name="brains",
    help="""List every brain and the project it serves; give a moved project's brain to its new folder.

    Examples
      cerebro brains
      cerebro brains --format json
      cerebro brains relink ~/code/old-name ~/code/new-name
    """,
)


def _line(info: BrainInfo) -> list[str]:
    where = "global" if info.scope == "global" else (info.project or "(project not recorded)")
    count = info.memories
    memories = "unreadable" if count is None else f"{count} memor{'y' if count == 1 else 'ies'}"
    lines = [f"{where}  ({memories}, {info.size_bytes / 1e6:.1f} MB, last used {info.last_used})"]
    if info.project is not None and not info.project_exists:
        lines.append("  ! the project folder is gone (moved or deleted): cerebro brains relink OLD NEW")
    lines.append(f"  {info.path}")
    return lines


@app.default
def brains() -> None:
    """Every brain under CEREBRO_HOME: the project it serves (recorded by init), active memories, size and last
    use. A project folder that no longer exists is flagged; a brain made before cerebro recorded its project says
    so (run `cerebro init` in that project to record it). Reads only: no brain is upgraded or changed.

    Examples
      cerebro brains
      cerebro brains --format json
    """
    from cerebro.api import Brain

    found = Brain.brains()

    def md() -> str:
        if not found:
            return "No brains yet: run 'cerebro init' in a project."
        return "\n".join(["# Cerebro Brains", ""] + [line for info in found for line in _line(info)])

    emit({"brains": [info.to_dict() for info in found]}, md, items="brains")


@app.command
def relink(
    old: Annotated[Path, Parameter(help="The project folder's former path (as `cerebro brains` shows it)")],
    new: Annotated[Path, Parameter(help="Where the project is now")],
) -> None:
    """Give the brain of a moved or renamed project to its new folder: the brain keeps every memory and now
    records the new path. Refused when the new folder has a brain already, or while the brain is open elsewhere.

    Examples
      cerebro brains relink ~/code/old-name ~/code/new-name
    """
    from cerebro.api import Brain

    info = Brain.relink(old, new)
    emit(info.to_dict(), f"The brain of {old} now serves {info.project}.")
