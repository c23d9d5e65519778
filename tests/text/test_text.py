from __future__ import annotations

from datetime import UTC, datetime

import pytest

from madeleine import Memory
from madeleine.text.analyzer import MultilingualAnalyzer
from madeleine.text.timeparse import parse_timestamp
from madeleine.text.tokens import estimate_tokens


def test_english_analysis_stems_and_drops_stop_words() -> None:
    terms = MultilingualAnalyzer().terms("Caroline's running to the support groups")
    assert terms == ["carolin", "run", "support", "group"]


def test_korean_analysis_keeps_content_morphemes() -> None:
    terms = MultilingualAnalyzer().terms("지난주에 부산으로 이사했습니다")
    assert "부산" in terms and "이사" in terms
    assert "으로" not in terms and "습니다" not in terms
    # particles differ, the indexed noun is the same
    assert "부산" in MultilingualAnalyzer().terms("부산에서 살아요")


def test_timestamps() -> None:
    assert parse_timestamp("2024-09-15T10:00:00") == datetime(2024, 9, 15, 10, tzinfo=UTC)
    assert parse_timestamp("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert parse_timestamp(0) == datetime(1970, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="when"):
        parse_timestamp("31 Febtember", "when")
    with pytest.raises(TypeError):
        parse_timestamp(True)
    with pytest.raises(ValueError):
        parse_timestamp(float("nan"))


def test_token_estimate_is_monotonic_and_counts_hangul() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello") == 1
    assert estimate_tokens("안녕하세요") == 7  # 1.4 a syllable (cl100k), rounded up
    text = "The quick brown fox jumps over the lazy dog. 2024-09-15"
    assert all(
        estimate_tokens(text[:i]) <= estimate_tokens(text[: i + 1]) + 1 for i in range(len(text))
    )


def test_korean_and_english_paraphrases_are_found(memory: Memory) -> None:
    notes = {
        "ko1": "저는 매운 음식을 정말 좋아해요. 특히 떡볶이를 자주 먹어요.",
        "ko2": "다음 달에 제주도로 가족 여행을 갈 계획이에요.",
        "ko3": "회사 근처에 새로 생긴 헬스장에 등록했어요.",
        "en1": "My sister just adopted a golden retriever puppy.",
        "en2": "I've been fixing the leaky faucet in the kitchen all weekend.",
        "en3": "Our quarterly budget review got moved to Thursday.",
    }
    # unrelated remarks from separate conversations (a turn's neighbour is part of its context)
    for note_id, content in notes.items():
        memory.add([{"content": content, "id": note_id}], user_id="u1", session_id=note_id)
    assert memory.wait(timeout=60)
    cases = {
        "제주 여행은 언제 가나요?": "ko2",
        "어떤 음식을 좋아하나요": "ko1",
        "운동하러 다니는 곳": "ko3",
        "Does anyone in the family have a dog?": "en1",
        "plumbing repairs at home": "en2",
        "when is the financial meeting": "en3",
    }
    for query, expected in cases.items():
        hits = memory.search(query, user_id="u1", limit=2)
        assert hits[0].source_ids == [expected], (query, [h.text for h in hits])
