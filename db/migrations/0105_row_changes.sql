-- Row changes for the instances' row caches (server/core/rowcache.h, server/store/changes.h).
--
-- Every instance keeps recently read rows of the cached tables in memory and LISTENs on
-- capledger_rows; this trigger names each row updated or deleted there ("table:id"), so every
-- instance forgets it. PostgreSQL sends a transaction's notifications when it commits, in commit
-- order, and sends a payload repeated within one transaction once. An INSERT needs no
-- notification: a row that did not exist was never cached (absences are not cached).
CREATE FUNCTION capledger_row_changed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('capledger_rows', TG_TABLE_NAME || ':' || OLD.id::text);
    RETURN NULL;
END $$;

CREATE TRIGGER workload_changed AFTER UPDATE OR DELETE ON workload
    FOR EACH ROW EXECUTE FUNCTION capledger_row_changed();

-- A TRUNCATE names the table alone: every instance forgets all its cached rows.
CREATE FUNCTION capledger_table_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('capledger_rows', TG_TABLE_NAME);
    RETURN NULL;
END $$;

CREATE TRIGGER workload_truncated AFTER TRUNCATE ON workload
    FOR EACH STATEMENT EXECUTE FUNCTION capledger_table_truncated();
