-- Benchmarks: measured runs of a workload on an offer's instance type. Immutable (a correction
-- is a new benchmark naming the old one in `supersedes`; each benchmark is superseded at most
-- once, so the chain of corrections is a line). Figures computed later from attached telemetry
-- (duty cycle, memory peak) go to benchmark_derived, never into the benchmark row.
CREATE TABLE benchmark (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workload_id            uuid NOT NULL REFERENCES workload (id),
    offer_id               uuid NOT NULL REFERENCES offer (id),
    team                   text NOT NULL REFERENCES team (name),
    measured_at            timestamptz NOT NULL,
    repetitions            integer NOT NULL DEFAULT 1 CHECK (repetitions >= 1),
    outcome                text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
    failure_reason         text,
    ran_by                 text NOT NULL,
    supersedes             uuid UNIQUE REFERENCES benchmark (id),
    notes                  text,
    instances              integer CHECK (instances >= 1),
    throughput_units_per_s double precision CHECK (throughput_units_per_s > 0),
    throughput_stddev      double precision CHECK (throughput_stddev >= 0),
    gpu_duty_cycle         double precision CHECK (gpu_duty_cycle BETWEEN 0 AND 1),
    input_stall_fraction   double precision CHECK (input_stall_fraction BETWEEN 0 AND 1),
    data_loading_s         double precision CHECK (data_loading_s >= 0),
    cpu_bound_fraction     double precision CHECK (cpu_bound_fraction BETWEEN 0 AND 1),
    communication_fraction double precision CHECK (communication_fraction BETWEEN 0 AND 1),
    setup_s                double precision CHECK (setup_s >= 0),
    checkpoint_write_s     double precision CHECK (checkpoint_write_s >= 0),
    restart_s              double precision CHECK (restart_s >= 0),
    checkpoint_interval_s  double precision CHECK (checkpoint_interval_s > 0),
    queue_wait_s           double precision CHECK (queue_wait_s >= 0),
    preemptions            integer CHECK (preemptions >= 0),
    transfer_gb            double precision CHECK (transfer_gb >= 0),
    memory_peak_gb         double precision CHECK (memory_peak_gb > 0),
    failure_probability    double precision CHECK (failure_probability >= 0 AND failure_probability < 1),
    load_points            jsonb,
    capacity_usable        boolean NOT NULL DEFAULT true,
    flags                  jsonb NOT NULL DEFAULT '[]'::jsonb,
    source                 jsonb,
    upload_id              uuid REFERENCES upload (id) DEFERRABLE INITIALLY DEFERRED,
    created_by             text NOT NULL,
    created_at             timestamptz NOT NULL DEFAULT now(),
    CHECK ((outcome = 'failed') = (failure_reason IS NOT NULL))
);
CREATE INDEX benchmark_created ON benchmark (created_at, id);
CREATE INDEX benchmark_workload ON benchmark (workload_id);
CREATE INDEX benchmark_offer ON benchmark (offer_id);
CREATE TRIGGER benchmark_append_only BEFORE UPDATE OR DELETE ON benchmark
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

CREATE TABLE benchmark_derived (
    benchmark_id        uuid PRIMARY KEY REFERENCES benchmark (id),
    gpu_duty_cycle      double precision CHECK (gpu_duty_cycle BETWEEN 0 AND 1),
    memory_peak_gb      double precision CHECK (memory_peak_gb >= 0),
    telemetry_upload_id uuid NOT NULL REFERENCES upload (id) DEFERRABLE INITIALLY DEFERRED,
    updated_at          timestamptz NOT NULL DEFAULT now()
);
