-- Alerts of a second kind: the decision log found inconsistent (a head that disagrees with the
-- stored checkpoints or leaves, a decision row that differs from its leaf). They name no review
-- or metric; one alert per addressee and message.
ALTER TABLE alert DROP CONSTRAINT alert_kind_check;
ALTER TABLE alert ADD CONSTRAINT alert_kind_check CHECK (kind IN ('drift', 'log_integrity'));
ALTER TABLE alert ALTER COLUMN review_id DROP NOT NULL,
                  ALTER COLUMN decision_id DROP NOT NULL,
                  ALTER COLUMN metric DROP NOT NULL,
                  ALTER COLUMN assumed DROP NOT NULL,
                  ALTER COLUMN observed DROP NOT NULL,
                  ALTER COLUMN relative_change DROP NOT NULL,
                  ALTER COLUMN threshold DROP NOT NULL,
                  ALTER COLUMN sample_size DROP NOT NULL;
ALTER TABLE alert ADD CONSTRAINT alert_drift_complete CHECK (kind <> 'drift' OR (
    review_id IS NOT NULL AND decision_id IS NOT NULL AND metric IS NOT NULL
    AND assumed IS NOT NULL AND observed IS NOT NULL AND relative_change IS NOT NULL
    AND threshold IS NOT NULL AND sample_size IS NOT NULL));
CREATE UNIQUE INDEX alert_log_integrity_once ON alert (owner, md5(message))
    WHERE kind = 'log_integrity';
