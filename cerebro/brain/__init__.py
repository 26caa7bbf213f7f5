"""The parts of :class:`cerebro.Brain`, one concern per module; ``cerebro.api`` assembles them."""
