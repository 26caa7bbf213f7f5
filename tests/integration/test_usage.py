"""cerebro usage: one entry per command, so the map cannot go stale."""

from __future__ import annotations

from cerebro.cli.app import COMMANDS
from cerebro.integration.claude_code import usage


def test_every_command_has_exactly_one_usage_entry() -> None:
    assert set(usage.USAGE) == set(COMMANDS)
    placed = [name for _, commands in usage.SECTIONS for name in commands]
    assert sorted(placed) == sorted(COMMANDS)  # each in exactly one section of the map


def test_usage_mentions_only_commands_that_exist() -> None:
    for name, (_, invocation, _) in usage.USAGE.items():
        assert invocation.startswith(f"cerebro {name}")


def test_cli_usage_and_claudemd_block(cli) -> None:
    table = cli("usage", project_dir=None)
    assert table.exit_code == 0 and table.stdout.startswith("# Cerebro capability map\n\nAlways pass")
    assert "- Before starting a task, or when stuck → `cerebro recall" in table.stdout
    block = cli("usage", "--claudemd-block", project_dir=None).stdout.strip()
    assert block.startswith(usage.BEGIN) and block.endswith(usage.END)
    data = cli("usage", "--format", "json", project_dir=None).json()["situations"]
    assert [d["command"] for d in data] == list(usage.USAGE)
