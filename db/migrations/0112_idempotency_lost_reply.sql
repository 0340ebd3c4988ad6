-- A write that committed, by a capledger instance that stopped before it stored the reply for
-- the request's Idempotency-Key (killed between its COMMIT and store_idem_complete), used to
-- leave a claim that a retry took over as stale, and the retry wrote again.
--
-- Now a claim carries a nonce the server drew for it (claim_nonce, 32 hex digits from
-- randombytes: not the request's X-Request-Id, which a client may choose and reuse), and every
-- audit_event written by the request holding the claim carries the same nonce (idem_claim), in
-- the write's own transaction. A retry that finds the claim stale first asks whether an
-- audit_event with its nonce exists. If so, the write committed: the key's row becomes
-- reply_lost (status 409, response {"action", "target_id"} of the write) and every retry with the
-- key is answered 409 idempotency-reply-lost instead of writing again (store/idempotency.c,
-- http/idempotency.c). A JSON body's digest is kept from the claim on (body_sha256), so a
-- different request reusing the key still gets idempotency-key-reused; an upload's is known only
-- at its end. Decisions opt out: a retried identical signed record is recognised by its handler
-- and answered 200 with the stored decision, as before.
ALTER TABLE idempotency ADD COLUMN claim_nonce text CHECK (claim_nonce ~ '^[0-9a-f]{32}$'),
    ADD COLUMN reply_lost boolean NOT NULL DEFAULT false;
ALTER TABLE audit_event ADD COLUMN idem_claim text;
CREATE INDEX audit_event_idem_claim ON audit_event (idem_claim) WHERE idem_claim IS NOT NULL;
