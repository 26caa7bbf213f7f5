"""Embedding providers behind one small interface (:class:`cerebro.embed.base.Embedder`)."""
