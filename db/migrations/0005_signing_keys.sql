-- Owners' Ed25519 public keys for signing decision records. key_id is the lower-case hex
-- SHA-256 of the raw 32-byte key (the database checks the derivation). A key is never deleted
-- or changed: revoking it stops new signatures, and it stays to verify the records it signed.
CREATE TABLE signing_key (
    key_id     text PRIMARY KEY CHECK (key_id ~ '^[0-9a-f]{64}$'),
    user_id    uuid NOT NULL REFERENCES app_user (id) ON DELETE RESTRICT,
    public_key bytea NOT NULL CHECK (length(public_key) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz,
    CHECK (key_id = encode(sha256(public_key), 'hex'))
);
CREATE INDEX signing_key_user ON signing_key (user_id);

-- Only one change is allowed: setting revoked_at once.
CREATE FUNCTION signing_key_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'signing keys are never deleted' USING ERRCODE = '42501';
    END IF;
    IF NEW.key_id <> OLD.key_id OR NEW.user_id <> OLD.user_id
       OR NEW.public_key <> OLD.public_key OR NEW.created_at <> OLD.created_at
       OR (OLD.revoked_at IS NOT NULL AND NEW.revoked_at IS DISTINCT FROM OLD.revoked_at) THEN
        RAISE EXCEPTION 'a signing key may only be revoked, once' USING ERRCODE = '42501';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER signing_key_guard BEFORE UPDATE OR DELETE ON signing_key
    FOR EACH ROW EXECUTE FUNCTION signing_key_guard();
