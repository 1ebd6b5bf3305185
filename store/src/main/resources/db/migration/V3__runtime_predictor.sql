-- gpupool service schema, version 3: the learned run-time predictor, so a restart keeps what it learned.
-- (Version 2 is the agent protocol's migration.) One row per predictor kind (history, gbt, ...): its saved
-- form (predict's Predictors format) in base64, how many finished jobs it had learned from, when it was saved.
CREATE TABLE runtime_predictors (
    kind          VARCHAR(64) PRIMARY KEY,
    state         TEXT NOT NULL,
    jobs_learned  BIGINT NOT NULL,
    saved_ms      BIGINT NOT NULL
);
