-- gpupool service schema, version 8: a warm standby (high availability, issue 18). change_seq: the number of the
-- writer's last transaction that changed the job, its allocation or one of its attempts (the writer numbers its
-- transactions 1, 2, 3, ... from the highest stored, and only one writer commits at a time: the fencing token). A
-- standby that has read everything up to N reads only the jobs with change_seq > N to catch up. 0: before version 8.
ALTER TABLE jobs ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX jobs_change_seq ON jobs (change_seq);
