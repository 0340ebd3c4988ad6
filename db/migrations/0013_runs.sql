-- Job accounting (API.md "A run"). (cluster, external_id) is unique: a re-upload counts
-- duplicates and stores nothing twice. Uploads stream into a temporary staging table with COPY
-- and reach this table with one INSERT … SELECT … ON CONFLICT DO NOTHING.
CREATE TABLE run (
    id              bigserial PRIMARY KEY,
    cluster         text NOT NULL CHECK (length(cluster) BETWEEN 1 AND 127),
    external_id     text NOT NULL CHECK (length(external_id) BETWEEN 1 AND 127),
    team            text,
    "user"          text,
    workload_class  text,
    submitted_at    timestamptz NOT NULL,
    started_at      timestamptz,
    ended_at        timestamptz NOT NULL,
    gpus            double precision NOT NULL DEFAULT 0 CHECK (gpus >= 0),
    state           text NOT NULL CHECK (state IN ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT',
                        'PREEMPTED', 'NODE_FAIL', 'OUT_OF_MEMORY', 'BOOT_FAIL', 'DEADLINE')),
    exit_code       text,
    gpu_utilization double precision CHECK (gpu_utilization BETWEEN 0 AND 1),
    upload_id       uuid NOT NULL, -- the upload row is written in the same transaction; no FK,
                                   -- whose per-row trigger would cost a bulk upload dearly
    UNIQUE (cluster, external_id),
    CHECK (started_at IS NULL OR started_at >= submitted_at),
    CHECK (ended_at >= coalesce(started_at, submitted_at))
);
CREATE INDEX run_submitted ON run (submitted_at);
CREATE INDEX run_team_submitted ON run (team, submitted_at);
CREATE INDEX run_upload ON run (upload_id);
