"""``python -m tests.mcp.launch ARGS…``: the cerebro CLI with the test embedders registered.

A server or CLI run in a subprocess cannot see providers the test process registered, so the tests start it
through this module: ``fake`` (hashed bag-of-words, any dimension) works there as in-process.
"""

from tests.fakes import register_fakes

register_fakes()

from cerebro.cli.app import main  # noqa: E402 - imported after the fake providers are registered

main()
