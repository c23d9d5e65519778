"""BM25 inside PostgreSQL over the analyzer's terms, scored as the embedded store scores
them (SQLite FTS5's bm25: k1 1.2, b 0.75, column weights, idf over the whole table), so the
read path's calibration holds on both backends.

Terms are stored as tsvectors built here, not by a text-search configuration: each analyzed
term is cut into tokens the way FTS5's unicode61 tokenizer cuts it (runs of letters and
digits, lower-cased) and kept with its positions, so a lexeme's positions are its term
frequency. GIN indexes find the candidates; ``setweight`` + ``ts_filter`` pull out just the
query's lexemes of each candidate, and the sum runs in SQL.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

K1 = 1.2
B = 0.75
_TOKEN = re.compile(r"[^\W_]+")
_MAX_POSITION = 16383  # PostgreSQL's largest tsvector position


def tokens(text: str) -> list[str]:
    """FTS5 unicode61's tokens of a string of analyzed terms."""
    return _TOKEN.findall(text.lower())


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(terms: str) -> tuple[str, int]:
    """(tsvector literal with positions, token count) of a string of analyzed terms."""
    found = tokens(terms)
    positions: dict[str, list[int]] = {}
    for position, token in enumerate(found, start=1):
        positions.setdefault(token, []).append(min(position, _MAX_POSITION))
    literal = " ".join(
        f"{_quote(lexeme)}:{','.join(map(str, sorted(set(spots))[:256]))}"
        for lexeme, spots in positions.items()
    )
    return literal, len(found)


def any_query(lexemes: Sequence[str]) -> str:
    """A tsquery literal matching any of ``lexemes``."""
    return " | ".join(_quote(lexeme) for lexeme in lexemes)


def phrase_query(lexemes: Sequence[str]) -> str:
    """A tsquery literal matching ``lexemes`` as consecutive tokens."""
    return " <-> ".join(_quote(lexeme) for lexeme in lexemes)


def query_lexemes(terms: Sequence[str]) -> list[str]:
    """The distinct tokens of the query's terms (an identifier such as soul_server counts
    as its parts)."""
    return list(dict.fromkeys(t for term in terms for t in tokens(term)))


def idf(docs: int, having: int) -> float:
    """FTS5's idf: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6."""
    value = math.log((docs - having + 0.5) / (having + 0.5))
    return value if value > 0 else 1e-6


def document_frequencies(conn: Any, corpus: str, lexemes: Sequence[str]) -> list[int]:
    """How many documents of ``corpus`` hold each lexeme (the whole corpus, as FTS5 counts),
    read from ``lexical_df``, which the tables' triggers keep."""
    if not lexemes:
        return []
    rows = conn.execute(
        "SELECT lexeme, docs FROM lexical_df WHERE corpus = %s AND lexeme = ANY(%s)",
        (corpus, list(lexemes)),
    ).fetchall()
    found = {str(lexeme): int(docs) for lexeme, docs in rows}
    return [found.get(lexeme, 0) for lexeme in lexemes]


def bm25(
    conn: Any,
    *,
    table: str,
    corpus: str,
    columns: Sequence[tuple[str, float]],
    lexemes: Sequence[str],
    where: str,
    params: dict[str, Any],
    limit: int,
) -> list[tuple[int, float]]:
    """(row id, BM25 score) of the rows of ``table`` matching ``where`` that hold any of
    ``lexemes``, best first. ``columns`` are (tsvector column, weight); the row's
    ``terms_length`` is its length and ``lexical_stats[corpus]`` the corpus size."""
    if not lexemes:
        return []
    stats = conn.execute(
        "SELECT docs, length FROM lexical_stats WHERE corpus = %s", (corpus,)
    ).fetchone()
    docs, length = (int(stats[0]), int(stats[1])) if stats else (0, 0)
    if docs <= 0:
        return []
    frequencies = document_frequencies(conn, corpus, lexemes)
    weights = [idf(docs, n) for n in frequencies]
    average = max(length / docs, 1e-9)
    match = " OR ".join(f"{c} @@ %(any)s::tsquery" for c, _ in columns)
    parts = " UNION ALL ".join(
        f"""SELECT c.id, c.terms_length, u.lexeme,
                   cardinality(u.positions)::float8 * %(w{i})s AS f
            FROM c, unnest(ts_filter(setweight(c.{column}, 'A', %(lexemes)s::text[]), '{{a}}')) u"""
        for i, (column, _) in enumerate(columns)
    )
    sql = f"""
        WITH c AS (
            SELECT id, terms_length, {", ".join(c for c, _ in columns)} FROM {table}
            WHERE ({match}) AND {where}
        ), hits AS ({parts}),
        tf AS (SELECT id, terms_length, lexeme, sum(f) AS f FROM hits GROUP BY 1, 2, 3)
        SELECT tf.id, sum(q.idf * tf.f * {K1 + 1} /
                          (tf.f + {K1} * (1 - {B} + {B} * tf.terms_length / %(average)s)))
               AS score
        FROM tf JOIN unnest(%(lexemes)s::text[], %(idf)s::float8[]) AS q(lexeme, idf)
             USING (lexeme)
        WHERE tf.f > 0
        GROUP BY tf.id ORDER BY score DESC, tf.id LIMIT %(limit)s"""
    values = dict(params)
    values |= {
        "any": any_query(lexemes),
        "lexemes": list(lexemes),
        "idf": weights,
        "average": average,
        "limit": limit,
    }
    values |= {f"w{i}": weight for i, (_, weight) in enumerate(columns)}
    rows = conn.execute(sql, values).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def count_documents(conn: Any, corpus: str, docs: int, length: int) -> None:
    """Move BM25's corpus statistics (``lexical_stats``) by the documents written or gone."""
    conn.execute(
        "UPDATE lexical_stats SET docs = docs + %s, length = length + %s WHERE corpus = %s",
        (docs, length, corpus),
    )
