-- Fewer B-trees for an upload to maintain on run (every stored run wrote five before this).
-- Each query of server/store/*.c that reads run was checked against what is left:
-- * run_id (id) duplicates the primary key (id, submitted_at), whose leading column serves the
--   GET by id and the runs list's ORDER BY id / keyset pages just as well: dropped.
-- * run_submitted (submitted_at): the usage report reads run only for the partial days at the
--   edges of from/to (and the partial months of its histogram), the runs list's from/to and the
--   drift check's "since" are time ranges too. Month partitions already prune, and within a
--   month runs arrive roughly in submission order, so a BRIN index (a few pages per partition,
--   next to nothing to maintain) finds those ranges.
-- * run_upload (upload_id): the runs list's ?upload_id=. An upload's runs are written together,
--   so they sit in few block ranges of each month: BRIN too.
-- * run_team_submitted (team, submitted_at) stays: the drift check, the review checklist and the
--   per-team report edges filter on a team.
DROP INDEX run_id;
DROP INDEX run_submitted;
DROP INDEX run_upload;
CREATE INDEX run_submitted_brin ON run USING brin (submitted_at);
CREATE INDEX run_upload_brin ON run USING brin (upload_id);
