-- A review's decisions are found from the log's own leaves, not from the decision table (which
-- a database superuser can edit or delete from without breaking any signature): the append's
-- one-current-decision check and GET /decisions?review= read a review's decision leaves by
-- this index, authenticate each against the signed checkpoint, and treat a decision leaf
-- without its row (or a row without its leaf) as a log-integrity fault.
-- A decision leaf is the JCS of {public_key, received_at, record, signature}: it begins with
-- {"public_key": (a key event leaf begins with {"at":), and its review is record.review_id.
CREATE FUNCTION log_leaf_review_id(leaf bytea) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN substring(leaf FROM 1 FOR 14) = '\x7b227075626c69635f6b6579223a'::bytea
        THEN convert_from(leaf, 'UTF8')::jsonb -> 'record' ->> 'review_id' END
$$;
CREATE INDEX log_leaf_review ON log_leaf (log_leaf_review_id(leaf))
    WHERE substring(leaf FROM 1 FOR 14) = '\x7b227075626c69635f6b6579223a'::bytea;
