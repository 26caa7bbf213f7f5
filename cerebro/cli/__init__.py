"""The command-line surface: a thin Cyclopts layer over :class:`cerebro.Brain`."""
