-- Webhook deliveries that isolate owners (issue 25): a webhook's destination (the scheme, host
-- and port of its URL), at most one delivery in flight per destination and per owner, and a
-- circuit breaker per destination that keeps timing out (core/notify/webhook.h).
ALTER TABLE webhook ADD COLUMN destination text
    GENERATED ALWAYS AS (lower(substring(url FROM '^([A-Za-z]+://[^/?#]+)'))) STORED;
CREATE INDEX webhook_destination_of ON webhook (destination);

CREATE TABLE webhook_destination (
    destination text PRIMARY KEY,
    failures    integer NOT NULL DEFAULT 0 CHECK (failures >= 0), -- timeouts / no connection in a row
    open_until  timestamptz,                                      -- not tried before this
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- Deliveries in flight (leased), looked up at every claim.
CREATE INDEX webhook_delivery_leased ON webhook_delivery (webhook_id) WHERE lease IS NOT NULL;
