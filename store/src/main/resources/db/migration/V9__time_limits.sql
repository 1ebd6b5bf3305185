-- gpupool service schema, version 9: time limits (issue 19). Per tenant, the limit a job without its own gets and the
-- most a job may ask for, in seconds; 0 = none. A job's own limit is part of its stored request (jobs.spec).
ALTER TABLE tenants ADD COLUMN default_time_limit_s BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tenants ADD COLUMN max_time_limit_s BIGINT NOT NULL DEFAULT 0;
