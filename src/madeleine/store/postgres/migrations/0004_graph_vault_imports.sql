-- Graph memory: entities (one row per user and key), their aliases and mention edges to
-- episodes. Deleting an episode deletes its mentions (foreign key); an entity left without
-- a mention goes with its aliases (trigger, then foreign key): no delete path can forget.
CREATE TABLE entities (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id text NOT NULL,
    key     text NOT NULL,
    name    text NOT NULL,
    type    text NOT NULL,
    vector  bytea NOT NULL,  -- float16, as the graph keeps it in memory
    UNIQUE (user_id, key)
);
CREATE TABLE entity_aliases (
    user_id   text NOT NULL,
    key       text NOT NULL,
    entity_id bigint NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    surface   text NOT NULL,
    PRIMARY KEY (user_id, key)
);
CREATE INDEX entity_aliases_entity ON entity_aliases(entity_id);
CREATE TABLE mentions (
    entity_id  bigint NOT NULL,
    episode_id bigint NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, episode_id)
);
CREATE INDEX mentions_episode ON mentions(episode_id);
CREATE FUNCTION drop_orphan_entities() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entities e WHERE e.id IN (SELECT DISTINCT entity_id FROM gone)
        AND NOT EXISTS (SELECT 1 FROM mentions m WHERE m.entity_id = e.id);
    RETURN NULL;
END $$;
CREATE TRIGGER mentions_drop_orphans AFTER DELETE ON mentions
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION drop_orphan_entities();

-- PII vault: ciphertext and a keyed digest only; the plaintext never reaches the database.
CREATE TABLE vault (
    token      text PRIMARY KEY,
    user_id    text NOT NULL,
    category   text NOT NULL,
    digest     text NOT NULL,
    ciphertext bytea NOT NULL,
    created_at double precision NOT NULL
);
CREATE UNIQUE INDEX vault_user_digest ON vault(user_id, digest);

-- What each import has seen, per user, source and unit (a file or a conversation).
CREATE TABLE imports (
    user_id  text NOT NULL,
    source   text NOT NULL,
    unit     text NOT NULL,
    stamp    text NOT NULL,
    passages jsonb NOT NULL,
    PRIMARY KEY (user_id, source, unit)
);
