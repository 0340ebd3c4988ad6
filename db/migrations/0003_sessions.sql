-- Browser sessions. The cookie carries 32 random bytes (base64url); only their SHA-256 hex is
-- stored, so a copy of this table does not let anyone sign in. A session ends at expires_at
-- (absolute), after an idle period without requests (last_seen_at, checked by the server), or
-- at logout (ended_at).
CREATE TABLE user_session (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    id_sha256    text NOT NULL UNIQUE CHECK (id_sha256 ~ '^[0-9a-f]{64}$'),
    user_id      uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    ended_at     timestamptz,
    CHECK (expires_at > created_at)
);
CREATE INDEX user_session_user ON user_session (user_id);
CREATE INDEX user_session_expires ON user_session (expires_at);
