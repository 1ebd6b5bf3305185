-- gpupool service schema, version 1. Portable between SQLite (embedded) and PostgreSQL:
-- only BIGINT/INTEGER/SMALLINT/DOUBLE PRECISION/VARCHAR/TEXT, no foreign keys (the single writer keeps order).

CREATE TABLE tenants (
    name            VARCHAR(64) PRIMARY KEY,
    weight          DOUBLE PRECISION NOT NULL,
    guaranteed_gpus DOUBLE PRECISION NOT NULL,
    limit_gpus      DOUBLE PRECISION NOT NULL,
    created_ms      BIGINT NOT NULL
);

-- API tokens: only the SHA-256 of the secret is kept. role: admin | member | agent.
CREATE TABLE tokens (
    id          VARCHAR(32) PRIMARY KEY,
    hash        VARCHAR(64) NOT NULL UNIQUE,
    role        VARCHAR(16) NOT NULL,
    tenant      VARCHAR(64),
    label       VARCHAR(200),
    created_ms  BIGINT NOT NULL
);

-- GPU servers: spec is the node as registered (JSON). source: static (--cluster, demo) | agent.
CREATE TABLE nodes (
    name          VARCHAR(253) PRIMARY KEY,
    spec          TEXT NOT NULL,
    source        VARCHAR(16) NOT NULL,
    cordoned      SMALLINT NOT NULL,
    registered_ms BIGINT NOT NULL
);

-- Jobs in arrival order (seq). spec is the accepted request (JSON). state: PENDING, RUNNING, SUCCEEDED,
-- FAILED, CANCELLED. An idempotency key is unique per tenant.
CREATE TABLE jobs (
    seq          BIGINT PRIMARY KEY,
    id           VARCHAR(32) NOT NULL UNIQUE,
    tenant       VARCHAR(64) NOT NULL,
    idem_key     VARCHAR(200),
    spec         TEXT NOT NULL,
    state        VARCHAR(16) NOT NULL,
    submitted_ms BIGINT NOT NULL,
    started_ms   BIGINT,
    ended_ms     BIGINT,
    preemptions  INTEGER NOT NULL,
    exit_code    INTEGER,
    message      TEXT,
    UNIQUE (tenant, idem_key)
);
CREATE INDEX jobs_state_seq ON jobs (state, seq);
CREATE INDEX jobs_tenant_seq ON jobs (tenant, seq);

-- What a running job holds: one row per GPU grant, written when the engine starts the job.
CREATE TABLE allocations (
    job_id     VARCHAR(32) NOT NULL,
    replica    INTEGER NOT NULL,
    node       VARCHAR(253) NOT NULL,
    gpu        INTEGER NOT NULL,
    milli      INTEGER NOT NULL,
    memory_mib BIGINT NOT NULL,
    exclusive  SMALLINT NOT NULL,
    PRIMARY KEY (job_id, node, gpu)
);

-- A job's history: SUBMITTED, STARTED, PREEMPTED, SUCCEEDED, FAILED, CANCELLED, ...
CREATE TABLE job_events (
    id      BIGINT PRIMARY KEY,
    job_id  VARCHAR(32) NOT NULL,
    at_ms   BIGINT NOT NULL,
    type    VARCHAR(16) NOT NULL,
    detail  TEXT
);
CREATE INDEX job_events_job ON job_events (job_id, id);

-- Output lines of a job, as its agent streamed them.
CREATE TABLE job_logs (
    id      BIGINT PRIMARY KEY,
    job_id  VARCHAR(32) NOT NULL,
    at_ms   BIGINT NOT NULL,
    line    TEXT NOT NULL
);
CREATE INDEX job_logs_job ON job_logs (job_id, id);

-- Service settings (the scheduler configuration as JSON under 'scheduler').
CREATE TABLE settings (
    name  VARCHAR(64) PRIMARY KEY,
    value TEXT NOT NULL
);
