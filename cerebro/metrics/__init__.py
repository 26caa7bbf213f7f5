"""Session metrics: how the agent works, turn by turn, read from Claude Code's transcripts.

Kept apart from the brain (its own SQLite file beside it, its own schema history) so that a broken or
missing metrics database never touches memories.
"""
