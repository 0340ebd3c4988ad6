-- Signing keys are enrolled and revoked by leaves of the decision log (core/ledger/keylog.h;
-- their exact form is in docs/auditors.md), so the log itself says which keys could sign at
-- each point of its history. This table only indexes those leaves (which leaf enrolled, which
-- revoked each key); the leaf is authoritative, and an append reads it back.
-- Keys registered before this migration get their leaves at the next start of the server,
-- after the log's existing leaves (the server holds the key that signs checkpoints).
CREATE TABLE log_key_event (
    key_id     text NOT NULL REFERENCES signing_key (key_id),
    kind       text NOT NULL CHECK (kind IN ('enrol', 'revoke')),
    leaf_index bigint NOT NULL UNIQUE REFERENCES log_leaf (leaf_index),
    PRIMARY KEY (key_id, kind)
);
CREATE TRIGGER log_key_event_append_only BEFORE UPDATE OR DELETE ON log_key_event
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER log_key_event_no_truncate BEFORE TRUNCATE ON log_key_event
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- Only keys registered before this migration are enrolled that way: a key registered later
-- gets its enrolment leaf in the transaction that registers it, and a key row that appears
-- without one (written into the database by hand) is never enrolled by a restart.
CREATE TABLE log_key_backfill (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    keys_before timestamptz NOT NULL
);
INSERT INTO log_key_backfill (keys_before) VALUES (now());
CREATE TRIGGER log_key_backfill_append_only BEFORE UPDATE OR DELETE ON log_key_backfill
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
