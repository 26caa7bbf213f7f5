"""Loaded by the mcp-memory-service-lite process that bench/mcp_peers_bench.py starts (this folder is its
PYTHONPATH): the peer's sqlite-vec backend needs a ``sqlite3`` that can load extensions, which a Python built
without ``--enable-loadable-sqlite-extensions`` (pyenv's, here) lacks. sqlean.py is the drop-in ``sqlite3`` cerebro
itself runs on, so both servers get the same SQLite."""

import sys

import sqlean

sys.modules["sqlite3"] = sqlean
sys.modules["sqlite3.dbapi2"] = sqlean.dbapi2
