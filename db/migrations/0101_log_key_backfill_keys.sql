-- The start-up backfill (store_log_init → log_unlogged_keys) enrols in the log only the keys
-- this list names: the keys registered before key events were logged (migration 0042's
-- keys_before) that, when this migration ran, still had no enrolment leaf. It used to enrol
-- every key row whose created_at was before keys_before — a column a database superuser can
-- backdate, so a key row inserted by hand with created_at '2000-01-01' was enrolled (and could
-- sign) after the next restart. A key row without an enrolment leaf now signs nothing, and the
-- start reports it. The list is fixed: rows are never added, changed or removed.
CREATE TABLE log_key_backfill_key (
    key_id text PRIMARY KEY
);
INSERT INTO log_key_backfill_key (key_id)
    SELECT k.key_id FROM signing_key k
    WHERE k.created_at <= (SELECT keys_before FROM log_key_backfill)
      AND NOT EXISTS (SELECT 1 FROM log_leaf l
          WHERE substring(l.leaf FROM 1 FOR 6) = '\x7b226174223a'::bytea
            AND substring(l.leaf FROM position('\x226b65795f6964223a22'::bytea IN l.leaf) + 10 FOR 64)
                = convert_to(k.key_id, 'UTF8')
            AND position('"kind":"key_enrol"' IN convert_from(l.leaf, 'UTF8')) > 0);
CREATE TRIGGER log_key_backfill_key_fixed BEFORE INSERT OR UPDATE OR DELETE ON log_key_backfill_key
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
