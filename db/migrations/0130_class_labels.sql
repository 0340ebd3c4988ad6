-- Workload classes are the team's own labels (issue 21). A run keeps the class label it carries
-- (JSON runs: the Alibaba trace's LS, BE, Burstable, Guaranteed) or its cluster map gives, as
-- given; run.workload_class and the rollups keyed on it (0061, 0062, 0111) were always text, so
-- they hold any label as they are. Cluster maps may give any label. Each label maps to a tier,
-- exploratory or production, in a table owners keep: the review checklist and the drift check
-- count runs by tier; a label not in the table counts as exploratory and is listed as unmapped.
-- A label: 1-63 bytes, no control characters, not 'unclassified' (core/validate.h).
CREATE FUNCTION capledger_class_label_ok(label text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT octet_length(label) BETWEEN 1 AND 63 AND label !~ '[[:cntrl:]]' AND label <> 'unclassified'
$$;

ALTER TABLE cluster DROP CONSTRAINT cluster_default_class_check,
    ADD CONSTRAINT cluster_default_class_label CHECK (capledger_class_label_ok(default_class));
ALTER TABLE cluster_partition DROP CONSTRAINT cluster_partition_workload_class_check,
    ADD CONSTRAINT cluster_partition_workload_class_label CHECK (capledger_class_label_ok(workload_class));

CREATE TABLE workload_class_tier (
    label           text PRIMARY KEY CHECK (capledger_class_label_ok(label)),
    tier            text NOT NULL CHECK (tier IN ('exploratory', 'production')),
    version         integer NOT NULL DEFAULT 1,
    updated_by_name text NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- The two built-in labels are their own tiers (PUT refuses to change them).
INSERT INTO workload_class_tier (label, tier, updated_by_name)
VALUES ('exploratory', 'exploratory', 'capledger'), ('production', 'production', 'capledger');

-- The tier a run's label counts under: its mapping, else exploratory; NULL (unclassified) for
-- a run without a label.
CREATE FUNCTION capledger_class_tier(label text) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN label IS NULL THEN NULL
                ELSE coalesce((SELECT t.tier FROM workload_class_tier t WHERE t.label = $1), 'exploratory') END
$$;
