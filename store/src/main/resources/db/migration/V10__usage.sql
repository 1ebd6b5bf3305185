-- gpupool service schema, version 10: usage accounting (docs/architecture.md, "Usage accounting").

-- One row per GPU (or share of one) an attempt held: the grant, the server's grant and release times (ended_ms null
-- while held), and what the GPU's telemetry says the attempt used: GPU-milliseconds of utilization and joules, both
-- split across the attempts sharing the GPU by their grants, measured up to metered_until_ms. Written by the server's
-- single writer at the start, at every telemetry report while held, and at the release, always as absolute values.
CREATE TABLE usage_grants (
    job_id          VARCHAR(32) NOT NULL,
    attempt         INTEGER NOT NULL,
    node            VARCHAR(253) NOT NULL,
    gpu             INTEGER NOT NULL,
    tenant          VARCHAR(64) NOT NULL,
    job_user        VARCHAR(64) NOT NULL,
    gpu_model       VARCHAR(64) NOT NULL,
    milli           INTEGER NOT NULL,
    memory_mib      BIGINT NOT NULL,
    started_ms      BIGINT NOT NULL,
    ended_ms        BIGINT,
    used_gpu_ms     DOUBLE PRECISION NOT NULL,
    energy_j        DOUBLE PRECISION NOT NULL,
    metered_until_ms BIGINT NOT NULL,
    PRIMARY KEY (job_id, attempt, node, gpu)
);
CREATE INDEX usage_grants_started ON usage_grants (started_ms);
CREATE INDEX usage_grants_open ON usage_grants (ended_ms);

-- One row per job that reached a final state (any: SUCCEEDED, FAILED, CANCELLED, ...), for counts by end state and
-- wait times (its first start is the earliest started_ms of its usage_grants).
CREATE TABLE usage_jobs (
    job_id       VARCHAR(32) PRIMARY KEY,
    tenant       VARCHAR(64) NOT NULL,
    job_user     VARCHAR(64) NOT NULL,
    state        VARCHAR(16) NOT NULL,
    submitted_ms BIGINT NOT NULL,
    ended_ms     BIGINT NOT NULL
);
CREATE INDEX usage_jobs_ended ON usage_jobs (ended_ms);
