-- The queue-wait histogram of the usage report's approximate percentiles: per UTC month of
-- submitted_at × team × class × cluster × state (the report's dimensions) × bucket of the wait,
-- the number of GPU runs that started with a wait in that bucket. Written by the statement that
-- stores an upload's runs (store/runs.c), dropped with the months retention drops, rebuilt by
-- capledger_usage_rollup_rebuild(). The report (store/reports.c) reads it when its selection
-- holds more waits than CAPLEDGER_USAGE_EXACT_MAX (README, Time partitions); core/qwhist.h is
-- the bucket arithmetic and the percentile: bucket 0 < v: ceil(ln v / ln G), G = 1.01 / 0.99
-- (each bucket's representative value within 1 % of every wait in it), clamped to
-- [-1000, 100000]; v = 0: bucket -2000 (exact).
CREATE FUNCTION capledger_qw_bucket(v double precision) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN v > 0 THEN least(100000, greatest(-1000,
               ceil(ln(v) / ln((1.0::float8 + 0.01::float8) / (1.0::float8 - 0.01::float8)))))::integer
           ELSE -2000 END
$$;

CREATE TABLE run_qw_hist (
    month          timestamptz NOT NULL, -- UTC month start
    team           text,
    workload_class text,
    cluster        text NOT NULL,
    state          text NOT NULL,
    bucket         integer NOT NULL,
    n              bigint NOT NULL,
    UNIQUE NULLS NOT DISTINCT (month, team, workload_class, cluster, state, bucket)
);
-- The same over all months (a report without from and to reads this: as many rows as one
-- month's at most, where 24 months of 10 M runs made 3.2 M rows of run_qw_hist).
CREATE TABLE run_qw_hist_all (
    team           text,
    workload_class text,
    cluster        text NOT NULL,
    state          text NOT NULL,
    bucket         integer NOT NULL,
    n              bigint NOT NULL,
    UNIQUE NULLS NOT DISTINCT (team, workload_class, cluster, state, bucket)
);
INSERT INTO run_qw_hist
SELECT date_trunc('month', submitted_at, 'UTC'), team, workload_class, cluster, state,
       capledger_qw_bucket(extract(epoch FROM started_at - submitted_at)::float8), count(*)
FROM run WHERE started_at IS NOT NULL AND gpus > 0
GROUP BY 1, 2, 3, 4, 5, 6;
INSERT INTO run_qw_hist_all
SELECT team, workload_class, cluster, state, bucket, sum(n) FROM run_qw_hist GROUP BY 1, 2, 3, 4, 5;

-- The rebuild as in 0061, and the histogram too.
CREATE OR REPLACE FUNCTION capledger_usage_rollup_rebuild() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    LOCK TABLE run_usage_day, run_usage_month, run_qw_hist, run_qw_hist_all IN EXCLUSIVE MODE;
    DELETE FROM run_usage_day;
    DELETE FROM run_usage_month;
    DELETE FROM run_qw_hist;
    DELETE FROM run_qw_hist_all;
    INSERT INTO run_usage_day
    SELECT date_trunc('day', submitted_at, 'UTC'), team, workload_class, cluster, partition,
           gpu_model, state, count(*), count(*) FILTER (WHERE gpus > 0),
           count(*) FILTER (WHERE gh > 0), count(*) FILTER (WHERE started_at IS NULL),
           coalesce(sum(gh), 0), coalesce(sum(qw), 0), count(qw),
           coalesce(sum(gpu_utilization), 0), count(gpu_utilization)
    FROM (SELECT r.*, CASE WHEN started_at IS NOT NULL
                           THEN gpus * extract(epoch FROM ended_at - started_at) / 3600 ELSE 0 END AS gh,
                 CASE WHEN started_at IS NOT NULL AND gpus > 0
                      THEN extract(epoch FROM started_at - submitted_at) END AS qw
          FROM run r) x
    GROUP BY 1, 2, 3, 4, 5, 6, 7;
    GET DIAGNOSTICS n = ROW_COUNT;
    INSERT INTO run_usage_month
    SELECT date_trunc('month', day, 'UTC'), team, workload_class, cluster, partition, gpu_model,
           state, sum(runs), sum(gpu_runs), sum(gh_runs), sum(never_started), sum(gh),
           sum(qw_sum), sum(qw_n), sum(util_sum), sum(util_n)
    FROM run_usage_day GROUP BY 1, 2, 3, 4, 5, 6, 7;
    INSERT INTO run_qw_hist
    SELECT date_trunc('month', submitted_at, 'UTC'), team, workload_class, cluster, state,
           capledger_qw_bucket(extract(epoch FROM started_at - submitted_at)::float8), count(*)
    FROM run WHERE started_at IS NOT NULL AND gpus > 0
    GROUP BY 1, 2, 3, 4, 5, 6;
    INSERT INTO run_qw_hist_all
    SELECT h.team, h.workload_class, h.cluster, h.state, h.bucket, sum(h.n) FROM run_qw_hist h
    GROUP BY 1, 2, 3, 4, 5;
    RETURN n;
END $$;

-- Maintenance as in 0061, and retention also drops the histogram's rows of the months it drops
-- (and takes their counts off the all-months histogram).
CREATE OR REPLACE FUNCTION capledger_partitions_maintain(ahead integer, retention_months integer) RETURNS jsonb
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
        DELETE FROM run_usage_day WHERE day < cutoff;
        DELETE FROM run_usage_month WHERE month < cutoff;
        WITH d AS (DELETE FROM run_qw_hist h WHERE h.month < cutoff
                   RETURNING h.team, h.workload_class, h.cluster, h.state, h.bucket, h.n AS cnt),
             s AS (SELECT d.team, d.workload_class, d.cluster, d.state, d.bucket, sum(d.cnt) AS cnt
                   FROM d GROUP BY 1, 2, 3, 4, 5)
        UPDATE run_qw_hist_all a SET n = a.n - s.cnt FROM s
        WHERE a.team IS NOT DISTINCT FROM s.team AND a.workload_class IS NOT DISTINCT FROM s.workload_class
          AND a.cluster = s.cluster AND a.state = s.state AND a.bucket = s.bucket;
        DELETE FROM run_qw_hist_all a WHERE a.n <= 0;
    END IF;
    FOR t IN SELECT * FROM (VALUES ('run', 'submitted_at'), ('telemetry_sample', 'ts')) v(parent, key) LOOP
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
