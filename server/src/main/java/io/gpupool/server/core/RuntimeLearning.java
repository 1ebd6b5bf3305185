package io.gpupool.server.core;

import io.gpupool.engine.policy.RuntimePredictor;
import io.gpupool.model.JobSpec;
import io.gpupool.predict.runtime.DefaultRuntime;
import io.gpupool.predict.runtime.EstimateFirstPredictor;
import io.gpupool.predict.runtime.GbtPredictor;
import io.gpupool.predict.runtime.PersistentPredictor;
import io.gpupool.predict.runtime.Predictors;
import io.gpupool.store.PredictorRow;
import io.gpupool.store.Store;
import io.gpupool.store.Write;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The service's learned run-time predictor: what qssf and EASY backfill assume of a job that gives no estimate.
 * It learns online (the engine calls {@link #observe} as jobs finish) and is saved to the store every
 * {@value #SAVE_INTERVAL_MS} ms when it learned something, and once more at shutdown, so a restart keeps what it
 * learned (a crash loses at most the last interval's lessons, never a job). Like the engine, it is used only on
 * the engine loop thread: saving serializes it there ({@link PoolService#onLoop}).
 */
public final class RuntimeLearning implements RuntimePredictor, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RuntimeLearning.class);
    public static final String DEFAULT_KIND = "history";
    static final long SAVE_INTERVAL_MS = 10_000;

    private final String kind;
    private final RuntimePredictor model;   // a PersistentPredictor, or DefaultRuntime (nothing to save)
    private final EstimateFirstPredictor scheduling;
    private final Store store;
    private final PoolService pool;
    private final ScheduledExecutorService saver;
    private final ExecutorService trainer;   // GBT's trainings, off the engine loop; null for the other kinds
    // loop thread only
    private long learned;
    private long savedAt;

    private RuntimeLearning(String kind, RuntimePredictor model, long learned, Store store, PoolService pool) {
        this.kind = kind;
        this.model = model;
        this.scheduling = new EstimateFirstPredictor(model);
        this.learned = learned;
        this.savedAt = learned;
        this.store = store;
        this.pool = pool;
        this.saver = model instanceof PersistentPredictor ? Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "gpupool-predictor-saver");
            t.setDaemon(true);
            return t;
        }) : null;
        if (model instanceof GbtPredictor gbt) {
            // a training takes ~0.4 s per 1,000 kept jobs: on the loop it would hold every submission that long
            this.trainer = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "gpupool-predictor-trainer");
                t.setDaemon(true);
                return t;
            });
            gbt.trainInBackground(trainer);
        } else {
            this.trainer = null;
        }
    }

    /**
     * The predictor {@code kind} ({@code history}, {@code gbt}, {@code global-median}, or {@code none}) as the store
     * last saved it, else a fresh one; installed in the pool's engine before this returns.
     *
     * @param defaultMs what a fresh predictor answers before it has seen a job
     */
    public static RuntimeLearning start(String kind, long defaultMs, Store store, PoolService pool) {
        Predictors.forScheduling(kind, defaultMs);   // an unknown name fails here, naming the known ones
        RuntimePredictor model;
        long learned = 0;
        Optional<PredictorRow> saved = DefaultRuntime.NAME.equals(kind) ? Optional.empty() : store.predictor(kind);
        if (DefaultRuntime.NAME.equals(kind)) {
            model = new DefaultRuntime(defaultMs);
        } else if (saved.isPresent()) {
            PersistentPredictor p = load(saved.get());
            model = p != null ? p : Predictors.create(kind, defaultMs);
            learned = p != null ? saved.get().jobsLearned() : 0;
        } else {
            model = Predictors.create(kind, defaultMs);
        }
        RuntimeLearning r = new RuntimeLearning(kind, model, learned, store, pool);
        pool.usePredictor(r).join();
        if (r.saver != null) r.saver.scheduleWithFixedDelay(r::saveQuietly, SAVE_INTERVAL_MS, SAVE_INTERVAL_MS, TimeUnit.MILLISECONDS);
        LOG.info("run-time predictor {}: {}", kind, saved.isPresent() ? "restored, learned from " + learned + " finished jobs" : "fresh");
        return r;
    }

    /** A saved predictor that cannot be read (SpecException, bad base64) is reported and replaced by a fresh one (the next save overwrites it). */
    private static PersistentPredictor load(PredictorRow row) {
        try {
            return Predictors.load(new ByteArrayInputStream(Base64.getDecoder().decode(row.state())));
        } catch (IOException | IllegalArgumentException e) {
            LOG.warn("the saved run-time predictor '{}' cannot be read ({}); starting a fresh one", row.kind(), e.getMessage());
            return null;
        }
    }

    public String kind() { return kind; }

    @Override public String name() { return kind; }

    /** The job's own estimate when it gives one, else the model's. */
    @Override
    public long predictMs(JobSpec job) {
        return scheduling.predictMs(job);
    }

    @Override
    public void observe(JobSpec job, long runMs) {
        scheduling.observe(job, runMs);
        learned++;
    }

    /** Saves the predictor if it learned something since the last save; completes once the store committed it. */
    public void save() {
        if (saver == null) return;
        PredictorRow row = pool.onLoop(this::snapshotIfChanged).join();
        if (row == null) return;
        store.writer().submit(new Write.PutPredictor(row)).join();
        pool.onLoop(() -> savedAt = Math.max(savedAt, row.jobsLearned())).join();
    }

    /** Loop thread: the saved form, or null when there is nothing new. */
    private PredictorRow snapshotIfChanged() {
        if (learned == savedAt) return null;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            ((PersistentPredictor) model).save(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new PredictorRow(kind, Base64.getEncoder().encodeToString(out.toByteArray()), learned, System.currentTimeMillis());
    }

    private void saveQuietly() {
        try {
            save();
        } catch (RuntimeException e) {
            // the store is down or the service is stopping: the next save (or the one at shutdown) tries again
            LOG.warn("could not save the run-time predictor: {}", e.getMessage());
        }
    }

    /** Stops the periodic saves and saves a last time; call before the pool and the store close. */
    @Override
    public void close() {
        if (trainer != null) trainer.shutdownNow();
        if (saver == null) return;
        saver.shutdownNow();
        try {
            saver.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        saveQuietly();
    }
}
