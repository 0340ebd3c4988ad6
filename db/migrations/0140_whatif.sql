-- What-if replays (docs/whatif.md) and the capacity clusters record.
--
-- A replay is content-addressed like a comparison: sha256 of the RFC 8785 bytes of its result,
-- whose input_sha256 is the hash of the resolved document (every job inline) kept verbatim in
-- resolved_jcs, so it can be replayed offline (capledger whatif) to the same figures. Which
-- team asked for it is a separate fact (whatif_link), as for comparisons. Both append-only.
CREATE TABLE whatif (
    sha256         text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    input_sha256   text NOT NULL CHECK (input_sha256 ~ '^[0-9a-f]{64}$'),
    engine_version text NOT NULL,
    jobs           bigint NOT NULL,
    selection      jsonb,            -- where the jobs came from (null: inline)
    resolved_jcs   text NOT NULL,    -- the bytes input_sha256 hashes
    result         jsonb NOT NULL,
    result_jcs     text NOT NULL,    -- the bytes sha256 hashes
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER whatif_append_only BEFORE UPDATE OR DELETE ON whatif
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

CREATE TABLE whatif_link (
    sha256     text NOT NULL REFERENCES whatif (sha256),
    team       text NOT NULL REFERENCES team (name) ON UPDATE CASCADE,
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (sha256, team)
);
CREATE INDEX whatif_link_team ON whatif_link (team, created_at);
CREATE TRIGGER whatif_link_append_only BEFORE UPDATE OR DELETE ON whatif_link
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- GPUs a partition holds (for a GPU model, when the map names one): a backtest's baseline.
ALTER TABLE cluster_partition ADD COLUMN capacity_gpus double precision
    CHECK (capacity_gpus >= 0 AND capacity_gpus <= 1000000);
