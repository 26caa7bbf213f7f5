"""brains: every brain under CEREBRO_HOME and the project it serves."""

from __future__ import annotations

from cerebro.cli.output import emit


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
        lines = ["# Cerebro Brains", ""]
        for info in found:
            where = "global" if info.scope == "global" else (info.project or "(project not recorded)")
            count = info.memories
            memories = "unreadable" if count is None else f"{count} memor{'y' if count == 1 else 'ies'}"
            lines.append(f"{where}  ({memories}, {info.size_bytes / 1e6:.1f} MB, last used {info.last_used})")
            if info.project is not None and not info.project_exists:
                lines.append("  ! the project folder is gone (moved or deleted)")
            lines.append(f"  {info.path}")
        return "\n".join(lines)

    emit({"brains": [info.to_dict() for info in found]}, md)
