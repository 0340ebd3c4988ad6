-- Idempotency keys: the first reply to a POST, kept so that a retry with the same key and the
-- same body gets it again (and a different body gets 409). Keys are per user: two pipelines
-- choosing the same key cannot see each other's replies. A row with status NULL is a claim
-- held by a request still running; it is deleted when that request ends without a reply worth
-- replaying (a 5xx, a client error that a retry would reproduce anyway).
CREATE TABLE idempotency (
    user_id     uuid NOT NULL,
    key         text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    route       text NOT NULL,
    body_sha256 text CHECK (body_sha256 ~ '^[0-9a-f]{64}$'),
    status      integer CHECK (status BETWEEN 200 AND 599),
    response    text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_created ON idempotency (created_at);

-- Every upload (job accounting, telemetry, price sheet, load-test import) leaves one record
-- with what was sent (size, digest, content type, parameters) and what came of it, so a
-- decision can cite it as evidence. Written once, at the end of the upload's transaction.
CREATE TABLE upload (
    id              uuid PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('runs', 'telemetry', 'offers', 'benchmark_import')),
    team            text,
    benchmark_id    uuid,
    created_by      uuid,
    created_by_name text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    content_type    text NOT NULL,
    format          text,
    params          jsonb NOT NULL DEFAULT '{}'::jsonb,
    bytes           bigint NOT NULL CHECK (bytes >= 0),
    body_sha256     text NOT NULL CHECK (body_sha256 ~ '^[0-9a-f]{64}$'),
    lines           bigint NOT NULL DEFAULT 0,
    inserted        bigint NOT NULL DEFAULT 0,
    duplicates      bigint NOT NULL DEFAULT 0,
    skipped         bigint NOT NULL DEFAULT 0,
    rejected_total  bigint NOT NULL DEFAULT 0,
    summary         jsonb
);
CREATE INDEX upload_team_created ON upload (team, created_at);
CREATE TRIGGER upload_append_only BEFORE UPDATE OR DELETE ON upload
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
