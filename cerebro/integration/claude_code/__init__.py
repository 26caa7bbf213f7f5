"""Claude Code: the session-guarded hooks (and, later, init scaffolding and the plugin)."""
