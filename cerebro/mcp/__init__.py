"""``cerebro mcp``: the brain as a Model Context Protocol server (ADR 0020).

Importing this package costs nothing: :mod:`cerebro.mcp.framing` (shared with the hooks) never imports the
MCP SDK, and :mod:`cerebro.mcp.server` — the only module that does — is imported by the ``cerebro mcp``
command alone, never on a hook's or recall's path.
"""
