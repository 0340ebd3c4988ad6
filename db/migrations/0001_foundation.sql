-- Foundation: teams, the first resource through every layer.
CREATE TABLE team (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name       text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Audit trail: every write, with who did it (user and/or token), when, the request id and
-- what changed. Append-only.
CREATE TABLE audit_event (
    id          bigserial PRIMARY KEY,
    at          timestamptz NOT NULL DEFAULT now(),
    actor_user  uuid,
    actor_name  text NOT NULL,
    actor_token uuid,
    request_id  text NOT NULL,
    action      text NOT NULL,
    target_id   text,
    change      jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_event_at ON audit_event (at);

CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = '42501';
END $$;
CREATE TRIGGER audit_event_append_only BEFORE UPDATE OR DELETE ON audit_event
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
