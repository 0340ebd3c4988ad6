-- The 90-day review: the question an owner is answering, the workloads it covers, and the
-- artifacts (named contributor, due date, representative inputs, agreed baseline, evidence)
-- of its three phases. Phases are computed from started_on, never stored: days 1-30 evidence
-- plan, 31-60 smallest complete workflow, 61-90 boundary test. Status is set by the server:
-- 'decided' when a decision is appended, 'needs decision' when drift is detected afterwards.
CREATE TABLE review (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    title           text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    question        text NOT NULL CHECK (length(question) BETWEEN 1 AND 2000),
    workload_ids    uuid[] NOT NULL DEFAULT '{}',
    owner           text NOT NULL REFERENCES app_user (username) ON UPDATE CASCADE,
    started_on      date NOT NULL,
    status          text NOT NULL DEFAULT 'open'
                    CHECK (status IN ('open', 'needs decision', 'decided')),
    -- Relative departure from a decision's assumptions that raises a drift alert.
    drift_threshold double precision NOT NULL DEFAULT 0.25
                    CHECK (drift_threshold > 0 AND drift_threshold <= 10),
    version         integer NOT NULL DEFAULT 1,
    created_by      text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX review_created ON review (created_at, id);
CREATE INDEX review_workloads ON review USING gin (workload_ids);

CREATE TABLE review_artifact (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    review_id             uuid NOT NULL REFERENCES review (id),
    title                 text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
    phase                 text NOT NULL CHECK (phase IN ('evidence_plan',
                              'smallest_complete_workflow', 'boundary_test')),
    contributor           text NOT NULL CHECK (length(contributor) BETWEEN 1 AND 200),
    due_on                date,
    representative_inputs text CHECK (length(representative_inputs) <= 4000),
    baseline              text CHECK (length(baseline) <= 4000),
    status                text NOT NULL DEFAULT 'planned'
                          CHECK (status IN ('planned', 'in_progress', 'done', 'blocked')),
    -- Ids of benchmarks, uploads (runs, telemetry, price sheets) or comparison hashes.
    evidence              text[] NOT NULL DEFAULT '{}',
    -- Boundary tests only: [{condition, exercised, outcome}], condition one of
    -- degraded_dependency, ambiguous_input, recovery, handoff.
    exercised             jsonb NOT NULL DEFAULT '[]'::jsonb,
    version               integer NOT NULL DEFAULT 1,
    created_by            text NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CHECK (phase = 'boundary_test' OR exercised = '[]'::jsonb)
);
CREATE INDEX review_artifact_review ON review_artifact (review_id, created_at, id);
