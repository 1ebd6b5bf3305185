-- gpupool service schema, version 6: high availability (issue 18). The one row that names the active server replica.
-- epoch: the fencing token, +1 at every takeover; every commit of the active checks it. expires_us: when the lease runs
-- out, in microseconds of the DATABASE's clock (so the replicas' clocks do not matter). Only PostgreSQL runs several
-- replicas; on SQLite the row is never used.
CREATE TABLE service_lease (
    id INTEGER PRIMARY KEY,
    epoch BIGINT NOT NULL,
    holder TEXT NOT NULL,
    url TEXT NOT NULL,
    expires_us BIGINT NOT NULL
);
INSERT INTO service_lease (id, epoch, holder, url, expires_us) VALUES (1, 0, '', '', 0);
