"""Reciprocal rank fusion of independent recall channels."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ChannelHit:
    item_id: int
    score: float


@dataclass(slots=True)
class Fused:
    item_id: int
    score: float
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)


def rrf(
    channels: Mapping[str, Sequence[ChannelHit]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[Fused]:
    """score(d) = sum over channels of weight / (k + rank); ranks start at 1.

    Only ranks are used, so channels with incomparable score scales fuse fairly.
    """
    fused: dict[int, Fused] = {}
    for name, hits in channels.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, hit in enumerate(hits, start=1):
            entry = fused.get(hit.item_id)
            if entry is None:
                entry = fused[hit.item_id] = Fused(hit.item_id, 0.0)
            contribution = weight / (k + rank)
            entry.score += contribution
            entry.channels[name] = {
                "rank": rank,
                "score": round(hit.score, 6),
                "contribution": round(contribution, 6),
            }
    return sorted(fused.values(), key=lambda f: (-f.score, f.item_id))
