"""Fusion: the recall channels' candidates become one base score per passage.

Both strategies work on calibrated scores or ranks, never on batch min-max (which pins the
top hit of any batch to 1.0), so a score means the same thing in every query. The graph
channel is added with ``graph_weight`` rather than ranked with the text channels, so a
graph that reaches nothing costs the text channels nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np
import numpy.typing as npt

from madeleine.config import Settings
from madeleine.read.channels import Recall
from madeleine.read.explain import FusionName


class Fusion(Protocol):
    name: FusionName

    def fuse(self, recalls: Mapping[str, Recall], size: int) -> npt.NDArray[np.float64]: ...


class WeightedFusion:
    """Calibrated scores mixed with fixed weights (dense vs BM25); with ``graph_beta`` set,
    the graph is blended into the dense channel instead: β·ppr + (1−β)·knn."""

    name: FusionName = "weighted"

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def fuse(self, recalls: Mapping[str, Recall], size: int) -> npt.NDArray[np.float64]:
        scores = np.zeros(size, dtype=np.float64)
        if not recalls:
            return scores
        settings = self._settings
        weights = {
            "dense": settings.fusion.dense_weight,
            "bm25": 1.0 - settings.fusion.dense_weight,
        }
        # the graph channel adds to the text channels' mix rather than diluting it
        norm = sum(weights[name] for name in recalls if name in weights) or 1.0
        beta = settings.graph.beta
        blend = beta is not None and "dense" in recalls and "graph" in recalls
        for name, recall in recalls.items():
            if name == "graph":
                if not blend:
                    np.add.at(scores, recall.rows, settings.graph.weight * recall.calibrated)
                continue
            if name == "dense" and blend:
                assert beta is not None
                mixed = np.zeros(size, dtype=np.float64)
                np.add.at(mixed, recall.rows, (1.0 - beta) * recall.calibrated)
                graph = recalls["graph"]
                np.add.at(mixed, graph.rows, beta * graph.calibrated)
                scores += weights["dense"] / norm * mixed
                continue
            np.add.at(scores, recall.rows, weights[name] / norm * recall.calibrated)
        return scores


class RRFFusion:
    """Reciprocal rank fusion, divided by the best possible score so that stage weights
    mean the same as in weighted mode."""

    name: FusionName = "rrf"

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def fuse(self, recalls: Mapping[str, Recall], size: int) -> npt.NDArray[np.float64]:
        scores = np.zeros(size, dtype=np.float64)
        if not recalls:
            return scores
        k = self._settings.fusion.rrf_k
        text = {name: r for name, r in recalls.items() if name != "graph"}
        for recall in text.values():
            ranks = np.arange(1, recall.rows.size + 1, dtype=np.float64)
            np.add.at(scores, recall.rows, 1.0 / (k + ranks))
        if text:
            scores /= len(text) / (k + 1)
        if "graph" in recalls:  # as in weighted mode: added, not ranked with the others
            graph = recalls["graph"]
            np.add.at(scores, graph.rows, self._settings.graph.weight * graph.calibrated)
        return scores


def fusions(settings: Settings) -> dict[FusionName, Fusion]:
    return {fusion.name: fusion for fusion in (WeightedFusion(settings), RRFFusion(settings))}
