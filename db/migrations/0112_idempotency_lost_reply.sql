-- A write that committed, by a capledger instance that stopped before it stored the reply for
-- the request's Idempotency-Key (killed between its COMMIT and store_idem_complete), used to
-- leave a claim that a retry took over as stale, and the retry wrote again. Every write puts an
-- audit_event with the request's id in its own transaction; a claim now records the id of the
-- request that holds it, so a retry that finds the claim stale first asks whether that request
-- committed. If so the key keeps a row with status 409, body_sha256 NULL (a completed reply
-- always has its body's digest) and response {"action", "target_id"} of the write, and every
-- retry with the key is answered 409 idempotency-reply-lost naming what was written instead of
-- writing it again (store/idempotency.c, http/idempotency.c).
ALTER TABLE idempotency ADD COLUMN claim_request_id text;
CREATE INDEX audit_event_request ON audit_event (request_id);
