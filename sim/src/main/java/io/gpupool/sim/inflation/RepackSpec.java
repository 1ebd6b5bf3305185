package io.gpupool.sim.inflation;

import io.gpupool.engine.batch.BatchPlacers;
import io.gpupool.model.SpecException;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code --repack SOLVER:every=N[,gpus=K][,preempt=true|false][,OPTIONS]}: re-pack the running GPU shares with the pending tasks every
 * N arrivals ({@link InflationStudy#runRepack}) with the batch placer {@code SOLVER[:OPTIONS]} (its own options,
 * e.g. {@code seconds=2}, as {@code --batch} takes them; a re-pack considers every pending task, so the placer's
 * window does not apply). With {@code gpus=K} only the shares on the K most stranded shared GPUs are taken off;
 * with {@code preempt=true} a re-pack may preempt running shares (back to the queue) when that allocates more.
 *
 * @param placer the batch placer's spec, {@code every} and {@code gpus} taken out
 * @param every  arrivals between re-packs
 * @param gpus   shared GPUs whose shares a re-pack takes off, the most stranded first; 0 = all
 * @param preempt whether a re-pack may leave running shares out (preempt them) to allocate more
 */
public record RepackSpec(String placer, int every, int gpus, boolean preempt) {
    public static RepackSpec parse(String spec) {
        String where = "--repack '" + spec + "'";
        if (spec == null || spec.isBlank()) throw new SpecException(where, "solver", "must name a solver, e.g. cpsat:every=200,seconds=2");
        int colon = spec.indexOf(':');
        String name = (colon < 0 ? spec : spec.substring(0, colon)).trim();
        Integer every = null;
        int gpus = 0;
        boolean preempt = false;
        List<String> rest = new ArrayList<>();
        for (String opt : colon < 0 ? new String[0] : spec.substring(colon + 1).split(",")) {
            int eq = opt.indexOf('=');
            String key = eq < 0 ? "" : opt.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            if (key.equals("every")) {
                every = whole(where, key, opt.substring(eq + 1).trim());
                if (every < 1) throw new SpecException(where, "every", "must be >= 1 arrival, got " + every);
            } else if (key.equals("gpus")) {
                gpus = whole(where, key, opt.substring(eq + 1).trim());
                if (gpus < 1) throw new SpecException(where, "gpus", "must be >= 1 GPU (leave it out to re-pack every share), got " + gpus);
            } else if (key.equals("preempt")) {
                String v = opt.substring(eq + 1).trim().toLowerCase(Locale.ROOT);
                if (!v.equals("true") && !v.equals("false")) throw new SpecException(where, "preempt", "must be true or false, got '" + opt.substring(eq + 1).trim() + "'");
                preempt = v.equals("true");
            } else if (!opt.isBlank()) {
                rest.add(opt.trim());
            }
        }
        if (every == null) throw new SpecException(where, "every", "is required: re-pack every N arrivals, e.g. " + name + ":every=200");
        if (rest.stream().anyMatch(o -> o.toLowerCase(Locale.ROOT).startsWith("window="))) {
            throw new SpecException(where, "window", "does not apply: a re-pack places every running share and pending task");
        }
        RepackSpec out = new RepackSpec(rest.isEmpty() ? name : name + ":" + String.join(",", rest), every, gpus, preempt);
        try {
            BatchPlacers.create(out.placer);   // a bad solver or option fails here, named as --repack's
        } catch (SpecException e) {
            throw new SpecException(where, e.field(), e.rule());
        }
        return out;
    }

    private static int whole(String where, String key, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new SpecException(where, key, "must be a whole number, got '" + value + "'");
        }
    }
}
