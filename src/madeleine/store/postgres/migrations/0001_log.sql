-- The append-only log and its outbox. Ids come from identity sequences: an id is never
-- given again after a delete, so an id a caller kept cannot come to name another memory.
-- Times are seconds since the epoch (double precision), as everywhere in the engine.
CREATE TABLE meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE events (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id      text NOT NULL,
    session_id   text NOT NULL,
    kind         text NOT NULL,
    role         text NOT NULL,
    name         text,
    content      text NOT NULL,
    metadata     jsonb NOT NULL DEFAULT '{}',
    occurred_at  double precision NOT NULL,
    recorded_at  double precision NOT NULL,
    content_hash text NOT NULL,
    external_id  text
);
CREATE UNIQUE INDEX events_external ON events(user_id, external_id) WHERE external_id IS NOT NULL;
CREATE UNIQUE INDEX events_hash ON events(user_id, content_hash);
CREATE INDEX events_session ON events(user_id, session_id, occurred_at, id);

-- The durable work queue, written in the transaction of the events it refers to. Workers
-- claim rows with FOR UPDATE SKIP LOCKED and hold them by a lease (claimed_until).
CREATE TABLE outbox (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      bigint NOT NULL,
    user_id       text NOT NULL,
    enqueued_at   double precision NOT NULL,
    claimed_by    text,
    claimed_until double precision,
    attempts      integer NOT NULL DEFAULT 0,
    last_error    text
);
CREATE INDEX outbox_event ON outbox(event_id);
CREATE INDEX outbox_user ON outbox(user_id);
CREATE INDEX outbox_ready ON outbox(id) WHERE attempts < 5;
