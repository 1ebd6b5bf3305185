package io.gpupool.sim.trace;

import io.gpupool.model.SpecException;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** Trace formats by name ({@code --trace-format}). A new format is one class plus one line here. */
public final class TraceFormats {
    private static final Map<String, Supplier<TraceFormat>> FORMATS = new LinkedHashMap<>();

    static {
        FORMATS.put("gpupool", GpupoolCsvFormat::new);
        FORMATS.put("philly", PhillyFormat::new);
        FORMATS.put("openb", OpenbFormat::new);
    }

    private TraceFormats() {}

    public static TraceFormat get(String name) {
        Supplier<TraceFormat> f = FORMATS.get(name);
        if (f == null) throw new SpecException("--trace-format", "trace-format", "unknown format '" + name + "'; supported: " + String.join(", ", FORMATS.keySet()));
        return f.get();
    }

    public static List<String> names() {
        return List.copyOf(FORMATS.keySet());
    }
}
