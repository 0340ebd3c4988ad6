-- Runs belong to workloads (issue 21, item 2). A run keeps what job accounting says about which
-- work it was — sacct WCKey, Comment and JobName; a JSON run's wckey, comment, job_name and
-- workload — and a workload names how its runs are recognised (runs_match: {wckey, comment,
-- job_name (a glob: * any text, ? one character), workload}, any of them; a run of the
-- workload's team matches when any given one does). Membership is decided when asked, so a
-- rule set today also claims the runs uploaded before it. Adding nullable columns without a
-- default rewrites no partition.
ALTER TABLE run ADD COLUMN wckey text, ADD COLUMN comment text, ADD COLUMN job_name text,
    ADD COLUMN workload text;
ALTER TABLE workload ADD COLUMN runs_match jsonb
    CHECK (runs_match IS NULL OR jsonb_typeof(runs_match) = 'object');

-- A glob (* and ?) as a LIKE pattern, the LIKE metacharacters in it taken literally.
CREATE FUNCTION capledger_glob_like(g text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT translate(replace(replace(replace(g, '\', '\\'), '%', '\%'), '_', '\_'), '*?', '%_')
$$;

-- Whether a run (its wckey, comment, job name and workload field) is one the rule m names.
CREATE FUNCTION capledger_run_of(m jsonb, wckey text, comment text, job_name text, workload text)
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT m IS NOT NULL AND (coalesce(m->>'wckey' = wckey, false)
        OR coalesce(m->>'comment' = comment, false)
        OR coalesce(job_name LIKE capledger_glob_like(m->>'job_name'), false)
        OR coalesce(m->>'workload' = workload, false))
$$;
