-- Cost engine 2 (docs/cost-model.md "Engine 2"): a stored benchmark may say how the job reaches
-- its data (read remotely from workload.data_source on every attempt, or staged at the offer
-- once a month), how much a restart reads again, and its crash rate per instance-hour. The
-- resolver puts them into the scenario document when an option names the benchmark by id.
ALTER TABLE benchmark
    ADD COLUMN data_access text CHECK (data_access IN ('remote', 'staged')),
    ADD COLUMN restage_gb double precision CHECK (restage_gb >= 0),
    ADD COLUMN crash_rate_per_instance_hour double precision
        CHECK (crash_rate_per_instance_hour >= 0);
