-- Facts: extracted cards (jsonb) in version chains. Nothing is overwritten: a newer card
-- supersedes an older one; valid_* are event times, recorded/superseded_at system times.
CREATE TABLE facts (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id       text NOT NULL,
    subject       text NOT NULL,
    key           text NOT NULL,
    category      text NOT NULL,
    statement     text NOT NULL,
    card          jsonb NOT NULL,
    status        text NOT NULL,
    valid_from    double precision,
    valid_to      double precision,
    recorded_at   double precision NOT NULL,
    superseded_at double precision,
    supersedes    bigint,
    superseded_by bigint,
    confidence    double precision NOT NULL,
    importance    double precision NOT NULL,
    pinned        boolean NOT NULL DEFAULT false,
    extractor     text NOT NULL,
    terms         tsvector NOT NULL,
    terms_length  integer NOT NULL,
    vector        vector NOT NULL
);
CREATE INDEX facts_user_slot ON facts(user_id, subject, key, status);
CREATE INDEX facts_user ON facts(user_id, id);
CREATE INDEX facts_terms ON facts USING gin (terms);
CREATE INDEX facts_supersedes ON facts(supersedes);
CREATE INDEX facts_superseded_by ON facts(superseded_by);
INSERT INTO lexical_stats(corpus, docs, length) VALUES ('facts', 0, 0);

CREATE TABLE fact_sources (
    seq      bigint GENERATED ALWAYS AS IDENTITY,
    fact_id  bigint NOT NULL,
    event_id bigint NOT NULL,
    PRIMARY KEY (fact_id, event_id)
);
CREATE INDEX fact_sources_event ON fact_sources(event_id);

-- Every change to a user's facts stamps the user with the next value of one global
-- sequence (a trigger, so no write path can forget it): readers cache fact vectors until
-- the stamp moves, and a stamp never repeats, even after a user is forgotten.
CREATE SEQUENCE fact_clock;
CREATE TABLE fact_state (
    user_id text PRIMARY KEY,
    gen     bigint NOT NULL
);
CREATE FUNCTION stamp_fact_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO fact_state(user_id, gen)
    VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.user_id ELSE NEW.user_id END,
            nextval('fact_clock'))
    ON CONFLICT (user_id) DO UPDATE SET gen = excluded.gen;
    RETURN NULL;
END $$;
CREATE TRIGGER facts_stamp AFTER INSERT OR UPDATE OR DELETE ON facts
    FOR EACH ROW EXECUTE FUNCTION stamp_fact_user();

-- Every write-path decision (added / duplicate / superseded / flagged / extractor fallback).
CREATE TABLE routing_log (
    id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id  text NOT NULL,
    at       double precision NOT NULL,
    decision text NOT NULL,
    fact_id  bigint,
    other_id bigint,
    detail   jsonb NOT NULL
);
CREATE INDEX routing_log_user ON routing_log(user_id, id);

-- Proactive alerts from memory checks; one row per (rule, facts involved).
CREATE TABLE alerts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id     text NOT NULL,
    rule        text NOT NULL,
    fingerprint text NOT NULL,
    severity    text NOT NULL,
    message     text NOT NULL,
    fact_ids    text[] NOT NULL,
    created_at  double precision NOT NULL,
    UNIQUE (user_id, rule, fingerprint)
);
