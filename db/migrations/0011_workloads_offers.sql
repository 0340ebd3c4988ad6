-- Workload profiles (mutable, versioned for ETag/If-Match) and capacity offers (a shared
-- catalogue, append-only: a new price is a new offer, so stored comparisons that cite an offer
-- id stay reproducible). Field names are those of spec/COST_MODEL.md's scenario `workload` and
-- `offer`, so a scenario can reference a stored record by id. The HTTP layer validates every
-- field and names each fault; the CHECKs here are the last line, not the error messages.
CREATE TABLE workload (
    id                           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    team                         text NOT NULL REFERENCES team (name) ON UPDATE CASCADE,
    name                         text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    kind                         text NOT NULL CHECK (kind IN ('training', 'fine_tuning', 'evaluation', 'inference')),
    class                        text NOT NULL CHECK (class IN ('exploratory', 'production')),
    description                  text CHECK (length(description) <= 4000),
    model_parameters             double precision CHECK (model_parameters > 0),
    precision                    text,
    memory_required_gb           double precision CHECK (memory_required_gb > 0),
    sequence_length              integer CHECK (sequence_length > 0),
    image_width_px               integer CHECK (image_width_px > 0),
    image_height_px              integer CHECK (image_height_px > 0),
    global_batch_size            integer CHECK (global_batch_size > 0),
    batch_behaviour              text,
    dataset_gb                   double precision CHECK (dataset_gb >= 0),
    dataset_location             text,
    storage                      text,
    network                      text,
    expected_run_duration_s      double precision CHECK (expected_run_duration_s > 0),
    checkpoint_gb                double precision CHECK (checkpoint_gb >= 0),
    checkpoint_interval_s        double precision CHECK (checkpoint_interval_s > 0),
    checkpoints_kept             integer CHECK (checkpoints_kept >= 1),
    distributed_pattern          text,
    communication_gb_per_step    double precision CHECK (communication_gb_per_step >= 0),
    target_units                 double precision CHECK (target_units > 0),
    unit                         text,
    target_quality               jsonb,
    input_tokens_per_request     double precision CHECK (input_tokens_per_request > 0),
    output_tokens_per_request    double precision CHECK (output_tokens_per_request > 0),
    version                      integer NOT NULL DEFAULT 1,
    created_by                   text NOT NULL,
    created_at                   timestamptz NOT NULL DEFAULT now(),
    updated_at                   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team, name)
);
CREATE INDEX workload_created ON workload (created_at, id);

CREATE TABLE offer (
    id                        uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                      text,
    provider                  text NOT NULL,
    region                    text NOT NULL,
    instance_type             text NOT NULL,
    gpu_model                 text NOT NULL,
    gpus_per_instance         integer NOT NULL CHECK (gpus_per_instance >= 1),
    gpu_memory_gb             double precision NOT NULL CHECK (gpu_memory_gb > 0),
    purchase_option           text NOT NULL CHECK (purchase_option IN ('on_demand', 'spot', 'reserved', 'committed')),
    price_per_hour            double precision NOT NULL CHECK (price_per_hour >= 0),
    currency                  text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    term                      text,
    reserved_utilization      double precision CHECK (reserved_utilization > 0 AND reserved_utilization <= 1),
    interruption_rate_per_hour double precision CHECK (interruption_rate_per_hour >= 0),
    provisioning_delay_s      double precision CHECK (provisioning_delay_s >= 0),
    quota_gpus                integer CHECK (quota_gpus >= 0),
    available                 boolean,
    storage_price_gb_month    double precision CHECK (storage_price_gb_month >= 0),
    egress_price_gb           double precision CHECK (egress_price_gb >= 0),
    orchestration_overhead    double precision CHECK (orchestration_overhead >= 0),
    upload_id                 uuid REFERENCES upload (id) DEFERRABLE INITIALLY DEFERRED,
    created_by                text NOT NULL,
    created_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX offer_created ON offer (created_at, id);
CREATE TRIGGER offer_append_only BEFORE UPDATE OR DELETE ON offer
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
