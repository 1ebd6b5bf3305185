package io.gpupool.store;

/**
 * A saved run-time predictor: its kind, its saved form (base64 of what predict's {@code Predictors} writes), how
 * many finished jobs it had learned from, and when it was saved.
 */
public record PredictorRow(String kind, String state, long jobsLearned, long savedMs) {}
