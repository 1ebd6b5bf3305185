// Cost of parsing a trace file per replay (docs/benchmarks.md, "Parallel comparison and round cost (issue 16)"):
// indexes the file once, then times five full passes over its rows (what each policy's replay read again before
// simulate kept a compared trace in memory), and the heap the parsed jobs take (Trace.loaded).
// A single-file program against the CLI's jar:
//   java -cp cli/target/gpupool.jar bench/sim/TraceParseCost.java TRACE.csv [FORMAT] [CLUSTER]
// (defaults: philly, 64x8:V100-32GB).
import io.gpupool.model.ClusterSpecs;
import io.gpupool.model.GpuCatalog;
import io.gpupool.predict.sizing.AdvisorMemorySizer;
import io.gpupool.sim.trace.Trace;
import io.gpupool.sim.trace.TraceContext;
import io.gpupool.sim.trace.TraceFile;
import io.gpupool.sim.trace.TraceFormats;

import java.nio.file.Path;

public class TraceParseCost {
    public static void main(String[] args) {
        Path file = Path.of(args[0]);
        String format = args.length > 1 ? args[1] : "philly";
        var pool = ClusterSpecs.parse(args.length > 2 ? args[2] : "64x8:V100-32GB", GpuCatalog.standard());
        var context = TraceContext.forPool(GpuCatalog.standard(), pool).withSizer(new AdvisorMemorySizer(GpuCatalog.standard()));
        long t0 = System.nanoTime();
        TraceFile trace = TraceFile.open(file, TraceFormats.get(format), context, false);
        System.out.printf("index (once): %d jobs, %.0f ms%n", trace.stats().jobs(), (System.nanoTime() - t0) / 1e6);
        for (int pass = 1; pass <= 5; pass++) {
            t0 = System.nanoTime();
            long jobs = 0;
            try (var cursor = trace.open()) {
                while (cursor.hasNext()) {
                    cursor.next();
                    jobs++;
                }
            }
            System.out.printf("pass %d (one replay's parsing): %d jobs, %.0f ms%n", pass, jobs, (System.nanoTime() - t0) / 1e6);
        }
        Runtime rt = Runtime.getRuntime();
        System.gc();
        long before = rt.totalMemory() - rt.freeMemory();
        Trace loaded = Trace.loaded(trace);
        System.gc();
        long after = rt.totalMemory() - rt.freeMemory();
        System.out.printf("held in memory: %.1f MB (%.0f bytes a job)%n", (after - before) / 1e6, (after - before) / (double) loaded.stats().jobs());
    }
}
