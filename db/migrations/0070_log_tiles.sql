-- The decision log's Merkle tree as C2SP tlog-tiles (https://c2sp.org/tlog-tiles), so that
-- inclusion and consistency proofs read O(log n) stored hashes instead of every leaf hash
-- (core/ledger/tile.h has the arithmetic, docs/ledger-format.md the layout).
--
-- One row per tile (level, tile_index): the level-`level` stored hashes tile_index*256 ..
-- tile_index*256 + width - 1 concatenated (32 bytes each; width 1..256). A row grows while its
-- tile is partial — each append adds the hashes it completes, in the same transaction as the
-- leaf, under the log_head lock — and a partial tile of any smaller width is a prefix of it.
-- The rows are derived data: the server rebuilds them from log_leaf at start when they do not
-- cover the head (an existing log is backfilled by the first start after this migration).
CREATE TABLE log_tile (
    level      smallint NOT NULL CHECK (level BETWEEN 0 AND 7),
    tile_index bigint NOT NULL CHECK (tile_index >= 0),
    hashes     bytea NOT NULL CHECK (length(hashes) BETWEEN 32 AND 8192 AND length(hashes) % 32 = 0),
    PRIMARY KEY (level, tile_index)
);
-- Hashes are incompressible: keep them out of line without trying.
ALTER TABLE log_tile ALTER COLUMN hashes SET STORAGE EXTERNAL;

-- A tile only grows: an update keeps every hash it had.
CREATE FUNCTION log_tile_grows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.level <> OLD.level OR NEW.tile_index <> OLD.tile_index
       OR length(NEW.hashes) < length(OLD.hashes)
       OR substr(NEW.hashes, 1, length(OLD.hashes)) <> OLD.hashes THEN
        RAISE EXCEPTION 'a log tile only grows' USING ERRCODE = '42501';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER log_tile_grows BEFORE UPDATE ON log_tile
    FOR EACH ROW EXECUTE FUNCTION log_tile_grows();
