-- gpupool service schema, version 7: job arrays and workflows (issue 19). array_id: the array a job is a task of
-- (its id up to '_': task j12_3 of array j12), null for a job of its own; indexed so that an array's tasks are
-- counted and listed without a scan. Dependencies and holds live in the job's spec.
ALTER TABLE jobs ADD COLUMN array_id VARCHAR(32);
CREATE INDEX jobs_array ON jobs (array_id, seq);
