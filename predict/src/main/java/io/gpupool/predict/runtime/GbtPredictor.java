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
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;

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
 * synchronous in {@link #observe} (deterministic: what the simulator needs); its cost grows linearly with the
 * window (docs/prediction.md has figures). A service that cannot stall its caller for it hands training to
 * {@link #trainInBackground another thread}: the rows are copied at the trigger, and the new trees are installed
 * by the first call on the owner's thread after they are ready. A job's prediction is cached until the next training.
 *
 * <p>Not thread-safe: one thread owns it (the engine's); only the training itself runs elsewhere.
 */
public final class GbtPredictor implements PersistentPredictor {
    static final String KIND = "gbt";
    static final int PENDING_CACHE = 200_000;
    private static final Logger LOG = Logger.getLogger(GbtPredictor.class.getName());

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

    /** Rows copied for one training: {@code addedBefore} = rows added since the previous training when it was taken. */
    private record TrainingSet(float[] flat, float[] labels, int rows, int addedBefore) {}

    /** Trees trained in the background, waiting for the owner thread; {@code booster} null when training failed. */
    private record Trained(Booster booster, TrainingSet from, long nanos, String error) {}

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
    private Executor trainer;                       // null: train synchronously in observe
    private boolean trainingInFlight;               // owner thread only
    private final AtomicReference<Trained> ready = new AtomicReference<>();   // set by the trainer, taken by the owner
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

    /**
     * From now on, trainings that {@link #observe} triggers run on {@code executor} instead of the caller's thread;
     * until they finish, predictions keep the previous trees. At most one training is in flight.
     */
    public void trainInBackground(Executor executor) {
        this.trainer = executor;
    }

    @Override
    public long predictMs(JobSpec job) {
        installReady();
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
        installReady();
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
        if (!deferTraining && !trainingInFlight && rows.size() >= settings.minRows()
                && addedSinceTraining >= Math.min(settings.retrainEvery(), Math.max(rowsAtTraining, settings.minRows()))) {
            if (trainer == null) {
                retrain();
            } else {
                startBackgroundTraining();
            }
        }
    }

    private void startBackgroundTraining() {
        TrainingSet set = snapshot();
        trainingInFlight = true;
        try {
            trainer.execute(() -> {
                long t0 = System.nanoTime();
                try {
                    ready.set(new Trained(train(set), set, System.nanoTime() - t0, null));
                } catch (RuntimeException e) {
                    ready.set(new Trained(null, set, System.nanoTime() - t0, e.getMessage()));
                }
            });
        } catch (RuntimeException e) {   // the executor is shut down (service stopping): train next time instead
            trainingInFlight = false;
        }
    }

    /** Owner thread: installs trees the background trainer finished, if any. */
    private void installReady() {
        if (!trainingInFlight) return;
        Trained t = ready.getAndSet(null);
        if (t == null) return;
        trainingInFlight = false;
        if (t.booster() == null) {
            // keep the previous trees; the counters are untouched, so the next finished job triggers a new try
            LOG.warning("background GBT training failed, keeping the previous trees: " + t.error());
            return;
        }
        install(t.booster(), t.from(), t.nanos());
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

    /** Trains new trees on the kept rows now, on this thread. */
    public void retrain() {
        if (rows.size() < 2) return;
        long t0 = System.nanoTime();
        TrainingSet set = snapshot();
        install(train(set), set, System.nanoTime() - t0);
    }

    private TrainingSet snapshot() {
        int n = rows.size();
        int w = FeatureEncoder.width();
        float[] flat = new float[n * w];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            System.arraycopy(rows.get(i), 0, flat, i * w, w);
            y[i] = labels.get(i);
        }
        return new TrainingSet(flat, y, n, addedSinceTraining);
    }

    private void install(Booster trained, TrainingSet from, long nanos) {
        if (booster != null) booster.dispose();
        booster = trained;
        version++;
        rowsAtTraining = from.rows();
        // rows that finished while it trained count toward the next one (never below 0: a synchronous retrain
        // may have reset the count meanwhile)
        addedSinceTraining = Math.max(0, addedSinceTraining - from.addedBefore());
        trainings++;
        trainingNanos += nanos;
    }

    /** XGBoost on a copy of the rows: touches no field, so it may run on any thread. */
    private Booster train(TrainingSet set) {
        int n = set.rows();
        int w = FeatureEncoder.width();
        DMatrix d = null;
        try {
            d = new DMatrix(set.flat(), n, w, Float.NaN);
            d.setLabel(set.labels());
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
            return XGBoost.train(d, params, settings.trees(), new HashMap<>(), null, null);
        } catch (XGBoostError e) {
            throw new IllegalStateException("XGBoost training failed on " + n + " rows: " + e.getMessage(), e);
        } finally {
            if (d != null) d.dispose();
        }
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
