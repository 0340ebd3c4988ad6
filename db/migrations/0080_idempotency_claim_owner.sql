-- Which database session holds an idempotency claim (status NULL): its backend's pid and start
-- time. When the capledger instance that claimed a key dies mid-request (killed, its machine
-- gone), its sessions end with it, and a retry through another instance takes the claim over
-- at once instead of answering "in progress" until the claim is 15 minutes old.
ALTER TABLE idempotency ADD COLUMN claim_pid integer;
ALTER TABLE idempotency ADD COLUMN claim_backend_start timestamptz;
