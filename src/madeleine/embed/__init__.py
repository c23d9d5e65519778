"""Embedders: the ``Embedder`` protocol and offline adapters that load from installed packages."""

from madeleine.embed.base import Embedder
from madeleine.embed.factory import load_embedder

__all__ = ["Embedder", "load_embedder"]
