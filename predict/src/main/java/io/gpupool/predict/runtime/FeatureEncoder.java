package io.gpupool.predict.runtime;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a job's {@link JobFeatures}, plus what the history model says about it, into the row of numbers the
 * gradient-boosted trees see. Categorical columns (type "c") hold {@link CategoryCodes}; a value without a
 * code is missing (NaN), which the trees route like any missing value.
 *
 * <pre>
 *   user, tenant, name template, first name token, GPU model      categorical
 *   log2(GPU units), ln(requested seconds) or missing             numeric
 *   hour of day, weekday (UTC)                                    numeric
 *   ln(history median seconds), history level that answered      numeric (the history model's answer, stacked)
 *   16 hashed name-token indicators                               numeric 0/1
 * </pre>
 */
final class FeatureEncoder {
    static final int TOKEN_BINS = 16;
    /** Column of ln(history median seconds): the trees learn the correction to it. */
    static final int HISTORY_LN_SECONDS = 9;
    static final String[] NAMES;
    static final String[] TYPES;

    static {
        List<String> names = new ArrayList<>(List.of("user", "tenant", "template", "first_token", "gpu_model",
                "log2_gpus", "ln_requested_s", "hour", "weekday", "ln_history_s", "history_level"));
        for (int i = 0; i < TOKEN_BINS; i++) names.add("token_" + i);
        NAMES = names.toArray(String[]::new);
        TYPES = new String[NAMES.length];
        for (int i = 0; i < TYPES.length; i++) TYPES[i] = i < 5 ? "c" : "q";
    }

    static int width() {
        return NAMES.length;
    }

    private final CategoryCodes users;
    private final CategoryCodes tenants;
    private final CategoryCodes templates;
    private final CategoryCodes firstTokens;
    private final CategoryCodes gpuModels;

    FeatureEncoder() {
        this(new CategoryCodes(), new CategoryCodes(), new CategoryCodes(), new CategoryCodes(), new CategoryCodes());
    }

    private FeatureEncoder(CategoryCodes users, CategoryCodes tenants, CategoryCodes templates, CategoryCodes firstTokens,
                           CategoryCodes gpuModels) {
        this.users = users;
        this.tenants = tenants;
        this.templates = templates;
        this.firstTokens = firstTokens;
        this.gpuModels = gpuModels;
    }

    /**
     * The job's row. {@code learn}: give new categorical values a code (for rows that will be trained on);
     * otherwise new values are missing.
     */
    float[] encode(JobFeatures f, HistoryPredictor.Answer history, boolean learn) {
        float[] x = new float[width()];
        x[0] = code(users, f.user(), learn);
        x[1] = code(tenants, f.tenant(), learn);
        x[2] = code(templates, f.template(), learn);
        x[3] = code(firstTokens, f.firstToken(), learn);
        x[4] = code(gpuModels, f.gpuModel(), learn);
        x[5] = (float) (Math.log(Math.max(f.gpus(), 1e-3)) / Math.log(2));
        x[6] = f.requestedMs() > 0 ? (float) Math.log(f.requestedMs() / 1000.0) : Float.NaN;
        x[7] = f.hour();
        x[8] = f.weekday();
        x[HISTORY_LN_SECONDS] = (float) Math.log(history.ms() / 1000.0);
        x[10] = history.level();
        for (String t : f.tokens()) x[11 + Math.floorMod(t.hashCode(), TOKEN_BINS)] = 1;
        return x;
    }

    /** Gives the row's categorical values codes when the job was first encoded without learning. */
    void learnCodes(float[] row, JobFeatures f) {
        if (Float.isNaN(row[0])) row[0] = code(users, f.user(), true);
        if (Float.isNaN(row[1])) row[1] = code(tenants, f.tenant(), true);
        if (Float.isNaN(row[2])) row[2] = code(templates, f.template(), true);
        if (Float.isNaN(row[3])) row[3] = code(firstTokens, f.firstToken(), true);
        if (Float.isNaN(row[4])) row[4] = code(gpuModels, f.gpuModel(), true);
    }

    private static float code(CategoryCodes codes, String value, boolean learn) {
        int c = learn ? codes.codeOf(value) : codes.find(value);
        return c < 0 ? Float.NaN : c;
    }

    void write(DataOutputStream out) throws IOException {
        for (CategoryCodes c : List.of(users, tenants, templates, firstTokens, gpuModels)) c.write(out);
    }

    static FeatureEncoder read(DataInputStream in) throws IOException {
        return new FeatureEncoder(CategoryCodes.read(in), CategoryCodes.read(in), CategoryCodes.read(in),
                CategoryCodes.read(in), CategoryCodes.read(in));
    }
}
