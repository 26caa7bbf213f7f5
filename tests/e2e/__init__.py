"""End-to-end tests: the real Claude Code CLI against a fake Anthropic API on loopback (see client.py)."""
