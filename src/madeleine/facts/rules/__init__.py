"""Rule-based fact extraction, the offline default: English and Korean patterns → card drafts.

Only what the user said becomes a fact. Each user message is split into sentences; every
pattern row of ``en`` / ``ko`` that matches is handed to the builder of its kind, which
reads the named groups and returns facts in the key/attribute conventions of
``madeleine.facts.cards``. Questions, hypotheticals ("if I move to Berlin") and negations
("I don't live in Paris anymore") yield nothing; hedged statements ("I think I'm allergic…")
get a lower confidence. Generic rows (likes, dislikes, switches) yield to a specific row
that matched the same words, so "I prefer window seats" is a seat preference and not also a
like. Requests are read for trips only ("can you book me a flight to Tokyo?").

The window is read twice: first for who the user's people are and where the user lives (so
"Sarah is allergic to peanuts" two messages after "my daughter Sarah" is about the
daughter, and a trip knows whether it goes abroad), then for every fact.

Layout: ``extractor`` runs the reading; ``common`` and ``items`` are what every builder
shares; the builders come by family (``people``, ``preferences``, ``identity``, ``health``,
``plans``); ``en`` / ``en_words`` / ``ko`` / ``tables`` are the pattern and vocabulary tables.
Dates are the date engine's, ``madeleine.text.dates``.
"""

from madeleine.facts.rules.common import slug
from madeleine.facts.rules.extractor import RuleExtractor, split_sentences

__all__ = ["RuleExtractor", "slug", "split_sentences"]
