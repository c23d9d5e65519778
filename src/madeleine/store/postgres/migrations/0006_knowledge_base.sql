-- The knowledge base: collections, documents, their versions (governance: ACL, validity)
-- and chunks (vector NULL until the indexer embeds it). Every change bumps `generation`.
CREATE TABLE kb_collections (
    name          text PRIMARY KEY,
    description   text NOT NULL DEFAULT '',
    l0            text NOT NULL DEFAULT '',
    l1            text NOT NULL DEFAULT '',
    profile       text NOT NULL DEFAULT '',
    vector        vector,
    profile_stale boolean NOT NULL DEFAULT true,
    created_at    double precision NOT NULL
);
CREATE TABLE kb_documents (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    collection text NOT NULL,
    doc_id     text NOT NULL,
    created_at double precision NOT NULL,
    UNIQUE (collection, doc_id)
);
CREATE TABLE kb_versions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document       bigint NOT NULL REFERENCES kb_documents(id) ON DELETE CASCADE,
    number         integer NOT NULL,
    title          text NOT NULL,
    source_type    text NOT NULL,
    acl            text[] NOT NULL,
    metadata       jsonb NOT NULL,
    effective_from double precision,
    expires_at     double precision,
    created_at     double precision NOT NULL,
    content_hash   text NOT NULL,
    reused         integer NOT NULL DEFAULT 0,
    l0             text NOT NULL DEFAULT '',
    l1             text NOT NULL DEFAULT '',
    UNIQUE (document, number)
);
CREATE TABLE kb_chunks (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    version    bigint NOT NULL REFERENCES kb_versions(id) ON DELETE CASCADE,
    position   integer NOT NULL,
    section    jsonb NOT NULL,
    text       text NOT NULL,
    prefix     text NOT NULL,
    terms      text NOT NULL,
    embed_text text NOT NULL,
    embed_key  text NOT NULL,
    context    text,
    vector     vector
);
CREATE INDEX kb_chunks_version ON kb_chunks(version, position);
CREATE INDEX kb_chunks_key ON kb_chunks(embed_key);
CREATE INDEX kb_chunks_pending ON kb_chunks(id) WHERE vector IS NULL;
-- transactional (not a sequence): a reader that sees a generation sees its data too
CREATE TABLE kb_state (
    id         integer PRIMARY KEY CHECK (id = 1),
    generation bigint NOT NULL
);
INSERT INTO kb_state(id, generation) VALUES (1, 0);
