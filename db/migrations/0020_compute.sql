-- Scenarios (questions for the cost engine) and stored comparisons (its answers).
-- A scenario's `document` is what the client sent: options may reference stored offers and
-- benchmarks by id. A comparison keeps the *resolved* document (every reference replaced by
-- the record's fields) and the result, so it can be recomputed offline from an audit bundle.
CREATE TABLE scenario (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    team         text NOT NULL REFERENCES team (name) ON UPDATE CASCADE,
    name         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    workload_ids uuid[] NOT NULL DEFAULT '{}',
    document     jsonb NOT NULL,
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX scenario_team ON scenario (team, created_at);

CREATE TABLE comparison (
    sha256         text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'), -- of JCS(result)
    scenario_id    uuid REFERENCES scenario (id),
    team           text NOT NULL,
    workload_ids   uuid[] NOT NULL DEFAULT '{}',
    input_sha256   text NOT NULL,                                     -- of JCS(resolved scenario)
    engine_version text NOT NULL,
    resolved       jsonb NOT NULL,
    result         jsonb NOT NULL,
    result_jcs     text NOT NULL,  -- the exact bytes hashed, kept verbatim for auditors
    created_by     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX comparison_scenario ON comparison (scenario_id, created_at);
CREATE TRIGGER comparison_append_only BEFORE UPDATE OR DELETE ON comparison
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
