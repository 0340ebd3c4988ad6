-- Clusters as a resource: for each partition (and, where it matters, each GPU model) of a
-- cluster, the workload class of its runs and the offer that prices its GPU-hours. Owners keep
-- the map; sacct uploads class their runs by it (unless ?class= says otherwise) and the usage
-- and idle reports price GPU-hours from it. Runs keep the raw partition and GPU model.
CREATE TABLE cluster (
    name            text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 127),
    default_class   text CHECK (default_class IN ('exploratory', 'production')),
    description     text CHECK (length(description) <= 2000),
    version         integer NOT NULL DEFAULT 1,
    updated_by_name text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE cluster_partition (
    cluster        text NOT NULL REFERENCES cluster (name) ON DELETE CASCADE,
    partition      text NOT NULL CHECK (length(partition) BETWEEN 1 AND 127),
    gpu_model      text NOT NULL DEFAULT '' CHECK (length(gpu_model) <= 127), -- '': any model
    workload_class text CHECK (workload_class IN ('exploratory', 'production')),
    offer_id       uuid REFERENCES offer (id),
    PRIMARY KEY (cluster, partition, gpu_model)
);

ALTER TABLE run ADD COLUMN partition text, ADD COLUMN gpu_model text;
-- Until now a sacct upload stored its Partition (else QOS) as the workload class: keep it as
-- the raw partition, and keep it as the class only where it is one.
UPDATE run r SET partition = r.workload_class,
    workload_class = CASE WHEN r.workload_class IN ('exploratory', 'production')
                          THEN r.workload_class END
FROM upload u WHERE u.id = r.upload_id AND u.format = 'sacct';
