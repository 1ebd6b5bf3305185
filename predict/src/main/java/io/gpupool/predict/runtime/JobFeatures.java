package io.gpupool.predict.runtime;

import io.gpupool.model.JobSpec;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * What the predictors know about a job at submission: who (user, tenant), what (its name as tokens and as a
 * template with the numbers blanked out, so {@code train-llama-run17} and {@code train-llama-run18} are one
 * kind of job), how big (GPUs, GPU model), what the user asked for (requested time) and when (hour and
 * weekday of submission, UTC).
 *
 * @param requestedMs the user's run-time estimate, -1 when none
 * @param gpus        GPU units: GPUs x share per GPU (a half GPU is 0.5)
 * @param gpuModel    the allowed GPU models, sorted and joined with '|'; empty = any
 */
public record JobFeatures(String user, String tenant, String name, List<String> tokens, String template,
                          double gpus, String gpuModel, long requestedMs, int hour, int weekday) {
    private static final Pattern SPLIT = Pattern.compile("[^a-z0-9]+");
    private static final Pattern DIGITS = Pattern.compile("[0-9]+");
    /** Hex-like ids (hashes, run ids) say nothing about the kind of job. */
    private static final Pattern HEX_ID = Pattern.compile("(?=.*[0-9])[0-9a-f]{6,}");
    private static final long HOUR_MS = 3_600_000L;
    private static final long DAY_MS = 24 * HOUR_MS;

    public static JobFeatures of(JobSpec j) {
        List<String> tokens = tokens(j.name());
        long submit = j.submitTimeMs();
        // 1970-01-01 was a Thursday: +3 makes Monday 0.
        int weekday = (int) Math.floorMod(Math.floorDiv(submit, DAY_MS) + 3, 7L);
        int hour = (int) Math.floorMod(Math.floorDiv(submit, HOUR_MS), 24L);
        String models = String.join("|", new TreeSet<>(j.allowedModels()));
        double gpus = j.totalGpus() * (j.share().milli() / 1000.0);
        return new JobFeatures(j.user(), j.tenant(), j.name(), tokens, String.join("-", tokens), gpus, models,
                j.runtimeEstimateMs().orElse(-1), hour, weekday);
    }

    /** Lower-case alphanumeric tokens with digit runs blanked ({@code run17} -> {@code run#}) and hex ids dropped to {@code #}. */
    static List<String> tokens(String name) {
        List<String> out = new ArrayList<>();
        for (String t : SPLIT.split(name.toLowerCase(Locale.ROOT))) {
            if (t.isEmpty()) continue;
            out.add(HEX_ID.matcher(t).matches() ? "#" : DIGITS.matcher(t).replaceAll("#"));
        }
        return out;
    }

    public String firstToken() {
        return tokens.isEmpty() ? "" : tokens.getFirst();
    }

    public boolean hasName() {
        return !name.isEmpty();
    }
}
