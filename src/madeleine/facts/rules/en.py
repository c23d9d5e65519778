"""English fact patterns for the rule extractor, and the marks of a sentence that asks, hedges
or supposes rather than tells.

Patterns are data: ``PATTERNS`` is a table of (kind, regex) rows; the extractor maps each
kind to the card it builds and reads the named groups (``item``, ``dest``, ``seat``…). Every
pattern is compiled case-insensitive; names and places are matched case-sensitively inside
``(?-i:…)`` so "my daughter Sarah" is a name and "my daughter really" is not.
"""

from __future__ import annotations

import re

from madeleine.facts.rules.en_words import (
    CITIES,
    CONDITIONS,
    COUNTRIES,
    EN_LANGUAGE,
    RELATIONS,
    ROLES,
)
from madeleine.facts.rules.tables import PLACEHOLDER

# ------------------------------------------------------------------------ fragments

_NAME = r"(?-i:(?:(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+)?[A-Z][a-z]+(?:-[A-Z]?[a-z]+)?(?:\s+[A-Z][a-z]+)?)"
_RELS = "|".join(re.escape(r) for r in sorted(RELATIONS, key=len, reverse=True))
_RELS = _RELS.replace(r"\ ", r"\s+").replace(r"\-", r"[-\s]?")
_ADV = (
    r"(?:(?:really|truly|absolutely|just|also|still|now|currently|actually|definitely|totally"
    r"|mostly|usually|generally|strictly|always|very|so|quite|pretty|kinda|kind\s+of|sort\s+of"
    r"|do|does|honestly|seriously|particularly|especially|even|both|all|personally)\s+)*"
)
_WHO = (
    rf"(?P<who>\b(?:I|we)\b|\bmy\s+(?P<rel>{_RELS})(?:\s*,?\s+(?P<relname>{_NAME}))?\s*,?"
    rf"|\b(?P<name>{_NAME}))"
)
_BE = r"(?:'m|'s|'re|\s+am|\s+is|\s+are)\b"
_STOP_AHEAD = (
    r"\s+(?:but|because|'cause|cause|cuz|since|so|though|although|when|whenever|while|if"
    r"|unless|which|who|whereas|except|especially|anymore|any\s+more|lately|these\s+days"
    r"|nowadays|please)\b|\s+[-–—]\s|\s*[-–—]\s*$"
    r"|\s*,?\s+(?:and|or)\s+(?:I|I'm|my|we|he|she|they|it|you|also|then|so|hates?|loves?"
    r"|likes?|dislikes?|enjoys?|prefers?|is|are|has|have|wants?|needs?|takes?|lives?|works?"
    r"|goes|go|can|can't|will|would|doesn't|don't|never|always)\b"
    r"|,\s*(?:I|my|we|but|so|because|which|although|though|it|he|she|they|please|thanks"
    r"|thank|remember|don't|ok|okay|as\s+(?:always|usual|ever)|of\s+course)\b"
    r"|\s+(?:too|as\s+well|a\s+lot|so\s+much|very\s+much|the\s+most)\s*(?:[,;!?-]|$)"
)


def item(group: str = "item") -> str:
    """A noun phrase running to the end of its clause (the extractor splits lists)."""
    return rf"(?P<{group}>(?:(?!{_STOP_AHEAD})[^.;!?\n()])+)"


# a place: a known city/country in any case, or a run of capitalized words
_GAZETTEER = "|".join(
    re.escape(p) for p in sorted({*CITIES, *COUNTRIES}, key=len, reverse=True) if len(p) > 2
)
PLACE_BODY = (
    rf"(?:(?<![\w])(?:{_GAZETTEER})(?![\w])|(?-i:[A-Z][\w'.-]*(?:\s+(?:of\s+|de\s+|del\s+"
    r"|la\s+|am\s+)?[A-Z][\w'.-]*){0,3}))"
)


def place(group: str) -> str:
    return rf"(?P<{group}>{PLACE_BODY})"


_ORG = r"(?-i:[A-Z0-9][\w&'.+-]*(?:\s+(?:of\s+|&\s+|the\s+)?[A-Z0-9][\w&'.+-]*){0,4})"
_ID = (
    rf"(?P<value>{PLACEHOLDER}|\+?\(?\d[\d\s().-]{{3,}}\d|(?=[a-z0-9-]*\d)[a-z0-9][a-z0-9-]{{3,}})"
)
_DOSE = (
    r"(?P<dose>\d+(?:\.\d+)?\s*(?:mg|mcg|µg|g|ml|iu|units?|milligrams?|micrograms?|puffs?)\b"
    r"(?:\s+(?:once|twice|three\s+times)\s+(?:a|per)\s+day|\s+(?:daily|nightly|weekly)"
    r"|\s+every\s+(?:day|morning|night|evening|\d+\s+hours))?)"
)
_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_DOCS = (
    r"(?P<doc>passport|driver'?s'?\s+licen[cs]e|driving\s+licen[cs]e|licen[cs]e|id\s+card"
    r"|national\s+id(?:\s+card)?|visa|residence\s+permit|green\s+card)"
)
_APPOINTMENT_NOUNS = (
    r"appointment|appt|check-?up|meeting|interview|consultation|session|exam|surgery"
    r"|procedure|class|lesson|reservation|visit|cleaning|physical|screening|scan|vaccination"
)
_WITH = (
    r"(?:dr\.?\s+|doctor\s+)?(?-i:[A-Z][\w'.-]*)(?:\s+(?-i:[A-Z][\w'.-]*))?"
    r"|the\s+\w+|my\s+\w+|an?\s+\w+"
)

# ---------------------------------------------------------------------------- table

_ROWS: list[tuple[str, str]] = [
    # ---- relationships (also read first, to know who "Sarah" is)
    ("relation", rf"\bmy\s+(?:new\s+)?(?P<rel>{_RELS})\s*,?\s+(?P<person>{_NAME})"),
    (
        "relation",
        rf"\bmy\s+(?:new\s+|current\s+)?(?P<rel>{_RELS})\s+is\s+(?:now\s+)?(?P<person>{_NAME})\b",
    ),
    (
        "relation",
        rf"\b(?P<person>{_NAME})\s*,?\s+(?:is|'s)\s+(?:now\s+)?my\s+(?:new\s+)?(?P<rel>{_RELS})\b",
    ),
    ("relation", rf"\b(?P<person>{_NAME})\s*,\s*my\s+(?P<rel>{_RELS})\s*,"),
    (
        "relation",
        rf"\bmy\s+(?P<rel>{_RELS})(?:'s\s+name\s+is|\s+is\s+(?:named|called))\s+(?P<person>{_NAME})",
    ),
    (
        "relation",
        rf"\b(?:I|we)\s*(?:have|'ve\s+got|got)\s+(?:an?\s+|one\s+)?(?P<rel>{_RELS})\s*"
        rf"(?:,\s*|\s+(?:named|called)\s+)(?P<person>{_NAME})",
    ),
    # ---- seats
    (
        "seat",
        rf"\b(?:I|we)(?:'d|\s+would)?\s+{_ADV}(?:prefer|like|love|want|need|choose|pick|book|get"
        r"|take|request)"
        r"\s+(?:to\s+(?:sit\s+in|book|get|have|take|be\s+in)\s+)?(?:an?\s+|the\s+)?"
        r"(?P<seat>window|aisle|middle|exit[-\s]row|front[-\s]row|bulkhead)\s+(?:seats?|row)\b",
    ),
    (
        "seat",
        rf"\b(?:I|we)\s+{_ADV}(?:prefer\s+to\s+|like\s+to\s+|love\s+to\s+)?sit\s+(?:in|by|at|on)"
        r"\s+(?:an?\s+|the\s+)?(?P<seat>window|aisle|exit\s+row|front\s+row)\b",
    ),
    (
        "seat",
        r"\b(?P<seat>window|aisle|exit[-\s]row)\s+seats?\s*,?\s*(?:please|if\s+possible"
        r"|preferably|(?:is|are)\s+(?:my\s+|always\s+my\s+)?(?:preferred|preference|favou?rite"
        r"|best|a\s+must))",
    ),
    (
        "seat",
        r"\bmy\s+(?:preferred|favou?rite|usual)\s+seat(?:\s+type)?\s+(?:is|:)\s*(?:an?\s+|the\s+)?"
        r"(?P<seat>window|aisle|middle|exit[-\s]row|bulkhead)",
    ),
    (
        "seat",
        r"\b(?:my\s+)?seat(?:ing)?\s+preference\s*(?:is|:)\s*(?:an?\s+|the\s+)?"
        r"(?P<seat>window|aisle|middle|exit[-\s]row|bulkhead)",
    ),
    (
        "seat",
        r"\balways\s+(?:book|get|give|reserve|find|put)\s+(?:me|us)\s+(?:in\s+)?(?:an?\s+|the\s+)?"
        r"(?P<seat>window|aisle|exit[-\s]row|bulkhead)\s+(?:seats?|row)\b",
    ),
    # ---- diets
    (
        "diet",
        rf"{_WHO}{_BE}\s+{_ADV}(?:an?\s+)?(?:strict\s+|full\s+|lifelong\s+)?(?P<diet>vegetarian"
        r"|veggie|vegan|pescatarian|pescetarian|lacto-ovo(?:\s+vegetarian)?|flexitarian"
        r"|gluten[-\s]free|dairy[-\s]free|keto|paleo|plant[-\s]based)\b(?!\s+(?:restaurants?"
        r"|food|options?|meals?|menus?|places?|dish(?:es)?|recipes?|friendly))",
    ),
    (
        "diet",
        rf"{_WHO}\s*{_ADV}(?:only\s+)?(?:eats?|keeps?|follows?|observes?)\s+(?:only\s+)?"
        r"(?:a\s+|an\s+)?(?:strict\s+)?(?P<diet>halal|kosher|vegan|vegetarian|plant[-\s]based"
        r"|gluten[-\s]free|keto|paleo|pescatarian|dairy[-\s]free|low[-\s]carb)\b",
    ),
    (
        "diet",
        rf"{_WHO}{_BE}\s+{_ADV}on\s+(?:an?\s+|the\s+)?(?:strict\s+)?(?P<diet>keto|ketogenic|paleo"
        r"|vegan|vegetarian|low[-\s]carb|gluten[-\s]free|plant[-\s]based|halal|kosher)\s+diet",
    ),
    (
        "diet",
        rf"{_WHO}\s*(?:don't|do\s+not|doesn't|does\s+not|never)\s+(?:eat|consume)\s+"
        r"(?P<diet>meat|any\s+meat|animal\s+products)\b",
    ),
    (
        "diet",
        r"\bmy\s+diet\s+is\s+(?:strictly\s+)?(?P<diet>vegetarian|vegan|halal|kosher|keto|paleo"
        r"|pescatarian|gluten[-\s]free|plant[-\s]based)\b",
    ),
    # ---- identity documents: expiry and numbers
    (
        "document",
        rf"\b(?:my\s+(?:(?P<nation>[a-z.]+)\s+)?){_DOCS}(?:\s+\w+)?\s+(?:expires?|expiring|expired"
        r"|will\s+expire|is\s+expiring|runs\s+out|is\s+valid\s+(?:until|till|through|thru)"
        r"|(?:expiry|expiration)\s+(?:date\s+)?is|is\s+good\s+(?:until|till|through))\b",
    ),
    (
        "document",
        rf"\b{_DOCS}\s+(?:expiry|expiration)(?:\s+date)?\s*(?:is|:)",
    ),
    # ---- labelled identifiers: loyalty, bank, contact, documents
    (
        "identifier",
        r"\b(?:my|our)\s+(?P<label>(?:[a-z&'.-]+\s+){0,5}?)(?P<noun>(?:account\s+)?"
        r"(?:number|no\.?|num|#|id)|account|acct)(?:\s+(?:with|for|at|on)\s+(?P<org>"
        rf"{_ORG}))?\s*(?:is|was|=|:|-)?\s*(?:still\s+)?{_ID}",
    ),
    (
        "identifier",
        r"\b(?P<label>routing|aba|iban|swift)\s+(?P<noun>number|no\.?|#|code)?\s*(?:is|:)?\s*"
        rf"{_ID}",
    ),
    (
        "email",
        r"\b(?:my\s+(?:\w+\s+)?e-?mail(?:\s+address)?\s*(?:is|'s|:)|(?:e-?mail|reach|contact)\s+me"
        rf"\s+at)\s*(?P<value>{PLACEHOLDER}|{_EMAIL})",
    ),
    (
        "phone",
        r"\b(?:call|text|reach|ring|phone)\s+me\s+(?:at|on)\s*"
        rf"(?P<value>{PLACEHOLDER}|\+?\(?\d[\d\s().-]{{5,}}\d)",
    ),
    (
        "address",
        r"\b(?:my\s+(?:home\s+|mailing\s+|new\s+|current\s+|shipping\s+)?address\s*(?:is|'s|:)"
        r"|I\s+live\s+at)\s*(?P<value>\d[^!?\n]{4,120}|[^!?\n]*\d[^!?\n]{2,120})",
    ),
    (
        "identifier",
        r"(?P<bare>)\b(?P<label>(?-i:[A-Z][\w&'-]*)(?:\s+(?-i:[A-Z][\w&'-]*)){0,3})\s+"
        r"(?P<noun>number|no\.?|#|id|member(?:ship)?\s+(?:number|no\.?|#|id))\s*(?:is|:)?\s*"
        rf"{_ID}",
    ),
    # ---- identity
    ("name", rf"\bmy\s+name\s*(?:is|'s)\s+(?P<person>{_NAME})"),
    ("name", rf"\b(?:please\s+)?(?:call\s+me|I\s+go\s+by)\s+(?P<person>{_NAME})"),
    (
        "greeting_name",
        r"^(?:(?:hi|hello|hey|hiya|howdy|greetings|good\s+(?:morning|afternoon|evening))"
        r"(?:\s+there|\s+everyone|\s+all)?\W+)(?:(?:so|well|ok|okay)\W+)?"
        rf"(?:I'm|I\s+am|it's|this\s+is)\s+(?P<person>{_NAME})\b(?!['\w-])",
    ),
    (
        "greeting_name",
        rf"^(?:I'm|I\s+am)\s+(?P<person>{_NAME})\s*(?:,|\.|!|-|–)?\s*(?:nice|pleased|glad"
        r"|good|great)\s+to\s+meet\s+you",
    ),
    (
        "greeting_name",
        rf"^(?:I'm|I\s+am)\s+(?P<person>{_NAME})\s*[.!]?$",
    ),
    (
        "greeting_name",
        rf"^(?:I'm|I\s+am)\s+(?P<person>{_NAME}),?\s+(?:by\s+the\s+way|btw)\b",
    ),
    (
        "greeting_name",
        r"^(?:(?:hi|hello|hey)(?:\s+there|\s+everyone|\s+all)?\W+)"
        rf"(?P<person>{_NAME})\s+here\b",
    ),
    (
        "birthday",
        rf"(?:\bmy|\b(?:my\s+(?P<rel>{_RELS})(?:\s+(?P<relname>{_NAME}))?|(?P<name>{_NAME}))'s)"
        r"\s+(?:birthday|bday|date\s+of\s+birth)\s+(?:is|'s|falls\s+on|:)",
    ),
    ("birthday", r"\b(?:I|we)\s+was\s+born\s+(?:on|in)\b"),
    # ---- health
    (
        "allergy",
        rf"{_WHO}{_BE}\s+{_ADV}(?:severely\s+|mildly\s+|deathly\s+|highly\s+|slightly\s+|very\s+)?"
        rf"allergic\s+to\s+{item('allergen')}",
    ),
    (
        "allergy",
        rf"{_WHO}\s*(?:has|have|'ve\s+got|has\s+got|'s\s+got|got)\s+(?:an?\s+|some\s+)?"
        r"(?:(?:severe|mild|serious|bad|life-threatening|slight|major|minor|known|deadly)\s+)?"
        r"(?P<allergen>[\w-]+(?:\s+[\w-]+)?)\s+allerg(?:y|ies)\b",
    ),
    (
        "allergy",
        rf"{_WHO}\s*(?:has|have|'ve\s+got|has\s+got|got)\s+(?:an?\s+|some\s+)?(?:severe\s+)?"
        rf"allerg(?:y|ies)\s+to\s+{item('allergen')}",
    ),
    (
        "allergy",
        r"(?:^|\bmy\s+|\bwith\s+an?\s+)(?:(?:severe|mild|serious|bad|life-threatening)\s+)?"
        r"(?P<allergen>[\w-]+(?:\s+[\w-]+)?)\s+allergy\b",
    ),
    ("allergy", rf"^\s*(?:my\s+)?allergies\s*(?::|are|include)\s*{item('allergen')}"),
    (
        "allergy",
        r"^\s*(?:(?:also|and|oh|btw|fyi)\W+)*(?:severely\s+|very\s+)?allergic\s+to\s+"
        rf"{item('allergen')}",
    ),
    (
        "medication",
        rf"{_WHO}\s*{_ADV}(?P<verb>take|takes|am\s+taking|'m\s+taking|is\s+taking|'s\s+taking"
        r"|are\s+taking|'re\s+taking|use|uses|am\s+on|'m\s+on|is\s+on|'s\s+on|have\s+been\s+taking"
        r"|'ve\s+been\s+taking|has\s+been\s+taking|was\s+prescribed|were\s+prescribed"
        r"|'ve\s+been\s+prescribed|have\s+been\s+prescribed|has\s+been\s+prescribed|got\s+prescribed"
        r"|was\s+put\s+on|started\s+taking|started\s+on)\s+(?:an?\s+|some\s+|my\s+|daily\s+)?"
        rf"(?P<med>[a-z][\w-]*(?:\s+(?!\d)[a-z][\w-]*)?)(?:\s+{_DOSE})?",
    ),
    (
        "medication",
        r"\b(?:my\s+doctor|the\s+doctor|they)\s+(?:put\s+me\s+on|prescribed\s+(?:me\s+)?)\s*"
        rf"(?:an?\s+|some\s+)?(?P<med>[a-z][\w-]*(?:\s+(?!\d)[a-z][\w-]*)?)(?:\s+{_DOSE})?",
    ),
    (
        "condition",
        rf"{_WHO}\s*{_ADV}(?:has|have|'ve\s+got|has\s+got|'s\s+got|suffers?\s+from|lives?\s+with"
        rf"|struggles?\s+with|deals?\s+with)\s+(?:(?:mild|severe|chronic|bad)\s+)?(?P<condition>"
        rf"{CONDITIONS})\b",
    ),
    (
        "condition",
        rf"{_WHO}\s*(?:was|were|'ve\s+been|have\s+been|has\s+been|'s\s+been|got|just\s+got)\s+"
        rf"diagnosed\s+with\s+{item('condition')}",
    ),
    (
        "condition",
        rf"{_WHO}{_BE}\s+{_ADV}(?P<adjective>diabetic|asthmatic|epileptic|anemic|anaemic"
        r"|lactose[-\s]intolerant|gluten\s+intolerant|celiac|coeliac|colou?r[-\s]?blind"
        r"|hypertensive|dyslexic|pregnant|deaf|hard\s+of\s+hearing)\b",
    ),
    # ---- plans: appointments and trips
    (
        "appointment",
        r"\b(?:I|we)\s*(?:have|'ve\s+got|have\s+got|got|'ve|am\s+having|'m\s+having|have\s+booked"
        r"|'ve\s+booked|booked|scheduled|'ve\s+scheduled|made)\s+(?:an?\s+|my\s+|the\s+)?"
        r"(?:(?:follow-up|annual|routine|quick|regular|first|second|next|final|big)\s+)?"
        r"(?P<what>(?:[\w'.-]+\s+){0,2}?)(?P<noun>"
        rf"{_APPOINTMENT_NOUNS})s?\b(?:\s+(?:with|at)\s+(?P<with>{_WITH}))?",
    ),
    (
        "appointment",
        r"^(?:(?:also|and|ok|okay|so|btw|fyi|just)\W+)*(?:have\s+|got\s+)?(?:booked|scheduled"
        r"|made)\s+(?:an?\s+|my\s+|the\s+)?(?:(?:follow-up|annual|routine|quick|regular|first"
        r"|second|next|final)\s+)?(?P<what>(?:[\w'.-]+\s+){0,2}?)(?P<noun>"
        rf"{_APPOINTMENT_NOUNS})s?\b(?:\s+(?:with|at)\s+(?P<with>{_WITH}))?",
    ),
    (
        "appointment",
        r"\bmy\s+(?:(?:next|annual|follow-up|routine)\s+)?(?P<what>(?:[\w'.-]+\s+){0,2}?)"
        rf"(?P<noun>{_APPOINTMENT_NOUNS})(?:\s+(?:with|at)\s+(?P<with>{_WITH}))?\s+(?:is|has\s+been"
        r"|was\s+(?:moved|rescheduled|changed)|got\s+(?:moved|rescheduled))\b",
    ),
    (
        "appointment",
        r"^(?:(?:also|and|oh|btw|fyi|reminder|remember)\W+)*(?:(?:a|an|my|the)\s+)?(?P<what>"
        r"[\w'.-]+(?:\s+[\w'.-]+)?)\s+(?P<noun>appointment|appt|meeting|interview|check-?up)\s+"
        r"(?=on\b|at\b|tomorrow|today|tonight|next\b|this\b)",
    ),
    (
        "appointment",
        r"\b(?:I|we)(?:'m|\s+am|'re|\s+are)\s+(?:seeing|visiting|going\s+to(?:\s+see)?)\s+"
        r"(?:the\s+|my\s+|a\s+)?(?P<with>dentist|doctor|dermatologist|orthodontist|optometrist"
        r"|eye\s+doctor|therapist|physio|physiotherapist|chiropractor|gynecologist|pediatrician"
        r"|vet|hairdresser|barber|cardiologist|specialist|surgeon|psychiatrist|counselor)\b",
    ),
    (
        "appointment",
        r"\b(?:I|we)(?:'m|\s+am|'re|\s+are)\s+(?:getting|having)\s+(?:an?\s+|my\s+)?"
        r"(?P<what>haircut|surgery|teeth\s+cleaning|tooth\s+pulled|wisdom\s+teeth\s+(?:out|removed)"
        r"|blood\s+test|blood\s+work|mri|x-ray|colonoscopy|vaccine|flu\s+shot|booster)\b",
    ),
    (
        "trip_request",
        r"\b(?:book|find|get|reserve|search\s+for|look\s+for|look\s+up|check|buy|need|want|booking"
        r"|finding|arrange|sort\s+out|organi[sz]e)\s+(?:me\s+|us\s+)?(?:an?\s+|the\s+|some\s+|my\s+"
        r"|our\s+|two\s+|2\s+)?(?:(?:cheap|cheapest|direct|nonstop|non-stop|one-way|round[-\s]trip"
        r"|return|morning|evening|red-?eye|early|late|business\s+class|first\s+class|economy)\s+)*"
        r"(?P<mode>flights?|plane\s+tickets?|air\s*fares?|airline\s+tickets?|train(?:\s+tickets?)?"
        r"|rail\s+tickets?|bus(?:\s+tickets?)?|tickets?|hotels?|rooms?|trip|rental\s+car|car"
        r"|accommodations?|ferry)\s+(?:from\s+(?P<origin>[\w. ]{2,30}?)\s+)?(?:to|in|for|into"
        rf"|at)\s+(?:the\s+)?{place('dest')}",
    ),
    (
        "trip",
        r"\b(?:I|we)(?:'m|\s+am|'re|\s+are|'ll\s+be|\s+will\s+be)\s+(?:just\s+|finally\s+|also\s+"
        r"|actually\s+)?(?P<verb>flying|travell?ing|heading|headed|going|off|driving|taking\s+"
        r"(?:a|the)\s+(?:train|bus|ferry)|leaving|departing|visiting)\s+(?:back\s+|out\s+|over\s+"
        rf"|down\s+|up\s+|there\s+)?(?:to\s+|for\s+)?(?:the\s+)?{place('dest')}",
    ),
    (
        "trip",
        r"\b(?:I|we)(?:'ll|'m\s+going\s+to|'re\s+going\s+to|'m\s+planning\s+to|'re\s+planning"
        r"\s+to|\s+(?:will|plan\s+to|am\s+planning\s+to|are\s+planning\s+to|need\s+to|have\s+to"
        r"|am\s+going\s+to|are\s+going\s+to|intend\s+to))\s+(?P<verb>go|fly|travel|head|drive"
        r"|visit|be\s+in|be\s+flying|be\s+going|be\s+travell?ing|be\s+heading)\s+(?:back\s+|out\s+"
        rf"|over\s+|down\s+)?(?:to\s+)?(?:the\s+)?{place('dest')}",
    ),
    (
        "trip",
        r"\b(?:I|we)\s+(?P<verb>fly|travel|leave\s+for|depart\s+for|head\s+to)\s+(?:out\s+|back\s+)?"
        rf"(?:to\s+)?(?:the\s+)?{place('dest')}",
    ),
    (
        "trip",
        r"\b(?:I|we)\s*(?:have|'ve\s+got|got|booked|'ve\s+booked|have\s+booked|am\s+planning"
        r"|'m\s+doing|am\s+doing|'re\s+doing|are\s+doing"
        r"|'m\s+planning|are\s+planning|'re\s+planning|am\s+taking|'m\s+taking|are\s+taking|'re\s+"
        r"taking)\s+(?:an?\s+|my\s+|our\s+|the\s+)?(?:(?:upcoming|business|work|family|short"
        r"|long|weekend|quick|little|big|road|honeymoon|school|ski|beach|solo)\s+)*"
        r"(?P<mode>trip|flight|vacation|holiday|getaway|conference|tour|cruise|honeymoon|train"
        rf"\s+ride)\s+(?:to|in)\s+(?:the\s+)?{place('dest')}",
    ),
    (
        "trip",
        r"\b(?:I|we)\s*(?:'ve\s+|have\s+)?booked\s+(?:an?\s+|my\s+|our\s+|the\s+)?(?:(?:summer"
        r"|winter|spring|fall|autumn|family|next)\s+)?(?P<mode>vacation|holiday|trip|getaway"
        r"|honeymoon)\s*[:,-]?\s+(?:(?:two|three|four|one|a|\d+)\s+(?:weeks?|days?|nights?)\s+)?"
        rf"(?:in|to)\s+(?:the\s+)?{place('dest')}",
    ),
    (
        "trip",
        r"\bmy\s+(?:upcoming\s+|next\s+|business\s+)?(?P<mode>trip|flight|vacation|holiday"
        rf"|train)\s+to\s+(?:the\s+)?{place('dest')}",
    ),
    # ---- where the user lives and works
    (
        "home",
        rf"{_WHO}\s*{_ADV}(?:live|lives|reside|resides|(?:have|'ve|has|'s)\s+been\s+living"
        r"|(?:am|'m|is|'s|are|'re)\s+(?:now\s+|currently\s+)?(?:living|based|residing|settled"
        rf"|located|staying))\s+in\s+(?:the\s+)?{place('place')}",
    ),
    (
        "moved",
        rf"{_WHO}\s*{_ADV}(?:have\s+|'ve\s+|has\s+|'s\s+|had\s+)?(?:just\s+|recently\s+|finally"
        r"\s+|officially\s+)?(?:moved|relocated|emigrated)\s+(?:back\s+|over\s+|out\s+|here\s+"
        rf"|house\s+)?(?:from\s+{place('old')}\s+)?to\s+(?:the\s+)?{place('place')}",
    ),
    ("home", rf"\bmy\s+(?:new\s+)?home\s+is\s+(?:now\s+)?in\s+(?:the\s+)?{place('place')}"),
    (  # "signed the lease on a flat in Marseille", "we bought a house in Austin"
        "home",
        r"\b(?:signed\s+(?:the|a|our|my)\s+lease\s+(?:on|for)|(?:I|we)\s+(?:just\s+|finally\s+)?"
        r"(?:bought|rented|closed\s+on))\s+(?:an?|the|our|my)\s+(?:new\s+)?(?:place|apartment"
        rf"|house|home|flat|condo|townhouse)\s+in\s+(?:the\s+)?{place('place')}",
    ),
    (  # "the movers dropped everything off at our new place in Denver"
        "home",
        r"\b(?:our|my)\s+new\s+(?:place|apartment|house|home|flat|condo|townhouse|townhome)"
        rf"\s+(?:is\s+)?in\s+(?:the\s+)?{place('place')}",
    ),
    (  # "Working as a barista at Blue Bottle", "got hired as a junior developer at Shopify"
        "role",
        r"(?:^|\b(?:I|we)\s*(?:'ve\s+|have\s+)?(?:just\s+|recently\s+|finally\s+)?)"
        r"(?:got\s+hired|was\s+hired|started|working|began|signed\s+on)\s+as\s+(?:an?\s+|the\s+)?"
        r"(?P<role>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)\s+(?:at|for|with)\s+"
        rf"(?P<org>{_ORG})",
    ),
    # ---- what the user is learning
    (
        "learning",
        r"\b(?:I|we)(?:'m|\s+am|'ve\s+been|\s+have\s+been|'re|\s+are)?\s+(?:now\s+|currently\s+"
        r"|also\s+)?(?:learning|studying|taking\s+(?:a\s+)?(?:class(?:es)?|lessons?|course)\s+in)"
        rf"\s+{EN_LANGUAGE}",
    ),
    (
        "learning",
        r"\b(?:I|we)\s+(?:just\s+|recently\s+)?(?:started|began)\s+(?:learning|studying|to\s+learn"
        rf"|to\s+study)\s+{EN_LANGUAGE}",
    ),
    (
        "workplace",
        rf"\b(?:I|we)\s+{_ADV}work\s+(?:in|out\s+of)\s+(?:the\s+)?{place('place')}|\bmy\s+"
        rf"(?:office|workplace|job)\s+is\s+in\s+(?:the\s+)?{place('place2')}",
    ),
    (
        "employer",
        rf"{_WHO}\s*{_ADV}(?:work|works|am\s+working|'m\s+working|is\s+working|'s\s+working"
        r"|are\s+working|'re\s+working|(?:have|'ve|has)\s+been\s+working)\s+(?:full[-\s]time\s+"
        rf"|part[-\s]time\s+|remotely\s+)?(?:at|for)\s+(?P<org>{_ORG})",
    ),
    (
        "employer",
        r"\b(?:I|we)\s*(?:just\s+|recently\s+)?(?:started\s+(?:a\s+new\s+job\s+|working\s+)?at"
        r"|got\s+(?:a\s+|the\s+)?(?:job|position|role|offer)\s+(?:at|with)|got\s+hired\s+(?:at|by)"
        rf"|am\s+employed\s+(?:at|by)|'m\s+employed\s+(?:at|by))\s+(?P<org>{_ORG})",
    ),
    (
        "role",
        rf"{_WHO}\s*{_ADV}(?:work|works|am\s+working|'m\s+working|is\s+working)\s+as\s+"
        r"(?:an?\s+|the\s+)?(?P<role>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)(?=\s+(?:at|for|in|with"
        rf"|and)\b|\s*[,.;!?]|\s*$)(?:\s+(?:at|for)\s+(?P<org>{_ORG}))?",
    ),
    (
        "role",
        rf"{_WHO}{_BE}\s+(?:now\s+)?(?:an?\s+)(?P<role>(?:[a-z][\w-]*\s+){{0,2}}?(?:{ROLES}))\b"
        rf"(?!\s+(?:friend|fan|of))(?:\s+(?:at|for|with)\s+(?P<org>{_ORG}))?",
    ),
    (
        "job",
        r"\b(?:I|we)\s*(?:have\s+|'ve\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+)?"
        rf"(?:joined|started\s+at|started\s+working\s+(?:at|for)|got\s+hired\s+(?:at|by))\s+"
        rf"(?P<org>{_ORG})\s+as\s+(?:an?\s+|the\s+|their\s+|a\s+new\s+)?(?P<role>[a-z][\w-]*"
        r"(?:\s+[a-z][\w-]*){0,3}?)(?=\s+(?:in|on|at|last|this|since|and|but)\b|\s*[,.;!?]|\s*$)",
    ),
    (
        "job",
        rf"{_WHO}\s*{_ADV}(?:work|works|am\s+working|'m\s+working|(?:have|'ve)\s+been\s+working"
        r"|started\s+(?:a\s+(?:new\s+)?job|working)|got\s+a\s+(?:new\s+)?job)\s+(?:at|for|with)\s+"
        rf"(?P<org>{_ORG})\s+as\s+(?:an?\s+|the\s+|their\s+)?(?P<role>[a-z][\w-]*"
        r"(?:\s+[a-z][\w-]*){0,3}?)(?=\s+(?:in|on|at|last|this|since|and|but)\b|\s*[,.;!?]|\s*$)",
    ),
    (
        "role",
        r"\b(?:I|we)\s*(?:just\s+|recently\s+|finally\s+)?(?:got|was|have\s+been|'ve\s+been"
        r"|am|'m|just\s+got)\s+(?:just\s+)?promoted\s+to\s+(?:an?\s+|the\s+)?(?P<role>[a-z][\w-]*"
        r"(?:\s+[a-z][\w-]*){0,3}?)(?=\s+(?:in|on|last|this|since|and|but)\b|\s*[,.;!?]|\s*$)"
        rf"(?:\s+(?:at|for)\s+(?P<org>{_ORG}))?",
    ),
    (
        "employer",
        r"\b(?:I|we)\s*(?:have\s+|'ve\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+)?"
        rf"joined\s+(?P<org>{_ORG})\b(?!\s+as\b)",
    ),
    (
        "left_job",
        r"\b(?:I|we)\s*(?:have\s+|'ve\s+|had\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+)?"
        r"(?:left|quit|resigned\s+from|retired\s+from|(?:was|got)\s+(?:laid\s+off|let\s+go"
        r"|fired)(?:\s+from)?|stopped\s+working\s+(?:at|for))\s+(?:my\s+(?:job|position|role"
        rf"|work)(?:\s+(?:at|with)\s+(?P<org>{_ORG}))?|(?P<org2>{_ORG}))",
    ),
    (
        "left_job",
        r"\b(?:I|we)\s*(?:no\s+longer\s+work|don't\s+work|do\s+not\s+work|stopped\s+working"
        rf"|(?:'m|\s+am|'re|\s+are)\s+no\s+longer(?:\s+working)?)\s+(?:at|for|with)\s+(?P<org2>{_ORG})"
        r"(?:\s+(?:anymore|any\s+more))?",
    ),
    # ---- cancellations and closures
    (
        "cancel",
        r"\b(?:I|we)\s*(?:have\s+|'ve\s+|had\s+(?:to\s+)?)?(?:just\s+|finally\s+)?"
        r"(?:cancell?ed|called\s+off|scrapped|dropped|gave\s+up\s+on|cancel)\s+(?:my\s+|our\s+"
        r"|the\s+)?(?:(?:upcoming|planned|whole|big|family|business)\s+)*(?:(?P<what>[\w'.-]+"
        r"(?:\s+[\w'.-]+)?)\s+)?(?P<noun>trip|flight|vacation|holiday|move|plan|plans|visit"
        rf"|{_APPOINTMENT_NOUNS})s?\b(?:\s+(?:to|in|with|at)\s+(?:the\s+)?(?P<dest>{PLACE_BODY}))?",
    ),
    (
        "cancel",
        r"\b(?:my|our|the)\s+(?:(?:upcoming|planned|big|family|business|wedding|summer|winter)\s+)*"
        r"(?P<noun>trip|flight|vacation|holiday|move)\s+to\s+(?:the\s+)?"
        rf"(?P<dest>{PLACE_BODY})\s+(?:is|was|got|has\s+been|had\s+to\s+be)\s+(?:cancell?ed"
        r"|called\s+off|off|scrapped)\b",
    ),
    (
        "close_account",
        r"\b(?:my|our)\s+(?P<label>(?:[\w&'.-]+\s+){0,3}?)(?:account|membership|subscription"
        r"|card)\s+(?:(?:is|was)\s+(?:being\s+)?closed|closes|will\s+close|(?:is|was)\s+"
        r"(?:cancell?ed|terminated)|ends|expires)\b",
    ),
    (
        "close_account",
        r"\b(?:my|our)\s+(?P<label>(?:[\w&'.-]+\s+){0,2}?)(?:account|card)\s+(?:at|with)\s+"
        r"(?P<org>(?-i:[A-Z][\w&'.-]*)(?:\s+(?-i:[A-Z][\w&'.-]*)){0,2})\s+(?:(?:is|was)\s+"
        r"(?:being\s+)?closed|closes|will\s+close|(?:is|was)\s+(?:cancell?ed|terminated)|ends"
        r"|expires|is\s+closing)\b",
    ),
    (
        "close_account",
        r"\b(?:I|we)\s*(?:have\s+|'ve\s+)?(?:just\s+)?(?:closed|cancell?ed|terminated)\s+"
        r"(?:my|our)\s+(?P<label>(?:[\w&'.-]+\s+){0,3}?)(?:account|membership|subscription)\b",
    ),
    # ---- plans to move
    (
        "plan_move",
        r"\b(?:I|we)(?:'m|\s+am|'re|\s+are)?\s*(?:(?:planning|going|hoping|about|set|due)\s+to"
        r"|(?:plan|intend|want|need|have)\s+to|will|'ll)\s+(?:be\s+)?(?:move|moving|relocate"
        rf"|relocating)\s+(?:back\s+)?to\s+(?:the\s+)?{place('dest')}",
    ),
    (
        "plan_move",
        r"\b(?:I|we)(?:'m|\s+am|'re|\s+are)\s+(?:moving|relocating)\s+(?:back\s+)?to\s+"
        rf"(?:the\s+)?{place('dest')}",
    ),
    (
        "plan_move",
        rf"\bmy\s+move\s+to\s+(?:the\s+)?{place('dest')}\s+(?:is|will\s+be)\b",
    ),
    (
        "plan_move",
        r"\b(?:I|we)(?:'m|\s+am|'re|\s+are)?\s*(?:planning|plan|have\s+planned|scheduled)\s+"
        rf"(?:a|an|our|my|the)\s+(?:big\s+)?(?:move|relocation)\s+to\s+(?:the\s+)?{place('dest')}",
    ),
    # ---- neighbourhood
    (
        "home_area",
        r"\bmy\s+(?:new\s+|current\s+)?(?:apartment|flat|place|house|home|condo|studio)\s+is"
        rf"\s+(?:now\s+)?in\s+(?:the\s+)?{place('place')}",
    ),
    (
        "home_area",
        r"\b(?:I|we)\s*(?:have\s+|'ve\s+)?(?:just\s+|recently\s+|finally\s+)?(?:moved|relocated)"
        r"\s+(?:in)?to\s+(?:a|an|the|our|my)\s+(?:new\s+|bigger\s+|smaller\s+)?(?:apartment|flat"
        rf"|place|house|home|condo|studio)\s+in\s+(?:the\s+)?{place('place')}",
    ),
    (
        "home_area",
        rf"{_WHO}\s*{_ADV}(?:live|lives|am\s+living|'m\s+living)\s+in\s+(?:the\s+)?"
        rf"{place('place')}\s+(?:neighbou?rhood|district|area)\b",
    ),
    # ---- preferences that change or stop
    (
        "avoid",
        r"\b(?:I|we)\s*(?:have\s+|'ve\s+)?(?:just\s+|recently\s+|finally\s+|completely\s+)?"
        r"(?:stopped|quit|gave\s+up|cut\s+out|no\s+longer)\s+(?P<verb>eating|drinking|having"
        r"|using|smoking|eat|drink|have|use|smoke)?\s*(?P<item>(?:[a-z][\w-]*)(?:\s+[a-z][\w-]*)?)"
        r"(?:\s+(?:anymore|any\s+more|altogether|completely|entirely))?"
        r"(?=\s*[,.;!?]|\s*$|\s+(?:and|but|because|since|last|this|a\s+while|for|recently"
        r"|ago)\b)",
    ),
    (
        "avoid",
        r"\b(?:I|we)\s+(?:don't|do\s+not|no\s+longer|never)\s+(?P<verb>drink|smoke|eat)\s+"
        r"(?P<item>(?:[a-z][\w-]*)(?:\s+[a-z][\w-]*)?)\s+(?:anymore|any\s+more|now)\b",
    ),
    (
        "switch",
        r"\b(?:I|we)\s+(?:now\s+|mostly\s+|usually\s+)?(?:drink|use|eat|take|have|prefer|go\s+with"
        r"|order|buy|ride|drive)\s+(?:now\s+)?(?P<value>[\w'-]+(?:\s+[\w'-]+){0,2}?)\s+(?:now\s+)?"
        r"(?:instead\s+of|rather\s+than)\s+(?:my\s+|the\s+)?(?P<old>[\w'-]+(?:\s+[\w'-]+){0,2}?)"
        r"(?=\s*[,.;!?]|\s*$|\s+(?:now|these\s+days|lately|and|but|because)\b)",
    ),
    (
        "switch",
        r"\b(?:I|we)\s+used\s+to\s+(?P<verb>drink|use|eat|take|ride|drive|have|prefer)\s+"
        r"(?:my\s+|the\s+)?(?P<old>[\w'-]+(?:\s+[\w'-]+){0,2}?)\s*,?\s+but\s+(?:now|these\s+days"
        r"|nowadays)\s*,?\s+(?:I|we)\s+(?:mostly\s+|only\s+)?(?:drink|use|eat|take|ride|drive|have"
        r"|prefer)\s+(?:my\s+|the\s+)?(?P<value>[\w'-]+(?:\s+[\w'-]+){0,2}?)(?=\s*[,.;!?]|\s*$"
        r"|\s+(?:now|instead|these\s+days|and|but|because)\b)",
    ),
    # ---- standing habits of a known topic ("I drink coffee every morning")
    (
        "habit",
        r"\b(?:I|we)\s+(?:usually\s+|always\s+|mostly\s+|normally\s+|only\s+)?"
        r"(?P<verb>drink|have|take|ride|drive|use)\s+(?P<value>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)"
        r"\s+(?P<when>every\s+(?:morning|day|evening|night|weekday)|each\s+(?:morning|day)"
        r"|daily|in\s+the\s+mornings?|with\s+breakfast|at\s+work|to\s+work|on\s+weekdays)\b",
    ),
    (
        "habit",
        r"\b(?:I|we)\s+(?:usually|always|mostly|normally|only)\s+(?P<verb>drink|have|take|ride"
        r"|drive|use)\s+(?P<value>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)(?=\s*[,.;!?]|\s*$)",
    ),
    # a sport or activity done regularly ("my main sport is X", "I go X twice a week")
    (
        "habit",
        r"\bmy\s+(?:main|favou?rite|usual|current)\s+sport\s+(?:right\s+now\s+|these\s+days\s+"
        r"|at\s+the\s+moment\s+|now\s+)?is\s+(?P<value>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)"
        r"(?=\s*[,.;!?]|\s*$|\s+(?:now|these\s+days|lately)\b)",
    ),
    (
        "habit",
        r"\b(?:I|we)\s+(?:still\s+|also\s+|usually\s+)?(?P<verb>do|practi[cs]e|go)\s+"
        r"(?P<value>[a-z][\w'-]*)\s+(?P<when>(?:once|twice|three\s+times|four\s+times"
        r"|five\s+times|\d+\s+times)\s+a\s+week|every\s+(?:day|week|weekend|morning|evening))\b",
    ),
    (
        "habit",
        r"\b(?:I|we)(?:'ve|\s+have)\s+been\s+(?P<verb>doing)\s+(?:a\s+lot\s+of\s+|lots\s+of\s+"
        r"|some\s+)?(?P<value>[a-z][\w'-]*)\s+(?:lately|recently|these\s+days)\b",
    ),
    # ---- changes of provider / habit
    (
        "switch",
        rf"\b(?:I|we)\s*{_ADV}(?:have\s+|'ve\s+)?(?:just\s+|recently\s+|finally\s+|officially\s+)?"
        r"(?:switched|changed|converted|swapped|moved)\s+(?:my\s+|our\s+)?(?:(?P<topic>(?!from\b)[a-z][\w-]*"
        r"(?:\s+[a-z][\w-]*)?)\s+)?(?:(?:over\s+)?from\s+(?P<old>[^.,;!?]{1,30}?)\s+)?(?:over\s+)?"
        rf"to\s+{item('value')}",
    ),
    # ---- instructions for the assistant
    (
        "instruction",
        r"^(?:(?:and|also|oh|ok|okay|so|btw)\W+)*(?:please\s+)?(?P<instruction>(?:always|never"
        r"|don't\s+ever|do\s+not\s+ever|from\s+now\s+on,?|in\s+the\s+future,?|going\s+forward,?)"
        r"\s+(?:please\s+)?(?:(?:book|send|use|call|remind|reserve|schedule|order|email|text"
        r"|include|ask|write|reply|respond|answer|format|cc|copy|check|confirm|suggest|recommend"
        r"|speak|talk|address|sign|pay|charge|bill|notify)\b[^!?\n]{2,200}|(?:give|get|choose"
        r"|pick|put|make|keep|avoid|show|tell|let|set|route)\b(?=[^!?\n]*\b(?:me|my|us|our)\b)"
        r"[^!?\n]{2,200}))",
    ),
    # ---- likes and dislikes (generic: they yield to any specific match above)
    (
        "dislike",
        rf"{_WHO}\s*{_ADV}(?:hate|hates|dislike|dislikes|detest|detests|loathe|loathes"
        r"|can't\s+stand|cannot\s+stand|can't\s+bear|don't\s+(?:really\s+|much\s+)?(?:like|love"
        r"|enjoy|care\s+for)|doesn't\s+(?:really\s+|much\s+)?(?:like|love|enjoy|care\s+for)"
        r"|do\s+not\s+(?:really\s+)?(?:like|enjoy)|does\s+not\s+(?:like|enjoy)"
        r"|(?:am|'m|is|'s|are|'re)\s+not\s+(?:a\s+)?(?:big\s+|huge\s+)?(?:fan\s+of|into))\s+"
        rf"{item()}",
    ),
    (
        "like",
        rf"{_WHO}\s*{_ADV}(?:love|loves|like|likes|enjoy|enjoys|adore|adores|prefer|prefers"
        r"|(?:am|'m|is|'s|are|'re)\s+(?:a\s+)?(?:big\s+|huge\s+|massive\s+)?fan\s+of"
        rf"|(?:am|'m|is|'s|are|'re)\s+(?:really\s+|very\s+)?into)\s+{item()}",
    ),
    (
        "like",
        r"\bmy\s+(?:absolute\s+)?(?:favou?rite|fave)\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)\s+(?:is|are)"
        rf"\s+{item()}",
    ),
]


def _compile(rows: list[tuple[str, str]]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(pattern, re.I)) for kind, pattern in rows)


PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = _compile(_ROWS)

# sentences that ask rather than tell; requests ("can you book …") are still read for trips
QUESTION_START = re.compile(
    r"^(?:(?:so|and|but|also|hey|hi|ok|okay|um|well)\W+)*(?:do|does|did|should|shall|can|could"
    r"|would|will|is|are|am|was|were|have|has|what|where|when|why|how|which|who|whom|whose"
    r"|may|might|must|isn't|aren't|don't|doesn't|wouldn't|shouldn't)\b",
    re.I,
)
# "…, right?" asks for agreement, "can you remember that …?" asks to store: both tell
TAG_QUESTION = re.compile(
    r",\s*(?:right|ok(?:ay)?|correct|yeah|remember|do\s+you|don't\s+you|can\s+you|you\s+know"
    r"|isn't\s+it|got\s+it|see)\s*\?+\s*$",
    re.I,
)
REMEMBER = re.compile(
    r"^(?:(?:so|and|also|hey|hi|ok|okay)\W+)*(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"(?:remember|note|keep\s+in\s+mind|save|make\s+a\s+note|write\s+down)\b",
    re.I,
)
REQUEST = re.compile(
    r"^(?:(?:so|and|also|hey|hi|ok|okay|um|well)\W+)*(?:can|could|would|will)\s+you\b"
    r"|\b(?:please|help\s+me)\b",
    re.I,
)
HEDGE = re.compile(
    r"\b(?:I\s+think|I\s+guess|I\s+believe|I\s+suppose|maybe|probably|perhaps|possibly"
    r"|might\s+be|not\s+(?:too\s+|totally\s+|entirely\s+)?sure|I\s+suspect|kind\s+of|sort\s+of"
    r"|apparently)\b",
    re.I,
)
# words in the clause before a match that make it hypothetical or someone else's claim
HYPOTHETICAL = re.compile(
    r"\b(?:if|whether|unless|suppose|supposing|imagine|wish|pretend|in\s+case|as\s+if"
    r"|what\s+if|you\s+think|wonder(?:ing)?|hoping|considering|thinking\s+(?:about|of))\b",
    re.I,
)
# someone else's claim about the user: "my mom thinks I'm vegetarian" (but "I think I'm …"
# is the user hedging, which only lowers confidence)
REPORTED = re.compile(
    r"\b(?!(?:I|we)\b)[\w']+\s+(?:says?|said|thinks?|thought|told\s+(?:me|us)|claims?|believes?"
    r"|insists?|assumes?|assumed)\s+(?:that\s+)?$",
    re.I,
)
NEGATED_AFTER = re.compile(r"^\W*(?:anymore|any\s+more|no\s+longer|not)\b", re.I)
