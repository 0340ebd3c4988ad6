-- Key events are read from the leaves themselves, not from the log_key_event index (a table a
-- database superuser can edit without breaking any signature): the append-time key check,
-- the enrolment a decision is bound to, and whether an event is logged yet all find a key's
-- events by scanning log_leaf for key event leaves of that key. A key event leaf is the JCS of
-- {at, key_id, kind, ...}, so it begins with {"at": (a decision leaf begins with
-- {"public_key":), and its first "key_id":" is its key id; this index makes that scan a
-- look-up. log_key_event stays as it was (what an older reader joins through).
CREATE INDEX log_leaf_key_event ON log_leaf
    ((substring(leaf FROM position('\x226b65795f6964223a22'::bytea IN leaf) + 10 FOR 64)))
    WHERE substring(leaf FROM 1 FOR 6) = '\x7b226174223a'::bytea;
