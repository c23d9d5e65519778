"""Open cards: whatever users say about themselves, in their own words, when no slot rule
recognised the phrasing.

The slot rules (the other modules here) read a few kinds of facts with high precision, but a
list of phrasings per slot cannot cover how people talk: "we finally got out of Chicago and
settled in Tucson", "I sold the Subaru, it's an e-bike for me now". So every first-person
statement that carries content and that no rule turned into a card becomes an *open card*:
the sentence rewritten about the user ("I adopted a puppy" → "The user adopted a puppy"),
in the language it was said in, its time resolved ("last weekend" → the dates), with the
predicate and its object as attributes. Questions, requests, hypotheticals, chatter
("sounds great!", "I'm so happy for you") and statements about the other speaker make none.

One message makes at most one open card per time it names: its statements are joined ("The
user adopted a puppy. The user named her Coco."), so a turn of three sentences about one
thing is one memory, not three near-duplicates to embed, rank and show; an undated sentence
joins the message's first card, a sentence dated otherwise starts its own.

An open card is multi-valued under ``note.<predicate>``: it never supersedes another by its
key alone (its slot is unknown); repeats are duplicates by their vectors, as every card. It
holds from the time it names, else from when it was said; a search's time range keeps it
when that moment falls inside the range (``read/facts.py``)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from madeleine.facts.cards import Attribute
from madeleine.facts.corrections import corrections_in
from madeleine.facts.rules import en, ko
from madeleine.facts.rules.common import Fact, Said, clip
from madeleine.text.temporal import parse_time_hint

OPEN_SLOT = "note"
OPEN_PREFIX = f"{OPEN_SLOT}."  # every open card's key starts so
OPEN_CONFIDENCE = 0.6
FUTURE = "future"  # the "tense" attribute of a card about what will happen
MIN_CONTENT_WORDS = 2
_PLACEHOLDER = "[pii:"  # a value the PII policy vaulted or masked

_FIRST_PERSON = re.compile(
    r"\bI\b|\bI'(?:m|ve|d|ll)\b|\b(?:my|me|mine|myself|we|we're|we've|we'd|we'll|our|ours|us"
    r"|ourselves)\b",
    re.I,
)
# asked of the assistant now ("I'd like to book a table", "I need you to…"), not about the user
_WISH_FOR_NOW = re.compile(
    r"^\W*(?:i'?d|i\s+would)\s+(?:like|love)\b|^\W*i\s+(?:need|want)\s+you\b", re.I
)
# a reaction to what was just shown or said ("I love the way the frosting turned out!")
_REACTION = re.compile(
    r"^\W*(?:i|we)\s+(?:really\s+|just\s+|so\s+|totally\s+)?(?:love|like|adore|enjoy(?:ed)?"
    r"|appreciate|admire)\s+(?:how|the\s+way|that|this|these|those|it|your|what\s+you)\b",
    re.I,
)
# a reference number ("my order number is 12345", "ABC123"): the slot rules file the numbers
# worth keeping (documents, accounts); an unlabelled one is no fact about the user
_CODE = re.compile(r"\b(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z\d]{5,}\b|\b\d{5,}\b")
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekend)"
_PERIOD = rf"(?:day|week|month|year|morning|afternoon|evening|night|{_WEEKDAY})"
_RECURRING = re.compile(
    rf"\b(?:every|each)\s+(?:other\s+|single\s+)?{_PERIOD}\b|\b(?:on\s+)?{_WEEKDAY}s\b"
    r"|\b(?:daily|weekly|monthly|yearly|nightly)\b"
    r"|매(?:일|주|달|월|년)(?:\s*[월화수목금토일]요일)?|(?:[월화수목금토일]요일|주말|아침|저녁)마다",
    re.I,
)
# the sentence tells of the past: its time words are read backwards ("on Friday": the last)
_PAST = re.compile(
    r"\b(?:was|were|had|did|went|got|ago|last|yesterday|earlier|previously|used\s+to"
    r"|[a-z]{3,}ed)\b",
    re.I,
)
_KO_PAST = re.compile(r"[었았였했]|지난|어제|전에")
_I = re.compile(r"\bi\b")  # a lower-case "i" is the pronoun in chat
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|u|ur)\b", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d+")
# words that carry no fact: function words, pronouns, and the vocabulary of reactions
_EMPTY = frozenset(
    """a an the and or but so if then than that this these those there here it its it's is am
    are was were be been being have has had do does did done to of in on at by for with from
    about as into over after before up down out off just really very so too also still even
    not no yes yeah yep nope oh ah wow hey hi hello ok okay well um uh lol haha i i'm i've
    i'd i'll me my mine myself we we're we've we'd we'll our ours us ourselves you your yours
    he she they them his her their what which who how when where why all some any much many
    more most can could would should will shall may might must gonna wanna got get gets
    thing things stuff something anything everything lot lots bit kind sort way ways
    great awesome amazing cool nice good glad happy sad sorry thanks thank love loved lovely
    like liked agree agreed sure totally absolutely definitely indeed right true exactly
    fun funny wonderful fantastic incredible beautiful sweet interesting think thought
    know knew feel felt sounds sound seems seem mean means hope hoped guess wish wished
    appreciate appreciated proud excited inspiring inspired touching means meant care
    cared totally super pretty quite always never sometimes often now today day time""".split()
)
_KO_FIRST_PERSON = re.compile(r"(?:^|\s)(?:저는|제가|저도|저희|나는|내가|나도|우리|제|내)(?=\s|$)")
_KO_SECOND_PERSON = re.compile(r"당신|너는|네가|너도|님[은이도]|세요|십시오|시죠|으시|하시")
_KO_PRONOUNS = (
    ("저희는", "사용자네는"),
    ("저희가", "사용자네가"),
    ("저희", "사용자네"),
    ("우리는", "사용자네는"),
    ("우리가", "사용자네가"),
    ("저는", "사용자는"),
    ("제가", "사용자가"),
    ("저도", "사용자도"),
    ("나는", "사용자는"),
    ("내가", "사용자가"),
    ("나도", "사용자도"),
)
_KO_WORD = re.compile(r"[\uac00-\ud7a3]{2,}|[A-Za-z]{3,}|\d+")
_KO_EMPTY = frozenset(
    """그래요 그래서 그리고 그런데 하지만 정말 진짜 너무 완전 아주 많이 조금 그냥 혹시 그럼
    감사합니다 감사해요 고마워요 고마워 좋아요 좋네요 좋겠다 좋겠네요 멋지네요 멋져요 대박
    축하해요 축하합니다 맞아요 맞아 그렇죠 그렇네요 네네 아니요 있어요 없어요 했어요 해요
    하고 있어요 같아요 저는 제가 저도 저희 나는 내가 나도 우리 오늘""".split()
)

# "I'm" and friends, then "I" + a verb: rewritten about the user
_EN_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bI'm\b|\bI\s+am\b", re.I), "the user is"),
    (re.compile(r"\bI've\b", re.I), "the user has"),
    (re.compile(r"\bI'd\b", re.I), "the user would"),
    (re.compile(r"\bI'll\b", re.I), "the user will"),
    (re.compile(r"\bI\s+was\b", re.I), "the user was"),
    (re.compile(r"\bI\s+have\b", re.I), "the user has"),
    (re.compile(r"\bI\s+do\b", re.I), "the user does"),
    (re.compile(r"\bwe're\b|\bwe\s+are\b", re.I), "the user and family are"),
    (re.compile(r"\bwe've\b", re.I), "the user and family have"),
    (re.compile(r"\bwe'll\b", re.I), "the user and family will"),
    (re.compile(r"\bwe'd\b", re.I), "the user and family would"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
    (re.compile(r"\b(?:my|mine)\b", re.I), "the user's"),
    (re.compile(r"\b(?:our|ours)\b", re.I), "the user's"),
    (re.compile(r"\bwe\b", re.I), "the user and family"),
    (re.compile(r"\bus\b", re.I), "the user and family"),
    (re.compile(r"\bme\b", re.I), "the user"),
)
# words after "I" that take no -s ("I sold", "I really", "I can"): past tenses that do not end
# in -ed, modals, adverbs that do not end in -ly; any other word there is a present-tense verb
# that agrees with "the user" ("I commute" → "the user commutes")
_NO_AGREEMENT = frozenset(
    """was were had did went got made saw took came gave found felt kept left lost met paid
    put ran read said sat sent set sold spent stood told thought bought brought caught taught
    fought sought built began broke chose drew drove ate fell flew forgot froze grew hid hit
    hung held hurt knew laid led lent let lit meant rode rang rose shook shot showed shut sang
    misread reread sank slept slid spoke stole struck swam swore threw understood woke wore
    won wrote became
    overcame undertook dealt dug fed fled forgave heard quit split spread bet cast cut
    can could will would shall should may might must ought am
    also just still never always often even already too soon once again ever almost rather
    quite sometimes usually really recently finally currently mostly actually totally
    definitely probably certainly truly simply barely hardly nearly merely only kinda sorta
    gotta gonna wanna used no not myself personally honestly basically""".split()
)
_PREDICATE_SKIP = frozenset(
    """is was has have had would will can could should do does did am are were be been also
    just really still never always finally recently usually often now even totally already
    actually mostly currently sometimes only not and family the user to s""".split()
)


def open_facts(said: Said) -> list[Fact]:
    """The open card of one sentence the user said, or none (see the module)."""
    text = said.text.strip()
    if not text or _asks(said) or _hypothetical(said) or _PLACEHOLDER in text:
        return []  # a vaulted value is filed by its slot rule or not at all
    if corrections_in(replace(said.message, text=text)):
        return []  # "it's Friday, not Thursday": the correction versions what it corrects
    if said.korean:
        return _korean(said, text)
    return _english(said, text)


def joined(facts: list[Fact]) -> list[Fact]:
    """The open cards of one message, one per time they name (see the module): statements
    joined in order, the first card's predicate and time, the objects' words together."""
    groups: list[list[Fact]] = []
    for fact in facts:
        when = _attribute(fact, "when")
        for group in groups:
            if when is None or _attribute(group[0], "when") == when:
                group.append(fact)
                break
        else:
            groups.append([fact])
    return [_join(group) for group in groups]


def _attribute(fact: Fact, name: str) -> str | None:
    return next((a.value for a in fact.attributes if a.name == name), None)


def _join(group: list[Fact]) -> Fact:
    head = group[0]
    if len(group) == 1:
        return head
    words = list(dict.fromkeys(w for f in group for w in (_attribute(f, "object") or "").split()))
    attributes = tuple(
        a.model_copy(update={"value": clip(" ".join(words), 500)}) if a.name == "object" else a
        for a in head.attributes
    )
    statement = " ".join(f.statement for f in group)
    return replace(head, statement=clip(statement, 1000), attributes=attributes)


def _asks(said: Said) -> bool:
    text = said.text.rstrip()
    if text.endswith("?") or en.QUESTION_START.match(text) or en.REQUEST.search(text):
        return True
    if _WISH_FOR_NOW.match(text) or _REACTION.match(text) or _CODE.search(text):
        return True
    return said.korean and bool(ko.QUESTION_END.search(text) or ko.REQUEST.search(text))


def _hypothetical(said: Said) -> bool:
    head = said.text[:40]
    return bool(en.HYPOTHETICAL.match(head.lstrip()) or ko.HYPOTHETICAL.search(said.text))


def _english(said: Said, text: str) -> list[Fact]:
    text = _I.sub("I", text)
    if not _FIRST_PERSON.search(text):
        return []
    words = [w.lower() for w in _WORD.findall(text)]
    content = [w for w in words if w not in _EMPTY and len(w) > 1]
    if len(content) < MIN_CONTENT_WORDS:
        return []
    if _SECOND_PERSON.search(text) and len(content) < 2 * MIN_CONTENT_WORDS:
        return []  # about the other speaker, with little of the user's own in it
    statement = _about_user(text)
    predicate = _predicate(statement)
    return [_fact(said, statement, predicate, content)]


def _korean(said: Said, text: str) -> list[Fact]:
    first_person = _KO_FIRST_PERSON.search(text) is not None
    if not first_person and _KO_SECOND_PERSON.search(text):
        return []  # addressed to the other speaker
    content = [w for w in _KO_WORD.findall(text) if w not in _KO_EMPTY]
    if len(content) < MIN_CONTENT_WORDS + (0 if first_person else 1):
        return []
    statement = _about_user_ko(text)
    predicate = content[-1]
    return [_fact(said, statement, predicate, content)]


def restated(text: str, *, korean: bool) -> str:
    """A sentence as its open card states it: about the user, in the language it was said."""
    return _about_user_ko(text) if korean else _about_user(_I.sub("I", text))


def _about_user_ko(text: str) -> str:
    statement = text
    for pronoun, user in _KO_PRONOUNS:
        statement = re.sub(rf"(?:^|(?<=\s)){pronoun}(?=\s|$)", user, statement)
    return statement if statement != text else f"사용자: {text}"


def _about_user(text: str) -> str:
    """The sentence with its first person turned into "the user" (and the verb after a bare
    "I" agreeing with it), capitalised, ending with a full stop."""
    out = text
    for pattern, replacement in _EN_REWRITES:
        out = pattern.sub(replacement, out)
    out = re.sub(r"\bI\s+([a-z]+)\b", _third_person, out)
    out = re.sub(r"\bI\b", "the user", out)
    out = out.strip().rstrip("!.,;: ")
    return f"{out[:1].upper()}{out[1:]}."


def _third_person(match: re.Match[str]) -> str:
    verb = match[1]
    if verb in _NO_AGREEMENT or verb.endswith(("ed", "ly")) or len(verb) < 2:
        return f"the user {verb}"
    if verb.endswith("s") and not verb.endswith("ss"):
        return f"the user {verb}"
    if verb in ("have", "do", "go"):
        return f"the user {dict(have='has', do='does', go='goes')[verb]}"
    if verb.endswith(("sh", "ch", "x", "z", "o", "ss")):
        return f"the user {verb}es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return f"the user {verb[:-1]}ies"
    return f"the user {verb}s"


def _predicate(statement: str) -> str:
    """The first word after "the user" that is not an auxiliary: the statement's verb."""
    found = re.search(r"\bthe user\b", statement, re.I)
    tail = statement[found.end() :] if found is not None else statement
    for word in _WORD.findall(tail.lower()):
        if word not in _PREDICATE_SKIP and not word.endswith("ly"):
            return str(word)
    return "statement"


def _fact(said: Said, statement: str, predicate: str, content: list[str]) -> Fact:
    when = _when(said)
    attributes = [
        Attribute(name="predicate", value=clip(predicate, 64), unit=None),
        Attribute(name="object", value=clip(" ".join(content), 500), unit=None),
    ]
    valid_from = said.now  # said at that moment: search's time ranges place it there
    if when is not None:
        start, end = when
        attributes.append(
            Attribute(name="when", type="date", value=start.date().isoformat(), unit=None)
        )
        span = start.date().isoformat()
        if end is not None and end.date() != start.date():
            span = f"{span} to {end.date().isoformat()}"
            attributes.append(
                Attribute(name="until", type="date", value=end.date().isoformat(), unit=None)
            )
        statement = f"{statement.rstrip('.')} ({span})."
        if start.date() > said.now.date():
            attributes.append(Attribute(name="tense", value=FUTURE, unit=None))
        valid_from = start
    key = f"{OPEN_PREFIX}{_key_word(predicate)}"
    return Fact(
        slot=OPEN_SLOT,
        key=key,
        statement=clip(statement, 1000),
        attributes=tuple(attributes),
        confidence=OPEN_CONFIDENCE,
        valid_from=valid_from,
    )


def _when(said: Said) -> tuple[datetime, datetime | None] | None:
    """When the sentence says it happens: a bare weekday or date is read forward ("the
    meeting is on Thursday": the coming one) unless the sentence speaks of the past. A
    recurrence ("every Saturday", "매주 토요일") is a habit, not a date: it is read past."""
    said = replace(said, text=_RECURRING.sub(" ", said.text))
    if _PAST.search(said.text) or (said.korean and _KO_PAST.search(said.text)):
        return _behind(said) or _ahead(said)
    return _ahead(said) or _behind(said)


def _behind(said: Said) -> tuple[datetime, datetime | None] | None:
    hint = parse_time_hint(said.text, said.now)
    if hint is not None and hint.start is not None:
        return hint.start, hint.end
    return None


def _ahead(said: Said) -> tuple[datetime, datetime | None] | None:
    ahead = said.when()
    if ahead is None:
        return None
    zone = said.now.tzinfo
    start = datetime.combine(ahead.start, datetime.min.time(), tzinfo=zone)
    end = None
    if ahead.end is not None:
        end = datetime.combine(ahead.end, datetime.min.time(), tzinfo=zone)
    return start, end


def _key_word(word: str) -> str:
    cleaned = re.sub(r"[^0-9a-z\uac00-\ud7a3]+", "_", word.lower()).strip("_")
    return cleaned[:40] or "statement"
