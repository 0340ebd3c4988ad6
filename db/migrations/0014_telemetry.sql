-- GPU telemetry samples attached to a benchmark (nvidia-smi, dmon, DCGM), streamed in with
-- COPY. No foreign keys: the benchmark is checked before the upload and the upload row is
-- written in the same transaction, and a per-row FK trigger would cost a bulk upload dearly.
CREATE TABLE telemetry_sample (
    upload_id       uuid NOT NULL,
    benchmark_id    uuid NOT NULL,
    ts              timestamptz,
    gpu             text NOT NULL,
    duty_cycle      double precision, -- 0..1, range-checked by core/telemetry.c
    memory_used_gb  double precision,
    memory_total_gb double precision,
    power_w         double precision
);
CREATE INDEX telemetry_sample_benchmark ON telemetry_sample (benchmark_id, ts);
CREATE INDEX telemetry_sample_upload ON telemetry_sample (upload_id);
CREATE INDEX upload_benchmark ON upload (benchmark_id, created_at) WHERE benchmark_id IS NOT NULL;
