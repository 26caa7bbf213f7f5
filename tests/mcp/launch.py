"""``python -m tests.mcp.launch ARGS…``: the cerebro CLI with the test embedders registered.

A server or CLI run in a subprocess cannot see providers the test process registered, so the tests start it
through this module: ``fake`` (hashed bag-of-words, any dimension) works there as in-process.
"""

import os

from tests.fakes import register_fakes

register_fakes()

if "TEST_MCP_HEADER_SECONDS" in os.environ:  # a test of the slow-header limit need not wait its 10 s
    from cerebro.mcp import http

    http.HEADER_SECONDS = float(os.environ["TEST_MCP_HEADER_SECONDS"])

from cerebro.cli.app import main  # noqa: E402 - imported after the fake providers are registered

main()
