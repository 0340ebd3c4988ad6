-- Offer versions for imported price catalogs. An offer read from a catalog (catalog =
-- 'skypilot') is keyed by (catalog, provider, region, instance_type, purchase_option); a newer
-- catalog with another price (or GPU figures) for a key adds a new offer row with version + 1
-- that `supersedes` the current one. Offers stay append-only (the trigger of 0011 still
-- refuses UPDATE and DELETE), so an old version keeps its id and price, and every scenario or
-- comparison that cited it stays reproducible; lists show only offers nothing supersedes.
-- Offers entered by hand or by a price sheet have no catalog and no version.
ALTER TABLE offer
    ADD COLUMN catalog    text CHECK (catalog IN ('skypilot')),
    ADD COLUMN version    integer CHECK (version >= 1),
    ADD COLUMN supersedes uuid UNIQUE REFERENCES offer (id),
    ADD CONSTRAINT offer_catalog_version CHECK ((catalog IS NULL) = (version IS NULL)),
    ADD CONSTRAINT offer_supersedes_catalog CHECK (supersedes IS NULL OR catalog IS NOT NULL);
CREATE UNIQUE INDEX offer_catalog_key ON offer (catalog, provider, region, instance_type, purchase_option, version)
    WHERE catalog IS NOT NULL;
