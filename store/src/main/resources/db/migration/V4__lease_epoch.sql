-- gpupool service schema, version 4: at most once. A node's lease epoch, raised whenever the server declares the
-- node lost: a report its agent sent under an older epoch is answered but not applied, and renews no lease.
ALTER TABLE nodes ADD COLUMN lease_epoch BIGINT NOT NULL DEFAULT 0;
