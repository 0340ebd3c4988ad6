-- The signed decision log (spec/LEDGER.md): an RFC 9162 Merkle tree of JCS leaves, with a
-- signed C2SP checkpoint for every size it has had.
--
-- Appends from any number of server instances are serialised by locking the one log_head row
-- (SELECT ... FOR UPDATE): index = size, insert the leaf, update the head, sign and store the
-- checkpoint, commit. The head also keeps the log's compact range ("frontier": the roots of
-- the perfect subtrees that make up the tree, largest first, 32 bytes each), so an append
-- hashes O(log n) nodes instead of reading every leaf.
CREATE TABLE log_head (
    singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    origin       text NOT NULL CHECK (length(origin) BETWEEN 1 AND 255),
    verifier_key text NOT NULL,
    size         bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
    root         bytea NOT NULL CHECK (length(root) = 32),
    frontier     bytea NOT NULL DEFAULT '\x'::bytea CHECK (length(frontier) % 32 = 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- The origin and the key a log was started with never change (the server refuses to start
-- with others), and its size only grows, one leaf at a time.
CREATE FUNCTION log_head_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'the log head is never deleted' USING ERRCODE = '42501';
    END IF;
    IF NEW.origin <> OLD.origin OR NEW.verifier_key <> OLD.verifier_key
       OR NEW.size NOT IN (OLD.size, OLD.size + 1) THEN
        RAISE EXCEPTION 'the log head only grows by one leaf at a time' USING ERRCODE = '42501';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER log_head_guard BEFORE UPDATE OR DELETE ON log_head
    FOR EACH ROW EXECUTE FUNCTION log_head_guard();

CREATE TABLE log_leaf (
    leaf_index bigint PRIMARY KEY CHECK (leaf_index >= 0),
    leaf       bytea NOT NULL,            -- JCS({record, signature, public_key, received_at})
    leaf_hash  bytea NOT NULL CHECK (length(leaf_hash) = 32), -- SHA-256(0x00 || leaf)
    created_at timestamptz NOT NULL DEFAULT now()
);

-- No gaps: a leaf may only follow the leaf before it (with the primary key and no deletes,
-- the indexes are exactly 0..size-1).
CREATE FUNCTION log_leaf_no_gap() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.leaf_index > 0 AND NOT EXISTS (
        SELECT 1 FROM log_leaf WHERE leaf_index = NEW.leaf_index - 1) THEN
        RAISE EXCEPTION 'log leaf % would leave a gap', NEW.leaf_index USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER log_leaf_no_gap BEFORE INSERT ON log_leaf
    FOR EACH ROW EXECUTE FUNCTION log_leaf_no_gap();
CREATE TRIGGER log_leaf_append_only BEFORE UPDATE OR DELETE ON log_leaf
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER log_leaf_no_truncate BEFORE TRUNCATE ON log_leaf
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- Every checkpoint the server signed, one per tree size: the primary key is what makes
-- "never two different roots signed for one size" hold whatever the server code does.
CREATE TABLE log_checkpoint (
    tree_size  bigint PRIMARY KEY CHECK (tree_size >= 0),
    root       bytea NOT NULL CHECK (length(root) = 32),
    note       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER log_checkpoint_append_only BEFORE UPDATE OR DELETE ON log_checkpoint
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER log_checkpoint_no_truncate BEFORE TRUNCATE ON log_checkpoint
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- Decisions, indexed for the API; the leaf is the authoritative copy.
CREATE TABLE decision (
    id                uuid PRIMARY KEY,
    review_id         uuid NOT NULL REFERENCES review (id),
    decision          text NOT NULL CHECK (decision IN ('advance', 'revise', 'stop')),
    chosen_option     text,
    comparison_sha256 text[] NOT NULL DEFAULT '{}',
    record            jsonb NOT NULL,
    signature         text NOT NULL,
    signer_key_id     text NOT NULL REFERENCES signing_key (key_id),
    signer            text NOT NULL,
    supersedes        uuid REFERENCES decision (id),
    leaf_index        bigint NOT NULL UNIQUE REFERENCES log_leaf (leaf_index),
    received_at       timestamptz NOT NULL
);
CREATE INDEX decision_review ON decision (review_id, leaf_index);
CREATE TRIGGER decision_append_only BEFORE UPDATE OR DELETE ON decision
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER decision_no_truncate BEFORE TRUNCATE ON decision
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
