-- One episode per turn: the turn, its contextual prefix and the turn it answers, with its
-- vector (pgvector; the HNSW index is built for the embedder's dimension when the store is
-- bound to it) and its analyzed terms as tsvectors (positions carry term frequencies for
-- BM25; GIN indexes find the candidates).
CREATE TABLE episodes (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id          text NOT NULL,
    session_id       text NOT NULL,
    kind             text NOT NULL,
    focus_event_id   bigint NOT NULL UNIQUE,
    context_event_id bigint,
    event_ids        bigint[] NOT NULL,
    source_ids       text[] NOT NULL,
    speaker          text,
    prefix           text NOT NULL,
    body             text NOT NULL,
    context          text NOT NULL,
    occurred_at      double precision NOT NULL,
    indexed_at       double precision NOT NULL,
    body_terms       tsvector NOT NULL,
    context_terms    tsvector NOT NULL,
    body_text        text NOT NULL,  -- the analyzed body terms in order (phrases, digests)
    terms_length     integer NOT NULL,
    vector           vector NOT NULL
);
CREATE INDEX episodes_user ON episodes(user_id, id);
CREATE INDEX episodes_user_time ON episodes(user_id, occurred_at);
CREATE INDEX episodes_user_session ON episodes(user_id, session_id, occurred_at, id);
CREATE INDEX episodes_context ON episodes(context_event_id);
CREATE INDEX episodes_body_terms ON episodes USING gin (body_terms);
CREATE INDEX episodes_context_terms ON episodes USING gin (context_terms);

-- Per-user change counters: readers refresh their caches of a user when they move.
CREATE TABLE user_state (
    user_id     text PRIMARY KEY,
    added_gen   bigint NOT NULL DEFAULT 0,
    changed_gen bigint NOT NULL DEFAULT 0
);

-- Per-session digests: every analyzed term of a session's turns as one lexical document.
CREATE TABLE session_digests (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      text NOT NULL,
    session_id   text NOT NULL,
    turns        integer NOT NULL,
    started_at   double precision NOT NULL,
    ended_at     double precision NOT NULL,
    keywords     text NOT NULL,
    terms        tsvector NOT NULL,
    terms_length integer NOT NULL,
    UNIQUE (user_id, session_id)
);
CREATE INDEX session_digests_terms ON session_digests USING gin (terms);

-- BM25's corpus statistics (documents and their total length), kept by the writers.
CREATE TABLE lexical_stats (
    corpus text PRIMARY KEY,
    docs   bigint NOT NULL,
    length bigint NOT NULL
);
INSERT INTO lexical_stats(corpus, docs, length) VALUES ('episodes', 0, 0), ('sessions', 0, 0);
