-- Short-term memory: conversation buffers with a time to live, and agent state machines.
CREATE TABLE short_sessions (
    user_id       text NOT NULL,
    session_id    text NOT NULL,
    summary       text NOT NULL DEFAULT '',
    folded        integer NOT NULL DEFAULT 0,
    next_position integer NOT NULL DEFAULT 1,
    updated_at    double precision NOT NULL,
    expires_at    double precision,
    PRIMARY KEY (user_id, session_id)
);
CREATE INDEX short_sessions_expiry ON short_sessions(expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE short_messages (
    user_id    text NOT NULL,
    session_id text NOT NULL,
    position   integer NOT NULL,
    role       text NOT NULL,
    content    text NOT NULL,
    name       text,
    pinned     boolean NOT NULL DEFAULT false,
    created_at double precision NOT NULL,
    PRIMARY KEY (user_id, session_id, position)
);
CREATE TABLE agent_states (
    user_id    text NOT NULL,
    agent_id   text NOT NULL,
    state      text NOT NULL,
    data       jsonb NOT NULL DEFAULT '{}',
    entered_at double precision NOT NULL,
    version    integer NOT NULL,
    PRIMARY KEY (user_id, agent_id)
);
CREATE TABLE agent_transitions (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    text NOT NULL,
    agent_id   text NOT NULL,
    from_state text,
    to_state   text NOT NULL,
    reason     text NOT NULL DEFAULT '',
    at         double precision NOT NULL
);
CREATE INDEX agent_transitions_agent ON agent_transitions(user_id, agent_id, id);
