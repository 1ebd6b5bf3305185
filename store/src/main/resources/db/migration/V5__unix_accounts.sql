-- gpupool service schema, version 5: node isolation. A member token may be bound to one Unix account: jobs
-- submitted with it run as that account on the nodes.
ALTER TABLE tokens ADD COLUMN unix_user VARCHAR(32);
-- Whether a tenant's jobs may run on nodes whose agent cannot switch accounts (it is not root): there every job runs as
-- the agent's own account, next to other tenants' jobs under the same account.
ALTER TABLE tenants ADD COLUMN shared_account_nodes SMALLINT NOT NULL DEFAULT 0;
