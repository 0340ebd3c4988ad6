-- A decision is superseded at most once: the history of a review's decisions is a line, never
-- a fork (two successors of one decision would each claim to be the current one).
CREATE UNIQUE INDEX decision_supersedes_once ON decision (supersedes) WHERE supersedes IS NOT NULL;
