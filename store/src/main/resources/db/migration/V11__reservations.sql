-- gpupool service schema, version 11: advance reservations (issue 19). GPUs reserved for a tenant over the window
-- [start_ms, end_ms). gpus: the reserved GPUs as JSON ([{"node": NAME, "gpu": INDEX}, ...], chosen when it was made);
-- model: the GPU model asked for (null when nodes were); nodes: the nodes asked for, JSON (empty: a count of a model).
-- A reservation is deleted when its window ends or an admin deletes it.
CREATE TABLE reservations (
    name        VARCHAR(64) PRIMARY KEY,
    tenant      VARCHAR(64) NOT NULL,
    start_ms    BIGINT NOT NULL,
    end_ms      BIGINT NOT NULL,
    gpus        TEXT NOT NULL,
    model       VARCHAR(64),
    nodes       TEXT NOT NULL,
    created_ms  BIGINT NOT NULL,
    created_by  VARCHAR(200) NOT NULL
);
