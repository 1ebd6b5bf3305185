package io.gpupool.agent.gpu;

import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The registered backends and the rule that picks one. With no backend named, {@code auto} tries NVML,
 * then nvidia-smi, and keeps the first that discovers the GPUs; why each earlier one was passed over is
 * kept for the operator. {@code --fake-gpus} selects the fake backend.
 */
public final class GpuBackends {

    /** Settings of all backends; each backend reads its own. */
    public record Options(String backend, String nvmlLibrary, String nvidiaSmi, String fakeGpus, String fakeSeed) {
        public static Options auto() {
            return new Options(null, null, null, null, null);
        }
    }

    /** The backend in use, what it discovered, and one line per backend tried before it. */
    public record Opened(GpuBackend backend, GpuDiscovery discovery, List<String> passedOver) {
        public Opened {
            passedOver = List.copyOf(passedOver);
        }
    }

    @FunctionalInterface
    private interface Factory {
        GpuBackend open(Options o) throws GpuBackendException;
    }

    public static final String AUTO = "auto";

    /** One line per backend; the order of {@link #AUTO_ORDER} is the fallback order. */
    private static final Map<String, Factory> FACTORIES = new LinkedHashMap<>();

    static {
        FACTORIES.put(NvmlBackend.NAME, o -> NvmlBackend.open(o.nvmlLibrary()));
        FACTORIES.put(NvidiaSmiBackend.NAME, o -> new NvidiaSmiBackend(o.nvidiaSmi()));
        FACTORIES.put(FakeGpuBackend.NAME, o -> new FakeGpuBackend(o.fakeGpus(), o.fakeSeed() == null ? "node" : o.fakeSeed()));
    }

    private static final List<String> AUTO_ORDER = List.of(NvmlBackend.NAME, NvidiaSmiBackend.NAME);

    private GpuBackends() {
    }

    /** The names {@code --backend} accepts. */
    public static List<String> names() {
        List<String> names = new ArrayList<>(FACTORIES.keySet());
        names.add(AUTO);
        return names;
    }

    /**
     * Opens the backend the options name and discovers the GPUs with it.
     *
     * @throws SpecException        for options that contradict each other or name no backend
     * @throws GpuBackendException  when the named backend, or every backend {@code auto} tries, fails;
     *                              the message lists each failure
     */
    public static Opened open(Options o) throws GpuBackendException {
        String name = o.backend() == null || o.backend().isBlank() ? AUTO : o.backend().trim().toLowerCase(java.util.Locale.ROOT);
        boolean fake = o.fakeGpus() != null && !o.fakeGpus().isBlank();
        if (fake && name.equals(AUTO)) name = FakeGpuBackend.NAME;
        if (fake && !name.equals(FakeGpuBackend.NAME)) {
            throw new SpecException("--fake-gpus", null, "only works with the fake backend, not --backend " + name);
        }
        if (!fake && name.equals(FakeGpuBackend.NAME)) {
            throw new SpecException("--backend fake", null, "needs --fake-gpus, e.g. --fake-gpus 8xA100-80GB");
        }
        if (!name.equals(AUTO) && !FACTORIES.containsKey(name)) {
            throw new SpecException("--backend", null, "unknown backend '" + o.backend() + "'; known: " + String.join(", ", names()));
        }
        List<String> order = name.equals(AUTO) ? AUTO_ORDER : List.of(name);
        List<String> failures = new ArrayList<>();
        for (String candidate : order) {
            GpuBackend b = null;
            try {
                b = FACTORIES.get(candidate).open(o);
                return new Opened(b, b.discover(), failures);
            } catch (GpuBackendException e) {
                if (b != null) b.close();
                failures.add(candidate + ": " + e.getMessage());
            }
        }
        throw new GpuBackendException("no GPU backend works on this machine:\n  " + String.join("\n  ", failures));
    }
}
