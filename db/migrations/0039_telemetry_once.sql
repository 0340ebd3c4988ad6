-- Evidence counted once: a telemetry sample is identified by (benchmark, GPU, timestamp), so
-- re-sending the same file (or overlapping exports of one run) adds nothing and the derived
-- figures do not move. Samples uploaded twice before this migration are kept once (the first
-- upload's). Samples without a timestamp (dmon without -o DT) cannot be told apart this way:
-- the upload route refuses them again when the same bytes were already uploaded.
DELETE FROM telemetry_sample t USING (
    SELECT ctid, row_number() OVER (PARTITION BY benchmark_id, gpu, ts
                                    ORDER BY (SELECT u.created_at FROM upload u WHERE u.id = s.upload_id), ctid) AS n
    FROM telemetry_sample s WHERE ts IS NOT NULL) d
WHERE t.ctid = d.ctid AND d.n > 1;
CREATE UNIQUE INDEX telemetry_sample_once ON telemetry_sample (benchmark_id, gpu, ts);

-- The uploads a benchmark's derived figures came from (those that added samples), in order.
ALTER TABLE benchmark_derived ADD COLUMN telemetry_upload_ids uuid[] NOT NULL DEFAULT '{}';
UPDATE benchmark_derived d SET telemetry_upload_ids = coalesce((
    SELECT array_agg(u.id ORDER BY u.created_at, u.id) FROM upload u
    WHERE u.kind = 'telemetry' AND u.benchmark_id = d.benchmark_id
      AND EXISTS (SELECT 1 FROM telemetry_sample s WHERE s.upload_id = u.id)), '{}');
