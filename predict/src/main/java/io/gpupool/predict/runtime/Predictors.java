package io.gpupool.predict.runtime;

import io.gpupool.model.SpecException;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongFunction;

/**
 * The run-time predictors by name, and their saved form: a header ({@value #MAGIC}, format version, kind)
 * followed by the predictor's own state. A new predictor is one class plus one line in {@link #FACTORIES}
 * (and one in {@link #load} if it can be saved).
 */
public final class Predictors {
    static final String MAGIC = "gpupool-runtime-predictor";
    static final int VERSION = 1;

    private static final Map<String, LongFunction<PersistentPredictor>> FACTORIES = new LinkedHashMap<>();

    static {
        FACTORIES.put("global-median", HistoryPredictor::globalMedian);
        FACTORIES.put(HistoryPredictor.KIND, HistoryPredictor::standard);
        FACTORIES.put(GbtPredictor.KIND, GbtPredictor::withDefaults);
    }

    private Predictors() {}

    public static List<String> names() {
        return List.copyOf(FACTORIES.keySet());
    }

    /** A fresh predictor; {@code defaultMs} is its answer before it has seen any job. */
    public static PersistentPredictor create(String name, long defaultMs) {
        LongFunction<PersistentPredictor> f = FACTORIES.get(name);
        if (f == null) throw new SpecException("predictor", "name", "unknown predictor '" + name + "'; known: " + String.join(", ", names()));
        return f.apply(defaultMs);
    }

    /** Names {@link #forScheduling} accepts: {@value DefaultRuntime#NAME} and {@link #names()}. */
    public static List<String> schedulingNames() {
        List<String> all = new java.util.ArrayList<>();
        all.add(DefaultRuntime.NAME);
        all.addAll(names());
        return List.copyOf(all);
    }

    /**
     * What the scheduler (qssf, EASY backfill) consults: a job's own estimate when it gives one, else the named
     * model ({@value DefaultRuntime#NAME}: the default run time), which keeps learning from every finished job.
     */
    public static EstimateFirstPredictor forScheduling(String name, long defaultMs) {
        if (DefaultRuntime.NAME.equals(name)) return new EstimateFirstPredictor(new DefaultRuntime(defaultMs));
        if (!FACTORIES.containsKey(name)) {
            throw new SpecException("predictor", "name", "unknown predictor '" + name + "'; known: " + String.join(", ", schedulingNames()));
        }
        return new EstimateFirstPredictor(create(name, defaultMs));
    }

    static void save(PersistentPredictor p, OutputStream out) throws IOException {
        DataOutputStream data = new DataOutputStream(new BufferedOutputStream(out));
        writeString(data, MAGIC);
        data.writeInt(VERSION);
        writeString(data, p instanceof HistoryPredictor ? HistoryPredictor.KIND : p.name());
        p.writeState(data);
        data.flush();
    }

    /** Reads a predictor that {@link PersistentPredictor#save} wrote; a file that is not one is a {@link SpecException}. */
    public static PersistentPredictor load(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(new BufferedInputStream(in));
        try {
            String magic = readString(data, 64);
            if (!MAGIC.equals(magic)) throw bad("header", "not a saved gpupool run-time predictor");
            int version = data.readInt();
            if (version != VERSION) throw bad("version", "format version " + version + " is not supported (this build reads " + VERSION + ")");
            String kind = readString(data, 64);
            return switch (kind) {
                case HistoryPredictor.KIND -> HistoryPredictor.readState(data);
                case GbtPredictor.KIND -> GbtPredictor.readState(data);
                default -> throw bad("kind", "unknown predictor kind '" + kind + "'");
            };
        } catch (EOFException e) {
            throw bad("length", "the saved predictor ends early (truncated file?)");
        }
    }

    public static void save(PersistentPredictor p, Path file) throws IOException {
        try (OutputStream out = Files.newOutputStream(file)) {
            p.save(out);
        }
    }

    public static PersistentPredictor load(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            return load(in);
        }
    }

    // ---- the saved form's primitives -----------------------------------------------------------------

    static void writeString(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.writeInt(b.length);
        out.write(b);
    }

    static String readString(DataInputStream in) throws IOException {
        return readString(in, 1 << 20);
    }

    private static String readString(DataInputStream in, int max) throws IOException {
        int n = readCount(in, max, "string length");
        byte[] b = new byte[n];
        in.readFully(b);
        return new String(b, StandardCharsets.UTF_8);
    }

    static int readCount(DataInputStream in, int max, String what) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > max) throw bad(what, what + " " + n + " is out of range 0.." + max + " (corrupt file?)");
        return n;
    }

    static <E extends Enum<E>> E readEnum(DataInputStream in, Class<E> type) throws IOException {
        String s = readString(in, 256);
        try {
            return Enum.valueOf(type, s);
        } catch (IllegalArgumentException e) {
            throw bad(type.getSimpleName(), "unknown value '" + s + "'");
        }
    }

    static SpecException bad(String field, String rule) {
        return new SpecException("saved predictor", field, rule);
    }
}
