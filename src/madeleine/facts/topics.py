"""The words a fact's slot answers to: "where do I live?" is about ``location.home``.

A card's statement says what holds ("The user moved to Portland."), not which questions it
answers; small embedders barely tell "where does Alex live?" from "what is Alex's job?" when
both are asked of a turn about a home. Each slot (a key prefix) has the words people use when
they ask about it, in English and Korean. They join a card's lexical text, so BM25 finds the
card by the question's words, and query analysis uses them to tell which slots a question is
about. The key's own parts count too (``plan.appointment.dentist`` answers to "dentist"), and
a project fact answers to the words of its kind (``project.shop.version.postgresql``: version).
"""

from __future__ import annotations

from collections.abc import Iterable

SLOT_WORDS: dict[str, str] = {
    "location.home": "live lives living lived home house apartment flat city town country "
    "move moved moving relocate relocated address neighborhood neighbourhood reside based "
    "살 살아 살아요 사는 살고 거주 이사 집 동네 주소 도시",
    "location.home_area": "neighborhood neighbourhood area district apartment flat live lives "
    "home where 동네 지역 구 동 집 아파트 사는",
    "location.work": "office commute workplace 사무실 출근 근무지",
    "work.employer": "work works working job employer company firm hired joined quit "
    "workplace 회사 직장 다니 다녀요 입사 퇴사 근무",
    "work.role": "job role title position occupation profession promoted promotion career "
    "직업 직무 직책 승진 일",
    "work": "work job 일",
    "preference.drink": "drink drinks drinking beverage coffee tea switched 마시 마셔요 음료 커피 "
    "차",
    "preference.avoid": "avoid avoids stopped quit gave up anymore no longer eat drink "
    "끊었 끊다 안 먹 안 마시",
    "preference.milk": "milk coffee drink 우유",
    "preference.commute": "commute commuting get to work bike transport 출퇴근 통근",
    "preference.diet": "diet eat eats eating food vegetarian vegan 식단 먹 음식 채식",
    "preference.seat": "seat seats aisle window 좌석 자리",
    "preference": "like likes prefer prefers preference favorite favourite love enjoy "
    "좋아 좋아해요 선호",
    "contact.email": "email mail e-mail 이메일 메일",
    "contact.phone": "phone number mobile cell call 전화 번호 휴대폰 핸드폰",
    "contact.address": "address live 주소",
    "identity.birthday": "birthday born birth 생일 태어",
    "identity.passport": "passport 여권",
    "identity": "who 누구",
    "relationship.manager": "manager boss supervisor report reports 팀장 상사 부장 보고",
    "relationship": "family married partner wife husband girlfriend boyfriend kids children "
    "daughter son mother father mom dad sister brother friend manager boss 가족 결혼",
    "health": "health allergy allergic allergies medication medicine condition doctor "
    "diagnosed 건강 알레르기 약 병원 진단",
    "plan.trip": "trip travel traveling travelling flight fly flying vacation holiday visit "
    "여행 비행 휴가 출장",
    "plan.appointment": "appointment booking booked schedule scheduled 예약 약속 일정",
    "plan.move": "move moving relocate relocating relocation planning live 이사 이주 이사할",
    "plan": "plan plans planning going 계획 예정",
    "account": "account bank checking savings card membership loyalty 계좌 은행 카드 회원",
    "possession": "car drive own owns pet dog cat 차 자동차 강아지 고양이",
    "education": "school study studied studying degree university college major graduate "
    "학교 전공 대학 졸업",
    "education.language": "language languages learn learning learns studying study "
    "lesson lessons class textbook 언어 외국어 배우 배워 공부 교재 학원",
    "finance": "money budget salary pay paid spend spent cost price 돈 예산 월급",
    "project": "project version versions stack deploy deployed environment prod production "
    "staging decided decision convention 프로젝트 버전 배포 환경",
    "project.decision": "decided decide decision chose chosen choice use using picked pick went "
    "결정 선택",
    "project.version": "version versions running run upgrade upgraded release 버전 업그레이드",
    "project.environment": "environment environments deploy deployed deployment hosting hosted "
    "host infra infrastructure 배포 호스팅 인프라",
    "project.convention": "convention conventions rule rules style always never standard 규칙 "
    "컨벤션 스타일",
    "account.service": "subscription membership account service closed closes cancel 구독 해지",
    "identity.name": "name called who am I introduce 이름 누구",
}


def slot_words(key: str) -> list[str]:
    """The words a card of ``key`` answers to: those of each prefix of the key, and the key's
    own parts ("plan.appointment.dentist" → appointment words, plan words, "dentist")."""
    return _words_of(key, own=False)


def own_slot_words(key: str) -> list[str]:
    """The words that name this slot rather than its kind: those of each prefix below the
    category ("work.employer": job, company, …) and the key's own parts, without the
    category's general words ("identity": who; "preference": like, enjoy)."""
    return _words_of(key, own=True)


def _words_of(key: str, *, own: bool) -> list[str]:
    parts = key.split(".")
    words: list[str] = []
    for end in range(len(parts), 1 if own else 0, -1):
        words.extend(SLOT_WORDS.get(".".join(parts[:end]), "").split())
    if not own and parts[0] == "project" and len(parts) > 2:
        words.extend(SLOT_WORDS.get(f"project.{parts[2]}", "").split())  # the kind's words
    words.extend(part.replace("_", " ") for part in parts[1:])
    return list(dict.fromkeys(words))


def topic_text(key: str) -> str:
    """The slot's words as one text, for a card's lexical index."""
    return " ".join(slot_words(key))


def matching_slots(terms: Iterable[str], slot_terms: dict[str, frozenset[str]]) -> set[str]:
    """The slots (keys of ``slot_terms``, analyzed words per slot) a query's terms name."""
    wanted = set(terms)
    return {slot for slot, words in slot_terms.items() if wanted & words}
