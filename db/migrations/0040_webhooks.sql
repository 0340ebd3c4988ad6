-- Webhooks: where an owner's or admin's alerts are posted (Slack-compatible or JSON), and the
-- outbox of deliveries. Raising an alert inserts its deliveries in the same transaction; a
-- background thread in every server instance claims due rows (FOR UPDATE SKIP LOCKED, under a
-- lease) and posts them, retrying with exponential backoff until delivered or given up.
CREATE TABLE webhook (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id       uuid NOT NULL REFERENCES app_user (id),
    owner         text NOT NULL,
    url           text NOT NULL CHECK (length(url) <= 2048 AND url ~* '^https?://'),
    events        text[] NOT NULL CHECK (cardinality(events) BETWEEN 1 AND 8
                      AND events <@ ARRAY['drift', 'log_integrity']::text[]),
    format        text NOT NULL DEFAULT 'json' CHECK (format IN ('json', 'slack')),
    description   text NOT NULL DEFAULT '' CHECK (length(description) <= 200),
    -- the HMAC key, sealed under a key derived from the server's key (never returned)
    secret_sealed text NOT NULL CHECK (secret_sealed LIKE 'v1:%'),
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_owner ON webhook (owner, created_at, id);
CREATE INDEX webhook_created ON webhook (created_at, id);

CREATE TABLE webhook_delivery (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(), -- the webhook-id header
    webhook_id      uuid NOT NULL REFERENCES webhook (id) ON DELETE CASCADE,
    event           text NOT NULL CHECK (event IN ('drift', 'log_integrity', 'ping')),
    alert_id        uuid,            -- the alert delivered (NULL for a ping)
    body            text NOT NULL,   -- the exact bytes posted on every attempt
    status          text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'failing', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease           uuid,            -- set while an instance is posting it
    last_attempt_at timestamptz,
    last_status     integer,         -- the receiver's HTTP status, NULL when none came
    last_error      text CHECK (length(last_error) <= 500),
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (webhook_id, event, alert_id)
);
CREATE INDEX webhook_delivery_due ON webhook_delivery (next_attempt_at)
    WHERE status IN ('pending', 'failing');
CREATE INDEX webhook_delivery_list ON webhook_delivery (webhook_id, created_at, id);
