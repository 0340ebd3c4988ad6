-- Alerts for owners: evidence gathered after a decision (job accounting, new benchmarks)
-- departs from the assumptions the decision rested on. One alert per decision and metric: a
-- later sweep that sees the same drift does not raise it again; a new decision starts afresh.
CREATE TABLE alert (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    kind            text NOT NULL CHECK (kind IN ('drift')),
    review_id       uuid NOT NULL REFERENCES review (id),
    decision_id     uuid NOT NULL REFERENCES decision (id),
    owner           text NOT NULL,
    metric          text NOT NULL CHECK (metric IN ('failure_rate', 'gpu_utilization',
                        'queue_wait_s', 'throughput_units_per_s')),
    assumed         double precision NOT NULL,
    observed        double precision NOT NULL,
    relative_change double precision NOT NULL,
    threshold       double precision NOT NULL,
    sample_size     integer NOT NULL CHECK (sample_size > 0),
    evidence        jsonb NOT NULL DEFAULT '[]'::jsonb,
    message         text NOT NULL,
    status          text NOT NULL DEFAULT 'open'
                    CHECK (status IN ('open', 'acknowledged', 'resolved')),
    note            text CHECK (length(note) <= 4000),
    version         integer NOT NULL DEFAULT 1,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    updated_by      text,
    UNIQUE (decision_id, metric)
);
CREATE INDEX alert_owner ON alert (owner, created_at, id);
CREATE INDEX alert_created ON alert (created_at, id);
