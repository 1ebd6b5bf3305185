-- gpupool service schema, version 2: the node agent protocol (docs/architecture.md, "Agent protocol").
-- ${binary} is BLOB on SQLite and BYTEA on PostgreSQL (a Flyway placeholder set by Database.open).

-- The attempt a job is on: 0 until its first start, bumped at every start (the agent runs each attempt at most once).
ALTER TABLE jobs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;

-- Per agent node: the version of its desired state (bumped whenever the attempts placed on it change) and the
-- highest job status report seq applied from its agent.
ALTER TABLE nodes ADD COLUMN desired_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN acked_status_seq BIGINT NOT NULL DEFAULT -1;

-- A node credential (role 'node') acts for this one node only.
ALTER TABLE tokens ADD COLUMN node VARCHAR(253);

-- One row per attempt and node it runs on: the grants the server gave it there (JSON: uuid, gpu, milli,
-- memoryMib, exclusive), and what the agent reported. state: ASSIGNED (decided), RUNNING (the agent started
-- it), STOPPING (the server no longer wants it), then SUCCEEDED, FAILED, STOPPED or LOST.
CREATE TABLE job_attempts (
    job_id      VARCHAR(32) NOT NULL,
    attempt     INTEGER NOT NULL,
    node        VARCHAR(253) NOT NULL,
    grants      TEXT NOT NULL,
    assigned_ms BIGINT NOT NULL,
    state       VARCHAR(16) NOT NULL,
    pid         BIGINT,
    started_ms  BIGINT,
    ended_ms    BIGINT,
    exit_code   INTEGER,
    message     TEXT,
    PRIMARY KEY (job_id, attempt, node)
);

-- A job's output as its agent shipped it: byte chunks of one stream (stdout, stderr) of one attempt on one node,
-- contiguous from offset 0. complete: the attempt ended and the stream ends with this chunk.
CREATE TABLE job_output (
    job_id       VARCHAR(32) NOT NULL,
    attempt      INTEGER NOT NULL,
    node         VARCHAR(253) NOT NULL,
    stream       VARCHAR(8) NOT NULL,
    start_offset BIGINT NOT NULL,
    bytes        INTEGER NOT NULL,
    data         ${binary} NOT NULL,
    complete     SMALLINT NOT NULL,
    at_ms        BIGINT NOT NULL,
    PRIMARY KEY (job_id, attempt, node, stream, start_offset)
);

-- Output lines of version 1 came only from the removed line-based log call; output is job_output now.
DROP TABLE job_logs;
