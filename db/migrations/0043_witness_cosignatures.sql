-- Witness cosignatures (C2SP tlog-cosignature) of the log's checkpoints, as the witnesses of
-- CAPLEDGER_WITNESSES answered them (http/cosign.c), and the size each witness last cosigned.
-- GET /log/checkpoint and the audit bundle serve the latest checkpoint with its cosignature
-- lines; verifiers check each line against the witness keys they hold.
CREATE TABLE log_cosignature (
    tree_size  bigint NOT NULL REFERENCES log_checkpoint (tree_size),
    witness    text NOT NULL,   -- the witness's verifier key text
    line       text NOT NULL,   -- "— <name> <base64>\n", verified before it was stored
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tree_size, witness)
);
CREATE TRIGGER log_cosignature_append_only BEFORE UPDATE OR DELETE ON log_cosignature
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

CREATE TABLE log_witness (
    witness    text PRIMARY KEY,
    size       bigint NOT NULL CHECK (size >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);
