package io.gpupool.predict.runtime;

import ml.dmlc.xgboost4j.java.DMatrix;

/** Checks once that xgboost4j's native library loads here, and says what to do when it does not. */
final class NativeXgboost {
    private static volatile String failure;
    private static volatile boolean checked;

    private NativeXgboost() {}

    static void requireLoaded() {
        if (!checked) {
            synchronized (NativeXgboost.class) {
                if (!checked) {
                    try {
                        new DMatrix(new float[] {0f}, 1, 1, Float.NaN).dispose();
                    } catch (Throwable t) {   // UnsatisfiedLinkError, ExceptionInInitializerError, XGBoostError
                        failure = t.toString();
                    }
                    checked = true;
                }
            }
        }
        if (failure != null) {
            throw new IllegalStateException("the gbt predictor needs XGBoost's native library, which did not load ("
                    + failure + "); on Linux it needs libgomp (apt install libgomp1); use the history predictor instead");
        }
    }
}
