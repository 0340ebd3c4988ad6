-- Users, team membership and API tokens. Passwords are argon2id strings from libsodium;
-- tokens are stored only as SHA-256 hex of the whole token text.
CREATE TABLE app_user (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    username      text NOT NULL UNIQUE CHECK (username ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
    role          text NOT NULL CHECK (role IN ('admin', 'owner', 'team', 'auditor')),
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    disabled_at   timestamptz
);

CREATE TABLE user_team (
    user_id uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    team_id uuid NOT NULL REFERENCES team (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, team_id)
);

CREATE TABLE api_token (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id      uuid NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    label        text NOT NULL DEFAULT '' CHECK (length(label) <= 200),
    token_sha256 text NOT NULL UNIQUE CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_token_user ON api_token (user_id);
