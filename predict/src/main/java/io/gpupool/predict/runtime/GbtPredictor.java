package io.gpupool.predict.runtime;

import io.gpupool.model.JobSpec;
import ml.dmlc.xgboost4j.java.Booster;
import ml.dmlc.xgboost4j.java.DMatrix;
import ml.dmlc.xgboost4j.java.XGBoost;
import ml.dmlc.xgboost4j.java.XGBoostError;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Gradient-boosted regression trees (XGBoost, through xgboost4j) over the features of {@link FeatureEncoder}.
 * The trees learn a correction to the {@link HistoryPredictor}: the label is ln(run seconds) minus ln(the
 * history answer), so a job the trees know nothing more about gets the history answer, which is also the
 * answer until the first training. The loss is absolute error on that log scale (the conditional median);
 * leaves need {@code minChildWeight} jobs, so a correction rests on many jobs, not a few.
 *
 * <p><b>Online</b>: a job's features are fixed when it is first predicted (at submission, as the scheduler
 * saw it) and become a training row when it finishes. The trees are retrained from scratch on the latest
 * {@code window} rows whenever the rows added since the last training reach min(retrainEvery, rows at the last
 * training): after {@code minRows}, then at doubling sizes, then every {@code retrainEvery} jobs. Training is
 * synchronous in {@link #observe}; its cost grows linearly with the window (docs/prediction.md has figures).
 * A job's prediction is cached until the next training.
 */
public final class GbtPredictor implements PersistentPredictor {
    static final String KIND = "gbt";
    static final int PENDING_CACHE = 200_000;

    /**
     * @param trees        boosting rounds
     * @param maxDepth     depth of each tree
     * @param eta          learning rate
     * @param minChildWeight fewest rows a leaf may hold (L1 loss: hessian 1 per row); guards against corrections fitted to a few jobs
     * @param retrainEvery finished jobs between two trainings once warmed up
     * @param window       most recent finished jobs trained on
     * @param minRows      finished jobs before the first training
     * @param threads      XGBoost threads while training
     * @param objective    XGBoost's loss on ln(seconds): {@code reg:absoluteerror} fits the conditional median,
     *                     {@code reg:squarederror} the mean
     */
    public record Settings(int trees, int maxDepth, double eta, double minChildWeight, int retrainEvery, int window, int minRows,
                           int threads, String objective) {
        public Settings {
            if (trees < 1 || maxDepth < 1 || !(eta > 0) || !(minChildWeight >= 0) || retrainEvery < 1 || window < minRows || minRows < 2 || threads < 1
                    || !OBJECTIVES.contains(objective)) {
                throw new IllegalArgumentException("bad GBT settings " + this);
            }
        }

        static final List<String> OBJECTIVES = List.of("reg:absoluteerror", "reg:squarederror", "reg:pseudohubererror");

        public static Settings defaults() {
            return new Settings(100, 4, 0.1, 50, 1000, 10_000, 50, 1, "reg:absoluteerror");
        }
    }

    /** A job predicted but not finished: its features as seen then, and the answer for the model version then. */
    private record Pending(float[] row, JobFeatures features, long ms, long version) {}

    private final Settings settings;
    private final HistoryPredictor history;
    private final FeatureEncoder encoder;
    private final List<float[]> rows = new ArrayList<>();
    private final List<Float> labels = new ArrayList<>();
    private int next;                 // ring position once rows is full
    private int addedSinceTraining;
    private int rowsAtTraining;
    private long version;
    private Booster booster;
    private long trainings;
    private long trainingNanos;
    private boolean deferTraining;
    private final Map<String, Pending> pending = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override protected boolean removeEldestEntry(Map.Entry<String, Pending> e) {
            return size() > PENDING_CACHE;
        }
    };

    public GbtPredictor(Settings settings, HistoryPredictor history) {
        NativeXgboost.requireLoaded();
        this.settings = settings;
        this.history = history;
        this.encoder = new FeatureEncoder();
    }

    private GbtPredictor(Settings settings, HistoryPredictor history, FeatureEncoder encoder) {
        NativeXgboost.requireLoaded();
        this.settings = settings;
        this.history = history;
        this.encoder = encoder;
    }

    public static GbtPredictor withDefaults(long defaultMs) {
        return new GbtPredictor(Settings.defaults(), HistoryPredictor.standard(defaultMs));
    }

    @Override public String name() {
        return KIND;
    }

    public Settings settings() {
        return settings;
    }

    /** Trainings so far and the time they took in all, for cost figures. */
    public long trainings() { return trainings; }

    public long trainingNanos() { return trainingNanos; }

    public boolean trained() {
        return booster != null;
    }

    @Override
    public long predictMs(JobSpec job) {
        Pending p = pending.get(job.id());
        if (p == null) {
            HistoryPredictor.Answer h = history.answer(job);
            JobFeatures f = JobFeatures.of(job);
            float[] row = encoder.encode(f, h, false);
            p = new Pending(row, f, booster == null ? h.ms() : predictRow(row), version);
            pending.put(job.id(), p);
        } else if (p.version() != version) {
            p = new Pending(p.row(), p.features(), predictRow(p.row()), version);
            pending.put(job.id(), p);
        }
        return p.ms();
    }

    @Override
    public void observe(JobSpec job, long runMs) {
        if (runMs <= 0) return;
        Pending p = pending.remove(job.id());
        float[] row;
        if (p != null) {
            row = p.row();
            encoder.learnCodes(row, p.features());
        } else {
            row = encoder.encode(JobFeatures.of(job), history.answer(job), true);
        }
        history.observe(job, runMs);
        add(row, (float) (Math.log(runMs / 1000.0) - row[FeatureEncoder.HISTORY_LN_SECONDS]));
        addedSinceTraining++;
        if (!deferTraining && rows.size() >= settings.minRows() && addedSinceTraining >= Math.min(settings.retrainEvery(), Math.max(rowsAtTraining, settings.minRows()))) {
            retrain();
        }
    }

    private void add(float[] row, float label) {
        if (rows.size() < settings.window()) {
            rows.add(row);
            labels.add(label);
        } else {
            rows.set(next, row);
            labels.set(next, label);
            next = (next + 1) % settings.window();
        }
    }

    @Override
    public void learnInBatch(Runnable learning) {
        deferTraining = true;
        try {
            learning.run();
        } finally {
            deferTraining = false;
        }
        if (rows.size() >= settings.minRows()) retrain();
    }

    /** Trains new trees on the kept rows now. */
    public void retrain() {
        int n = rows.size();
        if (n < 2) return;
        long t0 = System.nanoTime();
        int w = FeatureEncoder.width();
        float[] flat = new float[n * w];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            System.arraycopy(rows.get(i), 0, flat, i * w, w);
            y[i] = labels.get(i);
        }
        DMatrix d = null;
        try {
            d = new DMatrix(flat, n, w, Float.NaN);
            d.setLabel(y);
            d.setFeatureNames(FeatureEncoder.NAMES);
            d.setFeatureTypes(FeatureEncoder.TYPES);
            Map<String, Object> params = new HashMap<>();
            params.put("objective", settings.objective());
            params.put("tree_method", "hist");
            params.put("max_depth", settings.maxDepth());
            params.put("eta", settings.eta());
            params.put("nthread", settings.threads());
            params.put("seed", 0);
            params.put("min_child_weight", settings.minChildWeight());
            params.put("verbosity", 0);
            Booster trained = XGBoost.train(d, params, settings.trees(), new HashMap<>(), null, null);
            if (booster != null) booster.dispose();
            booster = trained;
        } catch (XGBoostError e) {
            throw new IllegalStateException("XGBoost training failed on " + n + " rows: " + e.getMessage(), e);
        } finally {
            if (d != null) d.dispose();
        }
        version++;
        rowsAtTraining = n;
        addedSinceTraining = 0;
        trainings++;
        trainingNanos += System.nanoTime() - t0;
    }

    private long predictRow(float[] row) {
        try {
            float lnSeconds = row[FeatureEncoder.HISTORY_LN_SECONDS] + booster.inplace_predict(row, 1, row.length, Float.NaN)[0][0];
            return Math.max(1, Math.round(Math.exp(lnSeconds) * 1000));
        } catch (XGBoostError e) {
            throw new IllegalStateException("XGBoost prediction failed: " + e.getMessage(), e);
        }
    }

    // ---- persistence ------------------------------------------------------------------------------

    @Override
    public void writeState(DataOutputStream out) throws IOException {
        Settings s = settings;
        out.writeInt(s.trees());
        out.writeInt(s.maxDepth());
        out.writeDouble(s.eta());
        out.writeDouble(s.minChildWeight());
        out.writeInt(s.retrainEvery());
        out.writeInt(s.window());
        out.writeInt(s.minRows());
        out.writeInt(s.threads());
        Predictors.writeString(out, s.objective());
        history.writeState(out);
        encoder.write(out);
        int n = rows.size();
        out.writeInt(n);
        for (int k = 0; k < n; k++) {
            int i = n < settings.window() ? k : (next + k) % n;   // oldest first
            for (float v : rows.get(i)) out.writeFloat(v);
            out.writeFloat(labels.get(i));
        }
        out.writeInt(addedSinceTraining);
        out.writeInt(rowsAtTraining);
        byte[] model = booster == null ? new byte[0] : modelBytes();
        out.writeInt(model.length);
        out.write(model);
    }

    private byte[] modelBytes() {
        try {
            return booster.toByteArray();
        } catch (XGBoostError e) {
            throw new IllegalStateException("cannot serialise the XGBoost model: " + e.getMessage(), e);
        }
    }

    static GbtPredictor readState(DataInputStream in) throws IOException {
        Settings s;
        try {
            s = new Settings(in.readInt(), in.readInt(), in.readDouble(), in.readDouble(), in.readInt(), in.readInt(), in.readInt(),
                    in.readInt(), Predictors.readString(in));
        } catch (IllegalArgumentException e) {
            throw Predictors.bad("settings", e.getMessage());
        }
        HistoryPredictor history = HistoryPredictor.readState(in);
        GbtPredictor p = new GbtPredictor(s, history, FeatureEncoder.read(in));
        int n = Predictors.readCount(in, s.window(), "training rows");
        int w = FeatureEncoder.width();
        for (int k = 0; k < n; k++) {
            float[] row = new float[w];
            for (int j = 0; j < w; j++) row[j] = in.readFloat();
            p.add(row, in.readFloat());
        }
        p.addedSinceTraining = in.readInt();
        p.rowsAtTraining = in.readInt();
        int len = Predictors.readCount(in, Integer.MAX_VALUE, "model bytes");
        if (len > 0) {
            byte[] model = new byte[len];
            in.readFully(model);
            try {
                p.booster = XGBoost.loadModel(model);
            } catch (XGBoostError e) {
                throw Predictors.bad("model", "XGBoost cannot read the saved trees: " + e.getMessage());
            }
        }
        return p;
    }
}
