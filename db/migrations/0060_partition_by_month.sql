-- Runs and telemetry samples partitioned by month (PostgreSQL declarative range partitioning).
--
-- Keys: a run by submitted_at (NOT NULL; every time filter of the API — the runs list, the
-- usage report, the drift check, the review checklist — is on submitted_at, so those queries
-- prune); a sample by ts (its identity, so the unique index keeps working). Months are UTC
-- months, each partition named <table>_pYYYY_MM; a DEFAULT partition takes every row no month
-- partition covers (a run from 1990 or 2090, a sample without a timestamp), so an upload never
-- fails for want of a partition. capledger_partitions_maintain (the server calls it at start
-- and every hour) creates the current month and the next ones, moves default rows of a month
-- up to then into that month's new partition, and with a retention drops whole months.
--
-- Uniqueness: a unique index on a partitioned table must contain the partition key.
-- * Samples: (benchmark_id, gpu, ts) contains ts, so it stays a unique index: one ts is always
--   in one partition (a move from the default happens in one transaction under a lock).
-- * Runs: (cluster, external_id) does not contain submitted_at, and a (cluster, external_id,
--   submitted_at) index would let a requeued job (same id, new submit time) in twice. So the
--   key lives in run_key (PRIMARY KEY (cluster, external_id)), written by the same INSERT …
--   ON CONFLICT DO NOTHING that decides what is a duplicate; only rows that got a key reach run.

-- ---- runs ----
ALTER TABLE run RENAME TO run_unpartitioned;
ALTER TABLE run_unpartitioned DROP CONSTRAINT run_pkey, DROP CONSTRAINT run_cluster_external_id_key;
DROP INDEX run_submitted, run_team_submitted, run_upload;
ALTER SEQUENCE run_id_seq OWNED BY NONE;
ALTER TABLE run_unpartitioned ALTER COLUMN id DROP DEFAULT;

CREATE TABLE run (
    id              bigint NOT NULL DEFAULT nextval('run_id_seq'),
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
    upload_id       uuid NOT NULL,
    partition       text,
    gpu_model       text,
    PRIMARY KEY (id, submitted_at), -- ids come from one sequence: unique on their own
    CHECK (started_at IS NULL OR started_at >= submitted_at),
    CHECK (ended_at >= coalesce(started_at, submitted_at))
) PARTITION BY RANGE (submitted_at);
ALTER SEQUENCE run_id_seq OWNED BY run.id;
CREATE TABLE run_default PARTITION OF run DEFAULT;
CREATE INDEX run_submitted ON run (submitted_at);
CREATE INDEX run_team_submitted ON run (team, submitted_at);
CREATE INDEX run_upload ON run (upload_id);
CREATE INDEX run_id ON run (id); -- GET by id and the list's keyset pages

CREATE TABLE run_key (
    cluster     text NOT NULL,
    external_id text NOT NULL,
    PRIMARY KEY (cluster, external_id)
);

-- ---- telemetry samples ----
ALTER TABLE telemetry_sample RENAME TO telemetry_sample_unpartitioned;
DROP INDEX telemetry_sample_benchmark, telemetry_sample_upload, telemetry_sample_once;
CREATE TABLE telemetry_sample (
    upload_id       uuid NOT NULL,
    benchmark_id    uuid NOT NULL,
    ts              timestamptz,
    gpu             text NOT NULL,
    duty_cycle      double precision,
    memory_used_gb  double precision,
    memory_total_gb double precision,
    power_w         double precision
) PARTITION BY RANGE (ts);
CREATE TABLE telemetry_sample_default PARTITION OF telemetry_sample DEFAULT;
CREATE INDEX telemetry_sample_benchmark ON telemetry_sample (benchmark_id, ts);
CREATE INDEX telemetry_sample_upload ON telemetry_sample (upload_id);
CREATE UNIQUE INDEX telemetry_sample_once ON telemetry_sample (benchmark_id, gpu, ts);

-- ---- partition maintenance ----
-- The partition of parent for the UTC month m (its first day), created when missing: built
-- beside the table, filled with the default partition's rows of that month (which leave the
-- default), then attached. The default partition is locked against writers meanwhile, so a
-- concurrent upload waits instead of putting a row where the new partition is about to be.
CREATE FUNCTION capledger_partition_month(parent text, key text, m date) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    part text := parent || '_p' || to_char(m, 'YYYY_MM');
    lo timestamptz := m::timestamp AT TIME ZONE 'UTC';
    hi timestamptz := (m + interval '1 month')::timestamp AT TIME ZONE 'UTC';
    def text := parent || '_default';
BEGIN
    IF to_regclass(part) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('LOCK TABLE %I IN SHARE ROW EXCLUSIVE MODE', def);
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', part, parent);
    -- proves the partition's bound to ATTACH, which then does not scan the new table
    EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I IS NOT NULL AND %I >= %L AND %I < %L)',
                   part, part || '_bound', key, key, lo, key, hi);
    EXECUTE format('WITH moved AS (DELETE FROM %I WHERE %I >= %L AND %I < %L RETURNING *) '
                   'INSERT INTO %I SELECT * FROM moved', def, key, lo, key, hi, part);
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                   parent, part, lo, hi);
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', part, part || '_bound');
    RETURN true;
END $$;

-- What the server runs at start and every hour (one instance at a time: the others skip).
-- ahead: months after the current one to have partitions for. retention_months > 0: drop the
-- month partitions that ended more than that many whole months before the current month began,
-- and delete the default partition's rows older than that (a run's key goes with it, so the run
-- could be uploaded again). Returns {created: [...], dropped: [...], deleted_default_rows}.
CREATE FUNCTION capledger_partitions_maintain(ahead integer, retention_months integer) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    cur date := date_trunc('month', now() AT TIME ZONE 'UTC')::date;
    last_month date := (cur + make_interval(months => ahead))::date;
    cutoff timestamptz := NULL;
    created text[] := '{}';
    dropped text[] := '{}';
    deleted bigint := 0;
    n bigint;
    t record;
    m date;
    p record;
BEGIN
    IF NOT pg_try_advisory_xact_lock(7302948812364312) THEN
        RETURN jsonb_build_object('skipped', true);
    END IF;
    IF retention_months > 0 THEN
        cutoff := (cur - make_interval(months => retention_months))::timestamp AT TIME ZONE 'UTC';
    END IF;
    FOR t IN SELECT * FROM (VALUES ('run', 'submitted_at'), ('telemetry_sample', 'ts')) v(parent, key) LOOP
        -- retention first, so an old month in the default is not given a partition to drop
        IF cutoff IS NOT NULL THEN
            FOR p IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                     WHERE i.inhparent = t.parent::regclass AND c.relname ~ ('^' || t.parent || '_p[0-9]{4}_[0-9]{2}$')
                       AND (to_date(right(c.relname, 7), 'YYYY_MM') + interval '1 month')::timestamp
                           AT TIME ZONE 'UTC' <= cutoff
                     ORDER BY c.relname LOOP
                IF t.parent = 'run' THEN
                    EXECUTE format('DELETE FROM run_key k USING %I r WHERE k.cluster = r.cluster '
                                   'AND k.external_id = r.external_id', p.relname);
                END IF;
                EXECUTE format('DROP TABLE %I', p.relname);
                dropped := dropped || p.relname::text;
            END LOOP;
            IF t.parent = 'run' THEN
                WITH d AS (DELETE FROM run_default WHERE submitted_at < cutoff RETURNING cluster, external_id),
                     k AS (DELETE FROM run_key USING d WHERE run_key.cluster = d.cluster
                           AND run_key.external_id = d.external_id)
                SELECT count(*) INTO n FROM d;
            ELSE
                DELETE FROM telemetry_sample_default WHERE ts < cutoff;
                GET DIAGNOSTICS n = ROW_COUNT;
            END IF;
            deleted := deleted + n;
        END IF;
        -- this month and the next ones, then every month the default holds rows of (up to then)
        FOR m IN SELECT generate_series(cur, last_month, interval '1 month')::date LOOP
            IF capledger_partition_month(t.parent, t.key, m) THEN
                created := created || (t.parent || '_p' || to_char(m, 'YYYY_MM'));
            END IF;
        END LOOP;
        FOR m IN EXECUTE format('SELECT DISTINCT date_trunc(''month'', %I AT TIME ZONE ''UTC'')::date '
                                'FROM %I WHERE %I IS NOT NULL AND %I < %L ORDER BY 1',
                                t.key, t.parent || '_default', t.key, t.key,
                                (last_month + interval '1 month')::timestamp AT TIME ZONE 'UTC') LOOP
            IF capledger_partition_month(t.parent, t.key, m) THEN
                created := created || (t.parent || '_p' || to_char(m, 'YYYY_MM'));
            END IF;
        END LOOP;
    END LOOP;
    RETURN jsonb_build_object('created', to_jsonb(created), 'dropped', to_jsonb(dropped),
                              'deleted_default_rows', deleted);
END $$;

-- ---- the data already stored ----
-- the months it needs first (up to the last one made ahead), so rows go straight to them
SELECT count(*) FILTER (WHERE capledger_partition_month('run', 'submitted_at', m))
FROM (SELECT DISTINCT date_trunc('month', submitted_at AT TIME ZONE 'UTC')::date AS m FROM run_unpartitioned
      WHERE submitted_at < (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '4 months') AT TIME ZONE 'UTC') x;
SELECT count(*) FILTER (WHERE capledger_partition_month('telemetry_sample', 'ts', m))
FROM (SELECT DISTINCT date_trunc('month', ts AT TIME ZONE 'UTC')::date AS m FROM telemetry_sample_unpartitioned
      WHERE ts < (date_trunc('month', now() AT TIME ZONE 'UTC') + interval '4 months') AT TIME ZONE 'UTC') x;
INSERT INTO run_key (cluster, external_id) SELECT cluster, external_id FROM run_unpartitioned;
INSERT INTO run (id, cluster, external_id, team, "user", workload_class, submitted_at, started_at,
                 ended_at, gpus, state, exit_code, gpu_utilization, upload_id, partition, gpu_model)
SELECT id, cluster, external_id, team, "user", workload_class, submitted_at, started_at,
       ended_at, gpus, state, exit_code, gpu_utilization, upload_id, partition, gpu_model
FROM run_unpartitioned;
DROP TABLE run_unpartitioned;
INSERT INTO telemetry_sample SELECT upload_id, benchmark_id, ts, gpu, duty_cycle, memory_used_gb,
    memory_total_gb, power_w FROM telemetry_sample_unpartitioned;
DROP TABLE telemetry_sample_unpartitioned;
-- the current month and the next ones
SELECT capledger_partitions_maintain(3, 0);
