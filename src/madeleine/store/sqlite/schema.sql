CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- The append-only log: the source of truth every index is rebuilt from.
-- AUTOINCREMENT on the tables whose ids callers keep (ev_, ep_, fact_): an id is never
-- given again after a delete, so a kept id cannot come to name another memory.
CREATE TABLE IF NOT EXISTS events (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id      TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    kind         TEXT NOT NULL,
    role         TEXT NOT NULL,
    name         TEXT,
    content      TEXT NOT NULL,
    metadata     TEXT NOT NULL DEFAULT '{}',
    occurred_at  REAL NOT NULL,
    recorded_at  REAL NOT NULL,
    content_hash TEXT NOT NULL,
    external_id  TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS events_external ON events(user_id, external_id)
    WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS events_hash ON events(user_id, content_hash);
CREATE INDEX IF NOT EXISTS events_session ON events(user_id, session_id, occurred_at, id);

-- Durable work queue: written in the same transaction as the events it refers to.
CREATE TABLE IF NOT EXISTS outbox (
    id            INTEGER PRIMARY KEY,
    event_id      INTEGER NOT NULL,
    user_id       TEXT NOT NULL,
    enqueued_at   REAL NOT NULL,
    claimed_by    TEXT,
    claimed_until REAL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_error    TEXT
);
CREATE INDEX IF NOT EXISTS outbox_event ON outbox(event_id);
CREATE INDEX IF NOT EXISTS outbox_user ON outbox(user_id);

-- One episode per turn: the turn, its contextual prefix and the turn it answers.
CREATE TABLE IF NOT EXISTS episodes (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id          TEXT NOT NULL,
    session_id       TEXT NOT NULL,
    kind             TEXT NOT NULL,
    focus_event_id   INTEGER NOT NULL UNIQUE,
    context_event_id INTEGER,
    event_ids        TEXT NOT NULL,
    source_ids       TEXT NOT NULL,
    speaker          TEXT,
    prefix           TEXT NOT NULL,
    body             TEXT NOT NULL,
    context          TEXT NOT NULL,
    occurred_at      REAL NOT NULL,
    indexed_at       REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS episodes_user_time ON episodes(user_id, occurred_at);
-- Session digests are rebuilt from a session's episodes on every indexing batch.
CREATE INDEX IF NOT EXISTS episodes_user_session ON episodes(user_id, session_id, occurred_at);
CREATE INDEX IF NOT EXISTS episodes_context ON episodes(context_event_id);

CREATE TABLE IF NOT EXISTS episode_vectors (
    episode_id INTEGER PRIMARY KEY,
    user_id    TEXT NOT NULL,
    vector     BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS episode_vectors_user ON episode_vectors(user_id, episode_id);

-- Lexical index over analyzed terms; `scope` carries the user's key so scoping happens in the
-- index itself, not in a filter applied afterwards.
CREATE VIRTUAL TABLE IF NOT EXISTS episodes_fts USING fts5(
    scope, body, context, tokenize = 'unicode61 remove_diacritics 0'
);

-- Per-user change counters: readers use them to refresh in-memory vector caches.
CREATE TABLE IF NOT EXISTS user_state (
    user_id        TEXT PRIMARY KEY,
    added_gen      INTEGER NOT NULL DEFAULT 0,
    changed_gen    INTEGER NOT NULL DEFAULT 0
);

-- Per-session digests (heuristic, no LLM): all analyzed terms of a session's turns as one
-- lexical document, so a question about a conversation as a whole finds its session.
CREATE TABLE IF NOT EXISTS session_digests (
    id         INTEGER PRIMARY KEY,
    user_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    turns      INTEGER NOT NULL,
    started_at REAL NOT NULL,
    ended_at   REAL NOT NULL,
    keywords   TEXT NOT NULL,
    UNIQUE (user_id, session_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS session_fts USING fts5(
    scope, body, tokenize = 'unicode61 remove_diacritics 0'
);

-- Facts: extracted cards (JSON) in version chains. Nothing is overwritten: a newer card
-- supersedes an older one; valid_* are event times, recorded/superseded_at system times.
CREATE TABLE IF NOT EXISTS facts (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id       TEXT NOT NULL,
    subject       TEXT NOT NULL,
    key           TEXT NOT NULL,
    category      TEXT NOT NULL,
    statement     TEXT NOT NULL,
    card          TEXT NOT NULL,
    status        TEXT NOT NULL,
    valid_from    REAL,
    valid_to      REAL,
    recorded_at   REAL NOT NULL,
    superseded_at REAL,
    supersedes    INTEGER,
    superseded_by INTEGER,
    confidence    REAL NOT NULL,
    importance    REAL NOT NULL,
    pinned        INTEGER NOT NULL DEFAULT 0,
    extractor     TEXT NOT NULL,
    vector        BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS facts_user_slot ON facts(user_id, subject, key, status);
CREATE TABLE IF NOT EXISTS fact_sources (
    fact_id  INTEGER NOT NULL,
    event_id INTEGER NOT NULL,
    PRIMARY KEY (fact_id, event_id)
);
CREATE INDEX IF NOT EXISTS fact_sources_event ON fact_sources(event_id);
CREATE VIRTUAL TABLE IF NOT EXISTS facts_fts USING fts5(
    scope, body, tokenize = 'unicode61 remove_diacritics 0'
);
-- Every change to a user's facts stamps the user with the next tick of one global clock
-- (triggers, so no write path can forget it). The read path caches fact vectors until the
-- stamp moves; a global clock never repeats a stamp, even after a user is forgotten.
CREATE TABLE IF NOT EXISTS fact_clock (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    tick INTEGER NOT NULL
);
INSERT OR IGNORE INTO fact_clock(id, tick) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS fact_state (
    user_id TEXT PRIMARY KEY,
    gen     INTEGER NOT NULL
);
CREATE TRIGGER IF NOT EXISTS facts_gen_insert AFTER INSERT ON facts BEGIN
    UPDATE fact_clock SET tick = tick + 1 WHERE id = 1;
    INSERT INTO fact_state(user_id, gen) VALUES (NEW.user_id, (SELECT tick FROM fact_clock))
    ON CONFLICT(user_id) DO UPDATE SET gen = excluded.gen;
END;
CREATE TRIGGER IF NOT EXISTS facts_gen_update AFTER UPDATE ON facts BEGIN
    UPDATE fact_clock SET tick = tick + 1 WHERE id = 1;
    INSERT INTO fact_state(user_id, gen) VALUES (NEW.user_id, (SELECT tick FROM fact_clock))
    ON CONFLICT(user_id) DO UPDATE SET gen = excluded.gen;
END;
CREATE TRIGGER IF NOT EXISTS facts_gen_delete AFTER DELETE ON facts BEGIN
    UPDATE fact_clock SET tick = tick + 1 WHERE id = 1;
    INSERT INTO fact_state(user_id, gen) VALUES (OLD.user_id, (SELECT tick FROM fact_clock))
    ON CONFLICT(user_id) DO UPDATE SET gen = excluded.gen;
END;

-- Every write-path decision (added / duplicate / superseded / flagged / extractor fallback).
CREATE TABLE IF NOT EXISTS routing_log (
    id        INTEGER PRIMARY KEY,
    user_id   TEXT NOT NULL,
    at        REAL NOT NULL,
    decision  TEXT NOT NULL,
    fact_id   INTEGER,
    other_id  INTEGER,
    detail    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS routing_log_user ON routing_log(user_id, id);

-- Proactive alerts from memory checks; one row per (rule, facts involved).
CREATE TABLE IF NOT EXISTS alerts (
    id          INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL,
    rule        TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    severity    TEXT NOT NULL,
    message     TEXT NOT NULL,
    fact_ids    TEXT NOT NULL,
    created_at  REAL NOT NULL,
    UNIQUE (user_id, rule, fingerprint)
);

-- Graph memory: entities (guarded keys, one row per user and key), their aliases, and
-- mention edges to episodes. Deleting an episode deletes its mentions; an entity that no
-- longer has a mention goes with its aliases (triggers: no delete path can forget them).
CREATE TABLE IF NOT EXISTS entities (
    id      INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL,
    key     TEXT NOT NULL,
    name    TEXT NOT NULL,
    type    TEXT NOT NULL,
    vector  BLOB NOT NULL,
    UNIQUE (user_id, key)
);
CREATE TABLE IF NOT EXISTS entity_aliases (
    user_id   TEXT NOT NULL,
    key       TEXT NOT NULL,
    entity_id INTEGER NOT NULL,
    surface   TEXT NOT NULL,
    PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entity_aliases_entity ON entity_aliases(entity_id);
CREATE TABLE IF NOT EXISTS mentions (
    entity_id  INTEGER NOT NULL,
    episode_id INTEGER NOT NULL,
    PRIMARY KEY (entity_id, episode_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mentions_episode ON mentions(episode_id);
CREATE TRIGGER IF NOT EXISTS episodes_drop_mentions AFTER DELETE ON episodes BEGIN
    DELETE FROM mentions WHERE episode_id = OLD.id;
END;
CREATE TRIGGER IF NOT EXISTS mentions_drop_orphans AFTER DELETE ON mentions BEGIN
    DELETE FROM entities WHERE id = OLD.entity_id
        AND NOT EXISTS (SELECT 1 FROM mentions WHERE entity_id = OLD.entity_id);
END;
CREATE TRIGGER IF NOT EXISTS entities_drop_aliases AFTER DELETE ON entities BEGIN
    DELETE FROM entity_aliases WHERE entity_id = OLD.id;
END;

-- What each import has seen, per user, source and unit (a file or a conversation): a stamp
-- that changes with the unit, and the digest of every passage drawn from it.
CREATE TABLE IF NOT EXISTS imports (
    user_id  TEXT NOT NULL,
    source   TEXT NOT NULL,
    unit     TEXT NOT NULL,
    stamp    TEXT NOT NULL,
    passages TEXT NOT NULL,
    PRIMARY KEY (user_id, source, unit)
);
