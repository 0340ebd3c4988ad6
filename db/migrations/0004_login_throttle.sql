-- Failed sign-in counters, per account and per client address, kept in the database so that
-- every server instance sees the same counts. Keys are SHA-256 hex: an attempted username may
-- be a password typed into the wrong field, and it must not sit here in clear text.
CREATE TABLE login_throttle (
    scope        text NOT NULL CHECK (scope IN ('account', 'address')),
    key_sha256   text NOT NULL CHECK (key_sha256 ~ '^[0-9a-f]{64}$'),
    failures     integer NOT NULL CHECK (failures > 0),
    window_start timestamptz NOT NULL,
    locked_until timestamptz,
    PRIMARY KEY (scope, key_sha256)
);
CREATE INDEX login_throttle_window ON login_throttle (window_start);
