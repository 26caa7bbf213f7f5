"""Integrations with coding agents."""
