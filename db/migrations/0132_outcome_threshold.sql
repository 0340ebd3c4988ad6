-- Realised against predicted (issue 21, item 5): a review's outcome_threshold is how far the
-- realised compute cost per completed run of its workloads may exceed what the decision's
-- comparison predicted for the chosen option before a drift alert (metric cost_per_outcome)
-- puts the review back to 'needs decision'. Default 0.2 = 20 %.
ALTER TABLE review ADD COLUMN outcome_threshold double precision NOT NULL DEFAULT 0.2
    CHECK (outcome_threshold > 0 AND outcome_threshold <= 10);

-- The fifth drift metric: the realised cost per completed run against the prediction.
ALTER TABLE alert DROP CONSTRAINT alert_metric_check;
ALTER TABLE alert ADD CONSTRAINT alert_metric_check CHECK (metric IN ('failure_rate',
    'gpu_utilization', 'queue_wait_s', 'throughput_units_per_s', 'cost_per_outcome'));
