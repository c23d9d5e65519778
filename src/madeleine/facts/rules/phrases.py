"""Statements in the language the user spoke: a fact read from a Korean sentence is stated in
Korean ("사용자는 2024-09-17에 치과 예약이 있다"), from an English one in English (the
builders' own statements). Values keep their canonical form in the attributes; a Korean
statement names places by their Korean names ("Seoul" → 서울) and picks particles by the last
syllable (이/가, 은/는, 을/를, (으)로)."""

from __future__ import annotations

from collections.abc import Callable

from madeleine.facts.rules import ko
from madeleine.facts.rules.common import Fact, attribute_value

_KOREAN_PLACES: dict[str, str] = {}
for _alias, (_canonical, _country) in ko.PLACES.items():
    _KOREAN_PLACES.setdefault(_canonical, _alias)
_KOREAN_RELATIONS: dict[str, str] = {}
for _alias, _relation in ko.RELATIONS.items():
    _KOREAN_RELATIONS.setdefault(_relation, _alias)
_KOREAN_WORDS = {
    "window": "창가",
    "aisle": "통로",
    "middle": "가운데",
    "exit row": "비상구",
    "vegetarian": "채식",
    "vegan": "비건",
    "pescatarian": "페스코 채식",
    "halal": "할랄",
    "kosher": "코셔",
    "gluten-free": "글루텐 프리",
    "keto": "키토",
    "passport": "여권",
    "drivers_license": "운전면허증",
    "id_card": "신분증",
    "visa": "비자",
    "email": "이메일",
    "phone": "전화번호",
    "address": "주소",
    "drink": "음료",
    "phone_carrier": "통신사",
    "bank": "은행",
}
_FINAL_DIGITS = frozenset("013678")  # 영 일 삼 육 칠 팔
_FINAL_LATIN = frozenset("lmn")


def _final(word: str) -> int | None:
    """The last syllable's final consonant index (0: none), or None when not Hangul."""
    word = word.rstrip(" .)'\"")
    if not word:
        return 0
    code = ord(word[-1]) - 0xAC00
    if 0 <= code < 11172:
        return code % 28
    return None


def _has_final(word: str) -> bool:
    final = _final(word)
    if final is not None:
        return final != 0
    last = word.rstrip(" .)'\"")[-1:].lower()
    return last in _FINAL_DIGITS or last in _FINAL_LATIN


def particle(word: str, with_final: str, without: str) -> str:
    """``word`` with the particle that fits it: ("예약", "이", "가") → "예약이"."""
    return word + (with_final if _has_final(word) else without)


def _ro(word: str) -> str:
    final = _final(word)
    if final == 8:  # ㄹ takes 로: "서울로"
        return word + "로"
    return particle(word, "으로", "로")


def place(name: str | None) -> str:
    return _KOREAN_PLACES.get(name or "", name or "")


def word(value: str | None) -> str:
    return _KOREAN_WORDS.get(value or "", value or "")


def _who(fact: Fact) -> str:
    if fact.subject == "user":
        return "사용자"
    if fact.relationship is not None and fact.subject == fact.relationship:
        return f"사용자의 {_KOREAN_RELATIONS.get(fact.relationship, fact.relationship)}"
    return fact.subject


def _topic(fact: Fact) -> str:
    return particle(_who(fact), "은", "는")


def _of(fact: Fact) -> str:
    return f"{_who(fact)}의"


def korean_statement(fact: Fact) -> str | None:
    """The fact stated in Korean, or None when its kind has no Korean phrasing."""
    render = _RENDER.get(fact.slot)
    if render is None:
        return None
    value = render(fact, lambda name: attribute_value(fact.attributes, name))
    return None if value is None else value


Get = Callable[[str], "str | None"]


def _status(get: Get) -> str | None:
    return get("status")


def _appointment(fact: Fact, get: Get) -> str | None:
    title, start = get("title"), get("start")
    if _status(get) == "cancelled":
        return f"{_topic(fact)} {particle(title or '예약', '을', '를')} 취소했다."
    if not title or not start:
        return None
    when = start.replace("T", " ")[:16]
    if title in ko.APPOINTMENT_PLACES:  # "치과 가요": a visit, not a booking
        return f"{_topic(fact)} {when}에 {title}에 간다."
    return f"{_topic(fact)} {when}에 {particle(title, '이', '가')} 있다."


def _trip(fact: Fact, get: Get) -> str | None:
    dest = place(get("destination"))
    if _status(get) == "cancelled":
        return f"{_topic(fact)} {dest} 여행을 취소했다."
    start, end = get("start_date"), get("end_date")
    when = f"{start}부터 {end}까지 " if start and end else f"{start}에 " if start else ""
    return f"{_topic(fact)} {when}{_ro(dest)} 여행을 계획하고 있다."


def _move(fact: Fact, get: Get) -> str | None:
    dest = place(get("destination"))
    if _status(get) == "cancelled":
        return f"{_topic(fact)} {dest} 이사를 취소했다."
    start = get("start_date")
    when = f"{start}쯤 " if start else ""
    return f"{_topic(fact)} {when}{_ro(dest)} 이사할 계획이다."


def _home(fact: Fact, get: Get) -> str | None:
    where = place(get("city")) or place(get("country"))
    return f"{_topic(fact)} {where}에 산다." if where else None


def _home_area(fact: Fact, get: Get) -> str | None:
    area, city = get("area"), place(get("city"))
    where = f"{city} {area}" if city and area else area
    return f"{_of(fact)} 집은 {where}에 있다." if where else None


def _workplace(fact: Fact, get: Get) -> str | None:
    where = place(get("city")) or place(get("country"))
    return f"{_topic(fact)} {where}에서 일한다." if where else None


def _employer(fact: Fact, get: Get) -> str | None:
    org = get("employer")
    if _status(get) == "left":
        return (
            f"{_topic(fact)} {particle(org, '을', '를')} 그만두었다."
            if org
            else (f"{_topic(fact)} 회사를 그만두었다.")
        )
    return f"{_topic(fact)} {org}에서 일한다." if org else None


def _role(fact: Fact, get: Get) -> str | None:
    role, org = get("role"), get("employer")
    if not role:
        return None
    where = f"{org}에서 " if org else ""
    return f"{_topic(fact)} {where}{_ro(role)} 일한다."


def _name(fact: Fact, get: Get) -> str | None:
    name = get("name")
    return f"{_of(fact)} 이름은 {particle(name, '이다', '다')}." if name else None


def _birthday(fact: Fact, get: Get) -> str | None:
    date = get("date")
    return f"{_of(fact)} 생일은 {date}이다." if date else None


def _like(verb: str) -> Callable[[Fact, Get], str | None]:
    def render(fact: Fact, get: Get) -> str | None:
        item = get("item")
        return f"{_topic(fact)} {particle(item, '을', '를')} {verb}." if item else None

    return render


def _avoid(fact: Fact, get: Get) -> str | None:
    item = get("item")
    return f"{_topic(fact)} {particle(item, '을', '를')} 끊었다." if item else None


def _switch(fact: Fact, get: Get) -> str | None:
    value, previous = get("value"), get("previous")
    if not value:
        return None
    before = f"{previous}에서 " if previous else ""
    return f"{_topic(fact)} {before}{_ro(value)} 바꿨다."


def _habit(fact: Fact, get: Get) -> str | None:
    value = get("value")
    if not value:
        return None
    verb = "탄다" if fact.key.endswith("commute") else "마신다" if "drink" in fact.key else "먹는다"
    return f"{_topic(fact)} {particle(value, '을', '를')} 즐겨 {verb}."


def _seat(fact: Fact, get: Get) -> str | None:
    return f"{_topic(fact)} {word(get('seat'))} 좌석을 선호한다."


def _learning(fact: Fact, get: Get) -> str | None:
    return f"{_topic(fact)} {particle(get('language') or '외국어', '을', '를')} 배우고 있다."


def _diet(fact: Fact, get: Get) -> str | None:
    return f"{_topic(fact)} {word(get('diet'))} 식단을 한다."


def _allergy(fact: Fact, get: Get) -> str | None:
    allergen = get("allergen")
    return f"{_topic(fact)} {allergen}에 알레르기가 있다." if allergen else None


def _medication(fact: Fact, get: Get) -> str | None:
    med, dose = get("medication"), get("dose")
    if not med:
        return None
    return f"{_topic(fact)} {particle(med, '을', '를')} {dose + ' ' if dose else ''}복용한다."


def _condition(fact: Fact, get: Get) -> str | None:
    condition = get("condition")
    return f"{_topic(fact)} {particle(condition, '이', '가')} 있다." if condition else None


def _relationship(fact: Fact, get: Get) -> str | None:
    relation = _KOREAN_RELATIONS.get(fact.relationship or "", fact.relationship or "")
    return f"{particle(fact.subject, '은', '는')} 사용자의 {relation}이다."


def _document(fact: Fact, get: Get) -> str | None:
    kind = word(fact.key.split(".")[-1])
    expires, number = get("expires_on"), get("number")
    if expires:
        return f"사용자의 {kind}은 {expires}에 만료된다."
    return f"사용자의 {kind} 번호는 {number}이다." if number else None


def _contact(fact: Fact, get: Get) -> str | None:
    kind = word(fact.key.split(".")[-1])
    return f"사용자의 {particle(kind, '은', '는')} {get('value')}이다."


def _number(fact: Fact, get: Get) -> str | None:
    label = get("programme") or get("bank") or "계좌"
    return f"사용자의 {label} 번호는 {get('number')}이다."


def _care_id(fact: Fact, get: Get) -> str | None:
    what = "건강보험 번호" if ".insurance." in fact.key else "환자 번호"
    where = f"{get('provider')} " if get("provider") else ""
    return f"사용자의 {where}{what}는 {get('number')}이다."


def _closed(fact: Fact, get: Get) -> str | None:
    name, when = get("name"), get("closes_on")
    what = f"{name} 계정" if name else "계정"
    return f"사용자의 {particle(what, '은', '는')} {when + '에 ' if when else ''}해지된다."


def _instruction(fact: Fact, get: Get) -> str | None:
    return f"사용자의 요청: {get('instruction')}."


_PROJECT_WORDS = {
    "auth": "인증",
    "database": "데이터베이스",
    "cache": "캐시",
    "hosting": "호스팅",
    "testing": "테스트",
    "frontend": "프론트엔드",
    "prod": "운영",
    "staging": "스테이징",
    "dev": "개발",
    "test": "테스트",
    "ci": "CI",
}


def _project(fact: Fact, get: Get) -> str | None:
    head = f"{get('project') or ''} 프로젝트는"
    env = _PROJECT_WORDS.get(get("environment") or "", get("environment") or "")
    if get("decision"):
        topic = get("topic") or ""
        about = ""
        if topic and topic.lower() != (get("decision") or "").lower():
            about = f"{_PROJECT_WORDS.get(topic, topic.replace('_', ' '))}에 "
        return f"{head} {about}{particle(get('decision') or '', '을', '를')} 쓰기로 했다."
    if get("version"):
        where = f"{env} 환경에서 " if env else ""
        used = particle(f"{get('tech')} {get('version')}", "을", "를")
        return f"{head} {where}{used} 쓴다."
    if get("platform"):
        return f"{head} {env} 환경을 {get('platform')}에 배포한다."
    if get("convention"):
        return f"{head} 규칙: {get('convention')}."
    return None


_RENDER: dict[str, Callable[[Fact, Get], str | None]] = {
    "appointment": _appointment,
    "trip": _trip,
    "move": _move,
    "home": _home,
    "home_area": _home_area,
    "workplace": _workplace,
    "employer": _employer,
    "role": _role,
    "name": _name,
    "birthday": _birthday,
    "like": _like("좋아한다"),
    "dislike": _like("싫어한다"),
    "avoid": _avoid,
    "switch": _switch,
    "habit": _habit,
    "seat": _seat,
    "learning": _learning,
    "diet": _diet,
    "allergy": _allergy,
    "medication": _medication,
    "condition": _condition,
    "relationship": _relationship,
    "document": _document,
    "contact": _contact,
    "loyalty": _number,
    "bank": _number,
    "care_id": _care_id,
    "account_closed": _closed,
    "instruction": _instruction,
    "project": _project,
}
