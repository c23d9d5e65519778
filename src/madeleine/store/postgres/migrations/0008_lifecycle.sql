-- The memory lifecycle: per-item state (importance, pins, archive, spaced recalls) and the
-- log of every lifecycle decision, so that maintenance can be explained and undone.
CREATE TABLE item_states (
    user_id        text NOT NULL,
    item           text NOT NULL,
    importance     double precision,
    importance_by  text,
    pinned         boolean,
    archived_at    double precision,
    archive_reason text,
    recalls        integer NOT NULL DEFAULT 0,
    stability      double precision NOT NULL DEFAULT 1,
    last_recall    double precision,
    PRIMARY KEY (user_id, item)
);
CREATE TABLE lifecycle_log (
    id        bigserial PRIMARY KEY,
    user_id   text NOT NULL,
    run       text NOT NULL,
    at        double precision NOT NULL,
    action    text NOT NULL,
    item      text NOT NULL,
    before    jsonb,
    after     jsonb,
    detail    jsonb NOT NULL,
    undone_at double precision
);
CREATE INDEX lifecycle_log_user ON lifecycle_log(user_id, run);
-- A user's generation comes from one sequence, so it never repeats, even after a forget.
CREATE SEQUENCE lifecycle_clock;
CREATE TABLE lifecycle_users (
    user_id text PRIMARY KEY,
    gen     bigint NOT NULL
);
