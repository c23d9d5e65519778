"""``madeleine bench slots``: how well the open-card slot classifier generalises.

The labelled examples (``facts/slot_examples.tsv``) are split once: every fourth example of
a slot is held out. The penalty and the probability threshold are chosen by k-fold
cross-validation on the training part only (the highest F0.5 of slot precision and recall:
a wrong slot supersedes a true card, a missed one only leaves an open card); the held-out
part is then scored once, at the chosen and at the configured values.

Reported, over the examples of a split: **accuracy** (the slot, or "other", is right),
**slot precision** (of the examples given a slot, those given the right one) and **slot
recall** (of the examples of a slot, those given it), overall and per slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from madeleine.embed.base import Embedder
from madeleine.facts.slot_classifier import (
    CROSS_VALIDATION_FOLDS,
    DEFAULT_L2,
    DEFAULT_MIN_PROBABILITY,
    OTHER,
    Example,
    as_card_statement,
    cross_validated,
    fit_and_label,
    split,
)

PENALTIES: tuple[float, ...] = (1e-6, 1e-5, 3e-5, 1e-4, 3e-4)
THRESHOLDS: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7)
FOLDS = CROSS_VALIDATION_FOLDS


@dataclass
class Score:
    examples: int = 0
    right: int = 0
    given: int = 0  # given a slot (not "other")
    given_right: int = 0
    slotted: int = 0  # labelled with a slot
    per_slot: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # given, right, of

    @property
    def accuracy(self) -> float:
        return self.right / self.examples if self.examples else float("nan")

    @property
    def precision(self) -> float:
        return self.given_right / self.given if self.given else float("nan")

    @property
    def recall(self) -> float:
        return self.given_right / self.slotted if self.slotted else float("nan")

    @property
    def f_half(self) -> float:
        """F0.5: precision weighs twice recall (a wrong slot supersedes a true card)."""
        p, r = self.precision, self.recall
        return 0.0 if not p or not r or p != p or r != r else 1.25 * p * r / (0.25 * p + r)


def score(labels: Sequence[str], predicted: Sequence[str]) -> Score:
    result = Score(examples=len(labels))
    counts: dict[str, list[int]] = {}
    for label, guess in zip(labels, predicted, strict=True):
        result.right += label == guess
        if label != OTHER:
            result.slotted += 1
            counts.setdefault(label, [0, 0, 0])[2] += 1
        if guess != OTHER:
            result.given += 1
            result.given_right += label == guess
            counts.setdefault(guess, [0, 0, 0])[0] += 1
            counts[guess][1] += label == guess
    result.per_slot = {slot: (c[0], c[1], c[2]) for slot, c in sorted(counts.items())}
    return result


def _predict(
    train: npt.NDArray[np.float64],
    train_labels: Sequence[str],
    test: npt.NDArray[np.float64],
    l2: float,
    threshold: float,
) -> list[str]:
    return fit_and_label(train, train_labels, test, l2, [threshold])[threshold]


@dataclass(frozen=True)
class SlotsReport:
    training: int
    held_out: int
    chosen: tuple[float, float]  # l2, threshold
    cross_validated: Score
    held_out_chosen: Score
    held_out_configured: Score

    def table(self) -> str:
        rows = [
            "| split | examples | accuracy | slot precision | slot recall |",
            "|---|---:|---:|---:|---:|",
            _row(f"training, {FOLDS}-fold CV (chosen)", self.cross_validated),
            _row("held out, chosen", self.held_out_chosen),
            _row(
                f"held out, defaults (l2={DEFAULT_L2:g}, p≥{DEFAULT_MIN_PROBABILITY})",
                self.held_out_configured,
            ),
        ]
        slots = [
            "",
            "| held out, chosen: slot | given | right | examples |",
            "|---|---:|---:|---:|",
        ]
        slots += [
            f"| {slot} | {g} | {r} | {n} |"
            for slot, (g, r, n) in self.held_out_chosen.per_slot.items()
        ]
        return "\n".join(rows + slots)


def _row(label: str, s: Score) -> str:
    return f"| {label} | {s.examples} | {s.accuracy:.3f} | {s.precision:.3f} | {s.recall:.3f} |"


def run_slots(embedder: Embedder, examples: Sequence[Example]) -> SlotsReport:
    training, held_out = split(examples)
    statements = [as_card_statement(e.text) for e in [*training, *held_out]]
    vectors = np.asarray(embedder.embed_passages(statements), np.float64)
    train_x, test_x = vectors[: len(training)], vectors[len(training) :]
    train_y = [e.slot for e in training]
    best: tuple[float, float, float] | None = None  # F0.5, l2, threshold
    cv_scores: dict[tuple[float, float], Score] = {}
    for l2 in PENALTIES:
        predicted = cross_validated(train_x, train_y, l2, THRESHOLDS, FOLDS)
        for t in THRESHOLDS:
            s = score(train_y, predicted[t])
            cv_scores[(l2, t)] = s
            if best is None or s.f_half > best[0]:
                best = (s.f_half, l2, t)
    assert best is not None
    _, l2, t = best
    test_y = [e.slot for e in held_out]
    chosen = _predict(train_x, train_y, test_x, l2, t)
    configured = _predict(train_x, train_y, test_x, DEFAULT_L2, DEFAULT_MIN_PROBABILITY)
    return SlotsReport(
        training=len(training),
        held_out=len(held_out),
        chosen=(l2, t),
        cross_validated=cv_scores[(l2, t)],
        held_out_chosen=score(test_y, chosen),
        held_out_configured=score(test_y, configured),
    )
