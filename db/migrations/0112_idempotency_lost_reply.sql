-- A write that committed, by a capledger instance that stopped before it stored the reply for
-- the request's Idempotency-Key (killed between its COMMIT and store_idem_complete), used to
-- leave a claim that a retry took over as stale, and the retry wrote again.
--
-- Exactly one write per key, whatever instance dies when: a write made under a claim locks the
-- claim's row (FOR SHARE) when it writes its audit_event and commits only while the claim is
-- pending and its own; a retry settling a stale claim locks the row (FOR UPDATE) first, so it
-- sees a write that committed, and a write still running fails once the claim is settled.
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
    ADD COLUMN reply_lost boolean NOT NULL DEFAULT false,
    -- the claim's route answers a retry of its own committed write itself (decisions): a stale
    -- claim of it is forgotten for a retry on that route, not marked lost
    ADD COLUMN own_retries boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX idempotency_claim_nonce ON idempotency (claim_nonce) WHERE claim_nonce IS NOT NULL;
ALTER TABLE audit_event ADD COLUMN idem_claim text;
CREATE INDEX audit_event_idem_claim ON audit_event (idem_claim) WHERE idem_claim IS NOT NULL;
