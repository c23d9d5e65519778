"""The offline token estimate: fixed sentences, its invariants, and its distance from real
tokenizers (bpe-openai's cl100k_base and o200k_base, when installed) on sentences written for
this test."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from madeleine.text.tokens import TokenCounter, estimate_tokens, token_estimator

# 22 words; the estimator before issue 14 gave 39 tokens, cl100k_base counts 26, o200k_base 25
SENTENCE_22 = (
    "I told my manager that the new onboarding process confuses most people because the "
    "documentation is outdated and scattered across several wikis."
)

ENGLISH = [
    SENTENCE_22,
    "I finally booked the flights for our trip to Lisbon, and we leave on the second Friday "
    "of June.",
    "My sister's dog keeps stealing socks from the laundry basket, which is honestly pretty "
    "hilarious.",
    "Can you remind me what the doctor said about taking the new medication with food?",
    "We've been renovating the kitchen since March; the contractor says it'll be done in "
    "three weeks.",
    "The quarterly report is due on Thursday, but the finance team still hasn't sent me their "
    "numbers.",
    "He started learning the guitar last year and now plays in a small band on weekends.",
]

KOREAN = [
    "다음 주 금요일에 부모님을 모시고 제주도로 여행을 가기로 했어요.",
    "요즘 회사 일이 너무 많아서 운동할 시간이 거의 없네요.",
    "어제 저녁에는 친구들이랑 홍대 근처에서 삼겹살을 먹었어.",
    "우리 집 고양이는 아침마다 창가에 앉아서 새를 구경해요.",
    "이번 학기에는 데이터베이스 수업과 운영체제 수업을 듣고 있습니다.",
    "병원에서 혈압약을 식후에 하루 두 번 먹으라고 했어요.",
    "오늘 점심은 회사 앞 김밥집에서 간단하게 먹었어.",
    "주말에 비 온다고 해서 캠핑 계획을 다음 주로 미뤘어요.",
    "엄마 생신이 다음 달 12일이라서 선물을 뭐로 할지 고민 중이야.",
    "새로 산 노트북이 생각보다 무거워서 들고 다니기 힘들어요.",
    "아이가 감기에 걸려서 오늘은 유치원에 안 보냈어요.",
    "퇴근하고 헬스장 가려고 했는데 너무 피곤해서 그냥 집에 왔어.",
    "이번 여름휴가는 가족이랑 강릉에 가서 바다 보고 올 거예요.",
    "요즘 영어 회화 공부를 시작했는데 생각보다 재밌어요.",
    "저는 우유를 마시면 배가 아파서 두유로 바꿨어요.",
    "내일 아침 9시에 치과 예약이 있어서 조금 늦게 출근할게요.",
    "동생이 다음 주에 결혼해서 요즘 준비하느라 정신이 없어.",
    "지난번에 추천해 준 책 다 읽었는데 결말이 정말 충격적이었어.",
]


def test_a_22_word_sentence_costs_about_a_token_a_word() -> None:
    assert 22 <= estimate_tokens(SENTENCE_22) <= 30


def test_fixed_texts() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("   ") == 1
    assert estimate_tokens("hello") == 1
    assert estimate_tokens("Hello, world!") == 4
    assert estimate_tokens("2024") == 2  # digits go by threes: 202 + 4
    assert estimate_tokens("It's 5 pm") == 5  # It, 's (half), a space, 5, pm: 4.5 rounded up
    # a PII placeholder: [ pii : email : v 1 a 2 b 3 c 4 d 5 e ]; cl100k counts 16, o200k 17
    assert 13 <= estimate_tokens("[pii:email:v1a2b3c4d5e]") <= 17
    assert 3 <= estimate_tokens("alice@example.com") <= 5  # cl100k: alice @example .com (3)
    assert estimate_tokens("https://github.com/foo/bar") <= 10  # cl100k 6
    korean = estimate_tokens("다음 주 금요일에 제주도로 여행을 가요.")
    assert 12 <= korean <= 24  # cl100k 19, o200k 13
    assert estimate_tokens("ㅋㅋㅋㅋ") >= 4
    assert estimate_tokens("🎉🎉") >= 4


def test_the_estimate_grows_with_the_text() -> None:
    text = "The quick brown fox jumps over the lazy dog. 2024-09-15 다음 주에 만나요! it's"
    counts = [estimate_tokens(text[:i]) for i in range(len(text) + 1)]
    assert all(b >= a - 1 for a, b in itertools.pairwise(counts))
    assert estimate_tokens(text * 3) >= 3 * estimate_tokens(text) - 3
    long = " ".join(ENGLISH)
    assert estimate_tokens(long) <= sum(estimate_tokens(s) for s in ENGLISH) + len(ENGLISH)


def test_lines_joined_never_cost_more_than_their_parts() -> None:
    lines = [line + "\n" for line in [*ENGLISH, *KOREAN, "  - [10:00] user: 3 items", "'s"]]
    assert estimate_tokens("".join(lines)) <= sum(estimate_tokens(line) for line in lines)


def test_profiles() -> None:
    balanced, o200k = token_estimator("balanced"), token_estimator("o200k")
    assert token_estimator() is token_estimator("cl100k") is estimate_tokens
    korean = " ".join(KOREAN)
    assert o200k(korean) < balanced(korean) < estimate_tokens(korean)
    english = " ".join(ENGLISH)
    assert abs(o200k(english) - estimate_tokens(english)) <= 0.05 * estimate_tokens(english)
    with pytest.raises(ValueError, match="tokenizer"):
        token_estimator("gpt2")  # type: ignore[arg-type]


def _real() -> dict[str, TokenCounter]:
    pytest.importorskip("bpe_openai")
    from madeleine.bench.tokens import real_tokenizers

    return real_tokenizers()


def _ratio(estimate: TokenCounter, real: TokenCounter, texts: list[str]) -> float:
    return sum(map(estimate, texts)) / sum(map(real, texts))


def test_english_estimate_is_within_ten_percent_of_both_tokenizers() -> None:
    for real in _real().values():
        assert 1.0 <= _ratio(estimate_tokens, real, ENGLISH) <= 1.1


def test_korean_estimate_follows_cl100k_and_the_profiles_match_each() -> None:
    real = _real()
    cl100k = sum(map(real["cl100k"], KOREAN))
    o200k = sum(map(real["o200k"], KOREAN))
    assert cl100k > 1.2 * o200k  # no single estimate is within 10 % of both
    assert 1.0 <= sum(map(estimate_tokens, KOREAN)) / cl100k <= 1.1  # budgets hold for both
    balanced = sum(map(token_estimator("balanced"), KOREAN))
    assert 1.0 <= balanced / ((cl100k + o200k) / 2) <= 1.1
    for name, counter in real.items():
        profile = token_estimator(name)  # type: ignore[arg-type]
        for texts in (ENGLISH, KOREAN):
            assert 0.97 <= _ratio(profile, counter, texts) <= 1.1, (name, texts[0])


def test_the_tokenizer_setting_counts_context_budgets(tmp_path: Path) -> None:
    from madeleine import Memory
    from tests.fakes import HashingEmbedder

    text = "저는 다음 달에 서울로 이사 가요. 새 아파트는 마포구에 있어요."
    counts: dict[str, int] = {}
    for name in ("cl100k", "o200k"):
        with Memory(
            tmp_path / name, embedder=HashingEmbedder(), background=False, tokenizer=name
        ) as memory:
            memory.add([{"role": "user", "content": text}], user_id="u")
            memory.wait()
            context = memory.context("이사", user_id="u", budget_tokens=500)
            assert "서울" in context.text
            counts[name] = context.tokens
    assert counts["o200k"] < counts["cl100k"]
