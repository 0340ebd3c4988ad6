-- Plausibility on every upload: the warnings its reply gave ({code, message[, refuses,
-- overridden]}: telemetry of another GPU than the benchmark's offer, MIG, impossible values,
-- GenAI-Perf output lengths far from the requested one, MLPerf warnings and INVALID results,
-- runs left unclassified), kept with the upload record for whoever cites it later.
ALTER TABLE upload ADD COLUMN warnings jsonb NOT NULL DEFAULT '[]'::jsonb;
