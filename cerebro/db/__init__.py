"""The engine layer: drivers, connections, transactions and schema upgrades."""
