-- BM25's document frequencies, kept per lexeme: how many documents of a corpus hold it (in
-- any of their term columns). A search reads the few lexemes of its query by primary key
-- instead of counting matches over the whole table, which grew with every user.
-- Statement-level triggers keep it: one upsert per statement, lexemes taken in sorted
-- order so that concurrent writers lock the shared rows in the same order (no deadlock).
CREATE TABLE lexical_df (
    corpus text NOT NULL,
    lexeme text NOT NULL,
    docs   bigint NOT NULL,
    PRIMARY KEY (corpus, lexeme)
);

-- A lexeme no document holds any more is deleted, not kept at zero: the terms of an erased
-- message must not survive in the store.
CREATE FUNCTION lexical_df_move(corpus_name text, deltas jsonb) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO lexical_df(corpus, lexeme, docs)
    SELECT corpus_name, d.key, d.value::bigint
    FROM jsonb_each_text(deltas) d
    ORDER BY d.key
    ON CONFLICT (corpus, lexeme) DO UPDATE SET docs = lexical_df.docs + excluded.docs;
    DELETE FROM lexical_df
    WHERE corpus = corpus_name AND docs <= 0
      AND lexeme IN (SELECT d.key FROM jsonb_each_text(deltas) d WHERE d.value::bigint < 0);
$$;

CREATE FUNCTION episodes_df() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deltas jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT jsonb_object_agg(l, n) INTO deltas FROM (
            SELECT l, count(*) AS n FROM new_rows r,
                   unnest(tsvector_to_array(r.body_terms || r.context_terms)) l GROUP BY l
        ) x;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT jsonb_object_agg(l, -n) INTO deltas FROM (
            SELECT l, count(*) AS n FROM old_rows r,
                   unnest(tsvector_to_array(r.body_terms || r.context_terms)) l GROUP BY l
        ) x;
    ELSE
        SELECT jsonb_object_agg(l, n) INTO deltas FROM (
            SELECT l, sum(n) AS n FROM (
                SELECT l, 1 AS n FROM new_rows r,
                       unnest(tsvector_to_array(r.body_terms || r.context_terms)) l
                UNION ALL
                SELECT l, -1 AS n FROM old_rows r,
                       unnest(tsvector_to_array(r.body_terms || r.context_terms)) l
            ) both_sides GROUP BY l HAVING sum(n) != 0
        ) x;
    END IF;
    IF deltas IS NOT NULL THEN
        PERFORM lexical_df_move('episodes', deltas);
    END IF;
    RETURN NULL;
END $$;

CREATE FUNCTION terms_df() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    deltas jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT jsonb_object_agg(l, n) INTO deltas FROM (
            SELECT l, count(*) AS n FROM new_rows r, unnest(tsvector_to_array(r.terms)) l
            GROUP BY l
        ) x;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT jsonb_object_agg(l, -n) INTO deltas FROM (
            SELECT l, count(*) AS n FROM old_rows r, unnest(tsvector_to_array(r.terms)) l
            GROUP BY l
        ) x;
    ELSE
        SELECT jsonb_object_agg(l, n) INTO deltas FROM (
            SELECT l, sum(n) AS n FROM (
                SELECT l, 1 AS n FROM new_rows r, unnest(tsvector_to_array(r.terms)) l
                UNION ALL
                SELECT l, -1 AS n FROM old_rows r, unnest(tsvector_to_array(r.terms)) l
            ) both_sides GROUP BY l HAVING sum(n) != 0
        ) x;
    END IF;
    IF deltas IS NOT NULL THEN
        PERFORM lexical_df_move(TG_ARGV[0], deltas);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER episodes_df_insert AFTER INSERT ON episodes
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION episodes_df();
CREATE TRIGGER episodes_df_delete AFTER DELETE ON episodes
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION episodes_df();
CREATE TRIGGER episodes_df_update AFTER UPDATE ON episodes
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION episodes_df();

-- one-column corpora: session digests ("sessions") and facts ("facts")
CREATE TRIGGER session_digests_df_insert AFTER INSERT ON session_digests
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION terms_df('sessions');
CREATE TRIGGER session_digests_df_delete AFTER DELETE ON session_digests
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION terms_df('sessions');
CREATE TRIGGER session_digests_df_update AFTER UPDATE ON session_digests
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION terms_df('sessions');
CREATE TRIGGER facts_df_insert AFTER INSERT ON facts
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION terms_df('facts');
CREATE TRIGGER facts_df_delete AFTER DELETE ON facts
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION terms_df('facts');
CREATE TRIGGER facts_df_update AFTER UPDATE ON facts
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION terms_df('facts');

-- a store written by the previous version: count what is there
INSERT INTO lexical_df(corpus, lexeme, docs)
SELECT 'episodes', l, count(*) FROM episodes r,
       unnest(tsvector_to_array(r.body_terms || r.context_terms)) l GROUP BY l;
INSERT INTO lexical_df(corpus, lexeme, docs)
SELECT 'sessions', l, count(*) FROM session_digests r, unnest(tsvector_to_array(r.terms)) l
GROUP BY l;
INSERT INTO lexical_df(corpus, lexeme, docs)
SELECT 'facts', l, count(*) FROM facts r, unnest(tsvector_to_array(r.terms)) l GROUP BY l;
