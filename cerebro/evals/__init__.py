"""Retrieval-quality evaluations: a brain's own query set, and the LoCoMo benchmark."""
