-- A comparison is content-addressed (sha256 of its result's RFC 8785 bytes): two scenarios with
-- the same resolved document give the same comparison. Which scenarios (and so which teams and
-- workloads) asked for it is a separate fact, one row per scenario, so a second team storing an
-- identical comparison neither sees the first team's metadata nor loses its own.
CREATE TABLE comparison_link (
    sha256       text NOT NULL REFERENCES comparison (sha256),
    scenario_id  uuid NOT NULL REFERENCES scenario (id),
    team         text NOT NULL,
    workload_ids uuid[] NOT NULL DEFAULT '{}',
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (sha256, scenario_id)
);
CREATE INDEX comparison_link_scenario ON comparison_link (scenario_id, created_at);
CREATE INDEX comparison_link_team ON comparison_link (team);
CREATE TRIGGER comparison_link_append_only BEFORE UPDATE OR DELETE ON comparison_link
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

INSERT INTO comparison_link (sha256, scenario_id, team, workload_ids, created_by, created_at)
SELECT sha256, scenario_id, team, workload_ids, created_by, created_at
FROM comparison WHERE scenario_id IS NOT NULL;
