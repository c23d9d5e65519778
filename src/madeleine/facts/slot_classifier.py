"""Slots for open cards by similarity to labelled examples, not by phrase lists.

An open card ("The user and family finally got out of Chicago and settled in Tucson.") is
multi-valued: its key names its verb, not its slot, so by itself it never supersedes the card
it changes ("The user lives in Chicago."). The slot rules cannot know every phrasing of a
move; the embedder's vectors place a statement near others of the same meaning whatever its
words. So an open card whose vector sits clearly closer to the labelled examples of one
single-valued slot (``slot_examples.tsv``: where the user lives, works, what they do, eat,
how they get around, with whom) than to those of any other slot and to the "other"
statements (events, visits, hobbies, other people's news) takes that slot's key: resolution
then supersedes the earlier card of that slot, whatever produced it.

The classifier is a softmax regression over the embedder's vectors of the examples: a card
takes the slot it most likely fills when that probability reaches ``min_probability``. The
examples are embedded with the store's own embedder and the model fitted the first time a
card needs it (a few hundred short sentences, well under a second), so any embedder works
and nothing ships pre-trained: edit the file and the classifier follows. Every fourth
example of a slot is held out: ``madeleine bench slots`` chooses the penalty and threshold
by cross-validation on the rest and reports the held-out split, which nothing is tuned on.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy import optimize

from madeleine.embed.base import Embedder
from madeleine.facts.cards import Attribute, CardDraft, Category, MemoryType
from madeleine.facts.rules import disclosure
from madeleine.models import shared_model

log = logging.getLogger(__name__)

OTHER = "other"
CLASSIFIED = "classified"  # the attribute naming the slot an open card was given
DEFAULT_L2 = 3e-5  # chosen by cross-validation on the training split (madeleine bench slots)
# CV on the examples chose 0.4; on LoCoMo's development conversations 0.4 gave a slot to
# motivational chatter and past episodes, so the default asks for 0.6 (docs/benchmarks.md)
DEFAULT_MIN_PROBABILITY = 0.6
CROSS_VALIDATION_FOLDS = 4
MIN_CROSS_VALIDATED_PRECISION = 0.7  # real embedders: 0.85-0.9; a hashing one: 0.3-0.4
_HELD_OUT_EVERY = 4
_HANGUL = re.compile(r"[\uac00-\ud7a3]")
# the user is the statement's subject, within its first words ("These days the user …"; not
# "The user's friend …", "It's incredible how the user …")
_USER_LEADS = re.compile(r"^(?:\W*[\w'-]+\W+){0,2}?(?:the user\b(?!'s)|사용자[는가도:])", re.I)


@dataclass(frozen=True, slots=True)
class SlotTarget:
    """What a slot makes of an open card: the key resolution compares, and its category."""

    key: str
    category: Category
    importance: float


TARGETS: dict[str, SlotTarget] = {
    "home": SlotTarget("location.home", Category.LOCATION, 0.7),
    "employer": SlotTarget("work.employer", Category.WORK, 0.6),
    "role": SlotTarget("work.role", Category.WORK, 0.6),
    "diet": SlotTarget("preference.diet", Category.PREFERENCE, 0.75),
    "transport": SlotTarget("preference.transport", Category.PREFERENCE, 0.5),
    "partner": SlotTarget("relationship.partner", Category.RELATIONSHIP, 0.7),
}


@dataclass(frozen=True, slots=True)
class Example:
    slot: str
    text: str  # as the user said it


@dataclass(frozen=True, slots=True)
class Guess:
    slot: str  # a TARGETS name or OTHER
    probability: float


def load_examples(path: Path | None = None) -> list[Example]:
    """The labelled statements: ``slot<TAB>statement`` lines, ``#`` comments."""
    if path is None:
        text = resources.files("madeleine.facts").joinpath("slot_examples.tsv").read_text("utf-8")
    else:
        text = path.read_text("utf-8")
    examples: list[Example] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        slot, sep, statement = line.partition("\t")
        if not sep or not statement.strip():
            raise ValueError(f"slot examples line {number}: expected 'slot<TAB>statement'")
        if slot != OTHER and slot not in TARGETS:
            raise ValueError(f"slot examples line {number}: unknown slot {slot!r}")
        examples.append(Example(slot, statement.strip()))
    return examples


def split(examples: Sequence[Example]) -> tuple[list[Example], list[Example]]:
    """(training, held out): every fourth example of each slot, in file order, is held out."""
    seen: dict[str, int] = {}
    training: list[Example] = []
    held_out: list[Example] = []
    for example in examples:
        index = seen.get(example.slot, 0)
        seen[example.slot] = index + 1
        (held_out if index % _HELD_OUT_EVERY == _HELD_OUT_EVERY - 1 else training).append(example)
    return training, held_out


def as_card_statement(text: str) -> str:
    """What an open card of this sentence would say: the classifier compares like with like."""
    return disclosure.restated(text, korean=bool(_HANGUL.search(text)))


class SlotClassifier:
    """Softmax regression over the embedder's vectors of the labelled examples, used only when
    the embedder separates them: on fitting, the examples are cross-validated, and below
    ``MIN_CROSS_VALIDATED_PRECISION`` (an embedder that does not read meaning, such as a
    hashing one) the classifier gives no slot at all rather than wrong ones."""

    def __init__(
        self,
        embedder: Embedder,
        examples: Sequence[Example],
        *,
        l2: float = DEFAULT_L2,
        min_probability: float = DEFAULT_MIN_PROBABILITY,
        cache_dir: Path | None = None,
    ) -> None:
        if len({e.slot for e in examples}) < 2:
            raise ValueError("the slot classifier needs examples of at least two slots")
        self._embedder = embedder
        self._examples = list(examples)
        self._l2 = l2
        self.min_probability = min_probability
        self.slots = sorted({e.slot for e in self._examples})
        self._model: Softmax | None = None
        self.cross_validated_precision: float | None = None  # known once fitted
        # the fitted model is kept here too: a new process (a CLI call) skips embedding the
        # examples, seconds of work, when the embedder and the examples are the same
        self._cache_dir = cache_dir

    def _fitted(self) -> Softmax:
        if self._model is None:  # fitted when the first open card needs it, once a process
            model, precision = shared_model(self._model_name(), self._fit)
            self._model, self.cross_validated_precision = model, precision
        return self._model

    def _model_name(self) -> str:
        """The fitted model is the same for every store with this embedder and examples: one
        per process (``madeleine.models``), as the embedder itself (embedding the examples
        takes seconds; fitting, milliseconds)."""
        digest = hashlib.sha256(
            "\n".join(f"{e.slot}\t{e.text}" for e in self._examples).encode()
        ).hexdigest()[:16]
        embedder = f"{type(self._embedder).__qualname__}:{self._embedder.name}:{self._embedder.dim}"
        return f"slots:{embedder}:{digest}:{self._l2:g}:{self.min_probability:g}"

    def _fit(self) -> tuple[Softmax, float]:
        cached = self._load()
        if cached is not None:
            return cached
        model, precision = self._fit_now()
        self._save(model, precision)
        return model, precision

    def _cache_file(self) -> Path | None:
        if self._cache_dir is None:
            return None
        name = hashlib.sha256(self._model_name().encode()).hexdigest()[:24]
        return self._cache_dir / f"slot-classifier-{name}.npz"

    def _load(self) -> tuple[Softmax, float] | None:
        path = self._cache_file()
        if path is None or not path.is_file():
            return None
        try:
            with np.load(path) as saved:
                model = Softmax(saved["weights"], saved["bias"], saved["center"])
                precision = float(saved["precision"])
        except (OSError, KeyError, ValueError) as error:  # unreadable: fitted again
            log.info("slot classifier cache %s not used: %s", path, error)
            return None
        if model.weights.shape != (self._embedder.dim, len(self.slots)):
            return None
        return model, precision

    def _save(self, model: Softmax, precision: float) -> None:
        path = self._cache_file()
        if path is None:
            return
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # owner-only, as the store
            with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".npz", delete=False) as f:
                np.savez(
                    f,
                    weights=model.weights,
                    bias=model.bias,
                    center=model.center,
                    precision=np.float64(precision),
                )
            os.chmod(f.name, 0o600)
            os.replace(f.name, path)
        except OSError as error:  # a read-only store: fitted again next time
            log.info("slot classifier not cached in %s: %s", path.parent, error)

    def _fit_now(self) -> tuple[Softmax, float]:
        statements = [as_card_statement(e.text) for e in self._examples]
        vectors = np.asarray(self._embedder.embed_passages(statements), np.float64)
        labels = [e.slot for e in self._examples]
        predicted = cross_validated(vectors, labels, self._l2, [self.min_probability])
        precision = slot_precision(labels, predicted[self.min_probability])
        if precision < MIN_CROSS_VALIDATED_PRECISION:
            log.warning(
                "open-card slots off: embedder %s separates the slot examples with "
                "precision %.2f (< %.2f)",
                self._embedder.name,
                precision,
                MIN_CROSS_VALIDATED_PRECISION,
            )
        model = Softmax.fit(vectors, _indices(labels, self.slots), len(self.slots), self._l2)
        return model, precision

    @property
    def usable(self) -> bool:
        """Whether the embedder separates the examples well enough (True until fitted)."""
        precision = self.cross_validated_precision
        return precision is None or precision >= MIN_CROSS_VALIDATED_PRECISION

    def guess(self, vectors: npt.NDArray[np.float32]) -> list[Guess]:
        """The likeliest slot of each vector (a statement embedded as a passage)."""
        if len(vectors) == 0:
            return []
        probabilities = self._fitted().probabilities(np.asarray(vectors, np.float64))
        best = probabilities.argmax(axis=1)
        return [
            Guess(self.slots[int(i)], float(row[int(i)]))
            for i, row in zip(best, probabilities, strict=True)
        ]

    def slot_of(self, guess: Guess) -> str:
        """The guessed slot when it is sure enough (and the classifier usable), else OTHER."""
        if guess.probability >= self.min_probability and self.usable:
            return guess.slot
        return OTHER

    def assign(
        self, drafts: Sequence[CardDraft], vectors: npt.NDArray[np.float32]
    ) -> list[CardDraft]:
        """The drafts, open cards that clearly fill a single-valued slot given its key."""
        candidates = [i for i, d in enumerate(drafts) if _classifiable(d)]
        if not candidates:
            return list(drafts)
        out = list(drafts)
        for index, guess in zip(candidates, self.guess(vectors[candidates]), strict=True):
            if self.slot_of(guess) != OTHER:
                out[index] = _in_slot(drafts[index], guess)
        return out


@dataclass(frozen=True, slots=True)
class Softmax:
    weights: npt.NDArray[np.float64]  # dim x classes
    bias: npt.NDArray[np.float64]
    center: npt.NDArray[np.float64]  # the examples' mean vector, subtracted first

    @classmethod
    def fit(
        cls, vectors: npt.NDArray[np.float64], labels: npt.NDArray[np.int_], classes: int, l2: float
    ) -> Softmax:
        """Cross-entropy with an L2 penalty, by L-BFGS (a few hundred examples: milliseconds)."""
        center = vectors.mean(axis=0)
        x = vectors - center
        rows, dim = x.shape
        picked = (np.arange(rows), labels)

        def loss(flat: npt.NDArray[np.float64]) -> tuple[float, npt.NDArray[np.float64]]:
            weights, bias = flat[: dim * classes].reshape(dim, classes), flat[dim * classes :]
            p = _softmax(x @ weights + bias)
            value = -float(np.log(p[picked] + 1e-12).mean()) + l2 * float((weights**2).sum())
            p[picked] -= 1.0
            p /= rows
            grad_w = x.T @ p + 2 * l2 * weights
            return value, np.concatenate([grad_w.ravel(), p.sum(axis=0)])

        start = np.zeros(dim * classes + classes)
        found = optimize.minimize(
            loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 500}
        )
        flat = found.x
        return cls(flat[: dim * classes].reshape(dim, classes), flat[dim * classes :], center)

    def probabilities(self, vectors: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return _softmax((vectors - self.center) @ self.weights + self.bias)


def cross_validated(
    vectors: npt.NDArray[np.float64],
    labels: Sequence[str],
    l2: float,
    thresholds: Sequence[float],
    folds: int = CROSS_VALIDATION_FOLDS,
) -> dict[float, list[str]]:
    """Each example's slot by a model fitted without its fold, at each probability threshold."""
    fold_of = np.arange(len(labels)) % folds
    predicted = {t: [OTHER] * len(labels) for t in thresholds}
    for fold in range(folds):
        inside = np.flatnonzero(fold_of != fold)
        outside = np.flatnonzero(fold_of == fold)
        if len(outside) == 0:
            continue
        train_labels = [labels[int(i)] for i in inside]
        labelled = fit_and_label(vectors[inside], train_labels, vectors[outside], l2, thresholds)
        for t, guesses in labelled.items():
            for index, guess in zip(outside, guesses, strict=True):
                predicted[t][int(index)] = guess
    return predicted


def slot_precision(labels: Sequence[str], predicted: Sequence[str]) -> float:
    """Of the examples given a slot (not OTHER), the share given the right one (0 if none)."""
    given = [
        (label, guess) for label, guess in zip(labels, predicted, strict=True) if guess != OTHER
    ]
    return sum(label == guess for label, guess in given) / len(given) if given else 0.0


def _indices(labels: Sequence[str], slots: Sequence[str]) -> npt.NDArray[np.int_]:
    return np.array([slots.index(label) for label in labels])


def fit_and_label(
    train: npt.NDArray[np.float64],
    train_labels: Sequence[str],
    test: npt.NDArray[np.float64],
    l2: float,
    thresholds: Sequence[float],
) -> dict[float, list[str]]:
    """The slot of each test vector by a model fitted on the training ones, at each
    probability threshold (OTHER below it)."""
    slots = sorted(set(train_labels))
    model = Softmax.fit(train, _indices(train_labels, slots), len(slots), l2)
    p = model.probabilities(test)
    best = p.argmax(axis=1)
    return {
        t: [slots[int(b)] if p[i, b] >= t else OTHER for i, b in enumerate(best)]
        for t in thresholds
    }


def _softmax(z: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return np.asarray(e / e.sum(axis=1, keepdims=True), np.float64)


def _classifiable(draft: CardDraft) -> bool:
    """An open card whose subject is the user, stated as how things are: not a dated episode
    ("last year the user took a trip to Spain") nor a plan, which change no standing slot."""
    if not draft.key.startswith(disclosure.OPEN_PREFIX) or draft.subject != "user":
        return False
    if any(a.name == "when" for a in draft.attributes):
        return False
    return _USER_LEADS.match(draft.statement) is not None


def _in_slot(draft: CardDraft, guess: Guess) -> CardDraft:
    target = TARGETS[guess.slot]
    attributes = [
        *draft.attributes,
        Attribute(name=CLASSIFIED, value=f"{guess.slot} (p={guess.probability:.2f})", unit=None),
    ]
    return draft.model_copy(
        update={
            "key": target.key,
            "category": target.category,
            "multi_valued": False,
            "memory_type": MemoryType.SEMANTIC,
            "importance": max(draft.importance, target.importance),
            "attributes": attributes,
        }
    )


def classified(card: CardDraft) -> bool:
    """Whether a card's slot came from the classifier (its attributes are the open card's)."""
    return any(a.name == CLASSIFIED for a in card.attributes)
