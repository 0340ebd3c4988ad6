-- Runs uploads stream straight into run (store/runs.c), without a staging table and without
-- the statement that moved staged rows into run_key, run and the rollups.
--
-- Duplicates stay exact, with run_key (PRIMARY KEY (cluster, external_id), 0060) as the one
-- record of which keys are stored:
-- * An upload first takes, for each cluster it writes, a transaction-level advisory lock on
--   that cluster (capledger_run_cluster_lock below), held until it commits or rolls back. So
--   while it runs, no other transaction adds keys of that cluster: two uploads to one cluster
--   run one after the other from the moment the second meets the cluster (it waits at most
--   the given time, then gives up: 55P03, answered 503). Uploads to other clusters are not
--   held up. (Two uploads writing the same two clusters in opposite orders can deadlock on
--   the locks; PostgreSQL then ends one of them, which rolls back whole.)
-- * The server parses the runs a batch at a time (16,384 lines). Of a batch's lines with the
--   same key only the first is offered. While no key of the upload was found stored, a batch's
--   keys go into run_key by COPY inside a savepoint (no probe at all; at most 64 batches, the
--   subtransactions a backend caches); the first unique violation rolls that back, and that
--   batch and the rest of the upload probe instead: the keys run_key does not hold (an index
--   probe each) go in with a plain INSERT — no ON CONFLICT, whose speculative insertion cost
--   twice as much per key. Only the runs whose key went in are copied into run (COPY … FORMAT
--   binary). A key met in an earlier batch of the same upload is in run_key by then (the same
--   transaction), so the first line of the file wins, as before; a re-upload finds every key
--   and stores nothing. Should a writer that does not take the lock add a key meanwhile, the
--   primary key fails the upload (rolled back whole) rather than store a run twice.
-- * The usage rollups (0061) and the queue-wait histograms (0062) are summed by the server from
--   the runs it stored and upserted as a few aggregated rows at the end of the upload (or when
--   more than 8,192 groups are pending), with the same arithmetic as
--   capledger_usage_rollup_rebuild (core/formats/runrollup.h).
-- * Every other writer of run_key (the partition maintenance's retention) only deletes keys.
--
-- No index changed: run keeps 0063's primary key (id, submitted_at), run_team_submitted and
-- the two BRIN indexes; run_key keeps its primary key.
CREATE FUNCTION capledger_run_cluster_lock(cluster text, max_wait interval) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    before text := current_setting('lock_timeout');
BEGIN
    PERFORM set_config('lock_timeout', (extract(epoch FROM max_wait) * 1000)::bigint::text, true);
    -- the two-key form keeps these locks apart from the single-key ones (maintenance's)
    PERFORM pg_advisory_xact_lock(1919250003, hashtext(cluster));
    PERFORM set_config('lock_timeout', before, true);
    RETURN true;
END $$;
