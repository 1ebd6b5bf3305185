-- gpupool service schema, version 5: node isolation. A member token may be bound to one Unix account: jobs
-- submitted with it run as that account on the nodes.
ALTER TABLE tokens ADD COLUMN unix_user VARCHAR(32);
