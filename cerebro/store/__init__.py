"""The store layer: CRUD over the entities and the raw-SQL lanes. Every function takes a session."""
