-- Scenario names are unique per team (issue 23: saving a scenario under its pre-filled name
-- twice listed two identical entries in every picker). Names compare without case, as the
-- pickers search them. Of duplicates stored before, the oldest keeps its name; each other one
-- is renamed "name (copy N, stored YYYY-MM-DD HH:MM:SS)", N counting in the order they were
-- stored (the name cut to 150 characters first, so the result stays within the 200 allowed).
WITH ranked AS (
    SELECT id, name, created_at,
           row_number() OVER (PARTITION BY team, lower(name) ORDER BY created_at, id) AS n
    FROM scenario
)
UPDATE scenario s
SET name = left(r.name, 150) || ' (copy ' || (r.n - 1) || ', stored '
           || to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ')'
FROM ranked r WHERE s.id = r.id AND r.n > 1;

CREATE UNIQUE INDEX scenario_team_name ON scenario (team, lower(name));
