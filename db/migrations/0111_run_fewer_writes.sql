-- Two costs an upload of runs paid per stored run, measured with bench/upload_sacct.sh (200,000
-- runs; backend time of a COPY into a table shaped like run):
-- * run_team_submitted (team, submitted_at), a B-tree insert per run: ~0.24 s of the ~0.95 s.
-- * nextval('run_id_seq') per run (the column default): ~0.06 s.
--
-- run_team_submitted served, all-time, only the review checklist's "does this team (cluster)
-- have GPU runs, and in which uploads" (store/reviews.c). Those now read the rollups: the counts
-- from run_usage_month (gpu_runs: runs with gpus > 0; qw_n: runs that started on GPUs, exactly
-- the checklist's "started GPU runs"), the uploads from run_usage_upload below. Every other
-- query that filters run on a team also bounds submitted_at (the drift check's "since", the
-- usage report's partial days at the edges and its exact percentiles of a from/to, the runs
-- list's from/to) and finds that range with run_submitted_brin and the month partitions; the
-- runs list without a range walks the primary key in id order, as it did. README, "Time
-- partitions", gives the figures.
--
-- run ids: the sequence now steps by 16,384, so one nextval reserves a block of ids
-- [v, v + 16,383] for the caller alone. An upload reserves one block per batch of at most
-- 16,384 stored runs (capledger_run_ids) and sends the ids in its binary COPY; a writer that
-- uses the column default gets a block's first id. Ids stay unique (the primary key still says
-- so) and grow in the order blocks were reserved; they are no longer consecutive.
ALTER SEQUENCE run_id_seq INCREMENT BY 16384;

-- The first id of a block of n (1 ≤ n ≤ the sequence's step) that only the caller will use.
CREATE FUNCTION capledger_run_ids(n integer) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    step bigint := (SELECT s.increment_by FROM pg_sequences s
                    WHERE s.schemaname = current_schema() AND s.sequencename = 'run_id_seq');
BEGIN
    IF n IS NULL OR n < 1 OR n > step THEN
        RAISE EXCEPTION 'capledger_run_ids: % ids asked for, a block holds 1 to %', n, step;
    END IF;
    RETURN nextval('run_id_seq');
END $$;

DROP INDEX run_team_submitted;

-- Per upload × UTC month of submitted_at × team × class × cluster: how many of the runs the
-- upload stored there ran on GPUs (gpu_runs) and started on GPUs (qw_n). Written with the
-- other rollups by the statement that ends an upload (store/runs.c), dropped with the months
-- retention drops, rebuilt by capledger_usage_rollup_rebuild().
CREATE TABLE run_usage_upload (
    upload_id      uuid NOT NULL,
    month          timestamptz NOT NULL,
    team           text,
    workload_class text,
    cluster        text NOT NULL,
    gpu_runs       bigint NOT NULL,
    qw_n           bigint NOT NULL,
    UNIQUE NULLS NOT DISTINCT (upload_id, month, team, workload_class, cluster)
);
CREATE INDEX run_usage_upload_team ON run_usage_upload (team, workload_class, upload_id);
CREATE INDEX run_usage_upload_cluster ON run_usage_upload (cluster, upload_id);
CREATE INDEX run_usage_month_team ON run_usage_month (team, workload_class);
CREATE INDEX run_usage_month_cluster ON run_usage_month (cluster);

INSERT INTO run_usage_upload
SELECT upload_id, date_trunc('month', submitted_at, 'UTC'), team, workload_class, cluster,
       count(*) FILTER (WHERE gpus > 0), count(*) FILTER (WHERE started_at IS NOT NULL AND gpus > 0)
FROM run GROUP BY 1, 2, 3, 4, 5;

-- The rebuild of 0062, then this table's.
ALTER FUNCTION capledger_usage_rollup_rebuild() RENAME TO capledger_usage_rollup_rebuild_0062;
CREATE FUNCTION capledger_usage_rollup_rebuild() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint := capledger_usage_rollup_rebuild_0062();
BEGIN
    LOCK TABLE run_usage_upload IN EXCLUSIVE MODE;
    DELETE FROM run_usage_upload;
    INSERT INTO run_usage_upload
    SELECT upload_id, date_trunc('month', submitted_at, 'UTC'), team, workload_class, cluster,
           count(*) FILTER (WHERE gpus > 0),
           count(*) FILTER (WHERE started_at IS NOT NULL AND gpus > 0)
    FROM run GROUP BY 1, 2, 3, 4, 5;
    RETURN n;
END $$;

-- The maintenance of 0062; when it ran (no other instance held it) with a retention, the
-- rollups' rows of the months it dropped go once more, and this table's with them (the same
-- cutoff). Once more: 0062 deletes the rollups' rows before it drops the partitions, and an
-- upload into such a month that committed in between (the DROP waits for it) left rows counting
-- runs the DROP then removed — the review checklist reads these counts now.
ALTER FUNCTION capledger_partitions_maintain(integer, integer) RENAME TO capledger_partitions_maintain_0062;
CREATE FUNCTION capledger_partitions_maintain(ahead integer, retention_months integer) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    r jsonb := capledger_partitions_maintain_0062(ahead, retention_months);
    cutoff timestamptz := (date_trunc('month', now() AT TIME ZONE 'UTC')::date
                           - make_interval(months => greatest(retention_months, 0)))::timestamp
                          AT TIME ZONE 'UTC';
BEGIN
    IF retention_months > 0 AND NOT r ? 'skipped' THEN
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
        DELETE FROM run_usage_upload WHERE month < cutoff;
    END IF;
    RETURN r;
END $$;
