"""What kind of process this is, for settings that only pay off over many calls (ADR 0043).

A library user and ``cerebro mcp`` serve many calls from one process; a CLI command serves one and exits. The CLI's
entry point marks its process one-shot before anything opens a brain, and ``cerebro mcp`` unmarks it again.
"""

from __future__ import annotations

ONE_SHOT = False
