-- The audit log: who changed what and when (key id, tenant, user id, route, path ids, status, time),
-- never the content. An erased user's rows keep a hash of their id instead.
CREATE TABLE audit_log (
    id      bigserial PRIMARY KEY,
    at      double precision NOT NULL,
    key_id  text NOT NULL,
    tenant  text NOT NULL,
    user_id text,
    method  text NOT NULL,
    route   text NOT NULL,
    target  text NOT NULL,
    status  integer NOT NULL
);
CREATE INDEX audit_log_user ON audit_log(user_id);
