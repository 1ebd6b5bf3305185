package io.gpupool.server.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gpupool.model.GangShape;
import io.gpupool.model.GpuCatalog;
import io.gpupool.model.GpuModel;
import io.gpupool.model.GpuShare;
import io.gpupool.model.HostResources;
import io.gpupool.model.JobSpec;
import io.gpupool.model.SpecException;
import io.gpupool.model.TimeLimit;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A job submission as the API accepts it, validated field by field. Its {@link #toJson() JSON form} is what
 * the store keeps, so a restarted service rebuilds exactly the same {@link JobSpec}.
 *
 * @param tenant         null until the caller's tenant is known (a member's is implied by its token)
 * @param gpusPerReplica 0 = chosen from numGpus (one replica up to 8 GPUs, else the largest divisor)
 * @param estimateSec    0 = no estimate
 * @param workDir        the directory the command runs in on the node (absolute); null = a fresh one per attempt
 * @param restartPolicy  what happens when a run is lost to the infrastructure (its node lost, its process gone
 *                       while the agent was down): {@link #REQUEUE} (run it again as a new attempt) or {@link #FAIL}.
 *                       A command that exits with a non-zero code fails either way.
 * @param cpuMilli       host CPU each replica needs on its node, in thousandths of a core (0 = not asked)
 * @param hostMemMib     host RAM each replica needs on its node, in MiB (0 = not asked)
 * @param runAs          the Unix account the job runs as on its nodes ({@link UnixAccount}); null = the agent's
 *                       account for jobs without one (never root: a root agent runs them as its unbound-job account)
 * @param timeLimitSec   how long each attempt may run before its agent stops it and the job ends as TIMEOUT (0 = no
 *                       limit); the API's {@code timeLimit}, a Slurm {@code --time} string or a number of minutes. The
 *                       stored request has the tenant's default filled in ({@link #withTimeLimit})
 * @param reservation    the advance reservation the job runs in (Slurm's {@code --reservation}): only on its GPUs, only
 *                       inside its window; null = none
 */
public record JobRequest(String name, String tenant, String user, int numGpus, int gpusPerReplica, int gpuMilli,
                         long gpuMemMib, List<String> gpuTypes, int priority, boolean preemptible, boolean requireNvlink,
                         long estimateSec, List<String> command, Map<String, String> env, String workDir, String restartPolicy,
                         long cpuMilli, long hostMemMib, String runAs, long timeLimitSec, String reservation) {

    public static final String REQUEUE = "requeue";
    public static final String FAIL = "fail";
    public static final Set<String> FIELDS = Set.of("name", "tenant", "user", "numGpus", "gpusPerReplica", "gpuMilli",
            "gpuMemMib", "gpuTypes", "priority", "preemptible", "requireNvlink", "estimateSec", "command", "env", "workDir",
            "restartPolicy", "cpuMilli", "hostMemMib", "runAs", "timeLimit", "reservation", ModelSizing.FIELD);
    public static final int MAX_GPUS = 512;
    /** Bounds of the host request per replica: far beyond any server, small enough that sums never overflow. */
    public static final long MAX_CPU_MILLI = 4_096_000, MAX_HOST_MEM_MIB = 64L * 1024 * 1024;
    private static final Pattern ENV_KEY = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
    private static final ObjectMapper JSON = new ObjectMapper();

    public JobRequest {
        if (restartPolicy == null) restartPolicy = REQUEUE;
        gpuTypes = List.copyOf(gpuTypes);
        command = List.copyOf(command);
        env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
    }

    /** The request's {@code gpuTypes}: catalog ids, each once, in the order given; an unknown name is refused by its index. */
    public static List<String> gpuTypes(Fields f, GpuCatalog catalog) {
        JsonNode arr = f.array("gpuTypes", 32);
        Set<String> seen = new LinkedHashSet<>();
        for (int i = 0; i < arr.size(); i++) {
            JsonNode t = arr.get(i);
            String where = "gpuTypes[" + i + "]";
            if (!t.isTextual()) throw ServiceException.malformed(where, "must be a string");
            GpuModel m = catalog.find(t.textValue()).orElseThrow(() -> ServiceException.invalid(where,
                    "unknown GPU model '" + clip(t.textValue()) + "'; see `gpupool catalog` for the names"));
            seen.add(m.id());
        }
        return new ArrayList<>(seen);
    }

    /** Validates a request body; the first broken rule is thrown as a {@link ServiceException} naming the field. */
    public static JobRequest parse(JsonNode body, GpuCatalog catalog) {
        Fields f = Fields.of(body, "", FIELDS);
        String name = f.string("name", "", 200);
        String tenant = f.name("tenant", null);
        String user = f.string("user", "", 64);
        if (!f.has("numGpus")) throw ServiceException.invalid("numGpus", "is required");
        int numGpus = (int) f.integer("numGpus", 1, 1, MAX_GPUS);
        int perReplica = (int) f.integer("gpusPerReplica", 0, 1, MAX_GPUS);
        if (perReplica > 0 && numGpus % perReplica != 0) {
            throw ServiceException.invalid("gpusPerReplica", "must divide numGpus (" + numGpus + "), got " + perReplica);
        }
        int milli;
        long mem;
        try {
            milli = GpuShare.requireMilli(null, "gpuMilli", f.integer("gpuMilli", GpuShare.WHOLE, Long.MIN_VALUE, Long.MAX_VALUE));
            mem = f.integer("gpuMemMib", 0, 0, 16L * 1024 * 1024);
            GpuShare.requireOneGpuIfShared(null, "gpuMilli", "gpuMemMib", milli, mem, numGpus);
        } catch (SpecException e) {
            throw ServiceException.invalid(e.field(), e.rule());
        }
        List<String> types = f.has("gpuTypes") ? gpuTypes(f, catalog) : new ArrayList<>();
        if (f.has(ModelSizing.FIELD)) {
            ModelSizing.Filled filled = ModelSizing.fill(f, catalog, numGpus, perReplica, milli, mem, types);
            mem = filled.gpuMemMib();
            types = filled.gpuTypes();
        }
        int priority = (int) f.integer("priority", 0, -10_000, 10_000);
        boolean preemptible = f.bool("preemptible", true);
        boolean nvlink = f.bool("requireNvlink", false);
        long estimate = f.integer("estimateSec", 0, 1, 10L * 365 * 24 * 3600);
        if (!f.has("command")) throw ServiceException.invalid("command", "is required (the program and its arguments)");
        JsonNode cmd = f.array("command", 256);
        if (cmd.isEmpty()) throw ServiceException.invalid("command", "must not be empty");
        List<String> command = new ArrayList<>();
        for (int i = 0; i < cmd.size(); i++) {
            JsonNode a = cmd.get(i);
            if (!a.isTextual()) throw ServiceException.malformed("command[" + i + "]", "must be a string");
            if (a.textValue().length() > 4096) throw ServiceException.invalid("command[" + i + "]", "must be at most 4096 characters");
            if (a.textValue().indexOf('\0') >= 0) throw ServiceException.invalid("command[" + i + "]", "must not contain NUL");
            command.add(a.textValue());
        }
        if (command.getFirst().isBlank()) throw ServiceException.invalid("command[0]", "the program must not be blank");
        Map<String, String> env = new LinkedHashMap<>();
        if (f.has("env")) {
            ObjectNode e = f.object("env", 256);
            for (Iterator<Map.Entry<String, JsonNode>> it = e.fields(); it.hasNext(); ) {
                var kv = it.next();
                String where = "env." + clip(kv.getKey());
                if (!ENV_KEY.matcher(kv.getKey()).matches()) throw ServiceException.invalid(where, "names must match [A-Za-z_][A-Za-z0-9_]*");
                if (!kv.getValue().isTextual()) throw ServiceException.malformed(where, "must be a string");
                if (kv.getValue().textValue().length() > 32_768) throw ServiceException.invalid(where, "must be at most 32768 characters");
                if (kv.getValue().textValue().indexOf('\0') >= 0) throw ServiceException.invalid(where, "must not contain NUL");
                env.put(kv.getKey(), kv.getValue().textValue());
            }
        }
        String workDir = f.string("workDir", null, 4096);
        if (workDir != null && (!workDir.startsWith("/") || workDir.indexOf('\0') >= 0)) {
            throw ServiceException.invalid("workDir", "must be an absolute path on the node, got '" + clip(workDir) + "'");
        }
        String restart = f.string("restartPolicy", REQUEUE, 16);
        if (!restart.equals(REQUEUE) && !restart.equals(FAIL)) {
            throw ServiceException.invalid("restartPolicy", "must be '" + REQUEUE + "' or '" + FAIL + "', got '" + clip(restart) + "'");
        }
        long cpuMilli = f.integer("cpuMilli", 0, 0, MAX_CPU_MILLI);
        long hostMem = f.integer("hostMemMib", 0, 0, MAX_HOST_MEM_MIB);
        String runAs = f.string("runAs", null, 64);
        if (runAs != null) UnixAccount.checkName("runAs", runAs);
        long timeLimit = f.timeLimitSec("timeLimit", 0);
        String reservation = f.name("reservation", null);
        return new JobRequest(name, tenant, user, numGpus, perReplica, milli, mem, types, priority, preemptible, nvlink,
                estimate, command, env, workDir, restart, cpuMilli, hostMem, runAs, timeLimit, reservation);
    }

    /** This request for its tenant, running as {@code account} (null = no account). */
    public JobRequest withOwner(String t, String account) {
        return new JobRequest(name, t, user, numGpus, gpusPerReplica, gpuMilli, gpuMemMib, gpuTypes, priority, preemptible,
                requireNvlink, estimateSec, command, env, workDir, restartPolicy, cpuMilli, hostMemMib, account, timeLimitSec, reservation);
    }

    /** This request with another time limit in seconds (0 = none). */
    public JobRequest withTimeLimit(long seconds) {
        return new JobRequest(name, tenant, user, numGpus, gpusPerReplica, gpuMilli, gpuMemMib, gpuTypes, priority, preemptible,
                requireNvlink, estimateSec, command, env, workDir, restartPolicy, cpuMilli, hostMemMib, runAs, seconds, reservation);
    }

    /** This request with another priority, allowed GPU models and time limit (an edit of a queued job). */
    public JobRequest edited(int newPriority, List<String> newGpuTypes, long newTimeLimitSec) {
        return new JobRequest(name, tenant, user, numGpus, gpusPerReplica, gpuMilli, gpuMemMib, newGpuTypes, newPriority, preemptible,
                requireNvlink, estimateSec, command, env, workDir, restartPolicy, cpuMilli, hostMemMib, runAs, newTimeLimitSec, reservation);
    }

    /** This request with another environment. */
    public JobRequest withEnv(Map<String, String> newEnv) {
        return new JobRequest(name, tenant, user, numGpus, gpusPerReplica, gpuMilli, gpuMemMib, gpuTypes, priority, preemptible,
                requireNvlink, estimateSec, command, newEnv, workDir, restartPolicy, cpuMilli, hostMemMib, runAs, timeLimitSec, reservation);
    }

    /** The engine's view of this job. */
    public JobSpec toJobSpec(String id, long submitMs) {
        GangShape shape = gpusPerReplica > 0 ? new GangShape(numGpus / gpusPerReplica, gpusPerReplica)
                : GangShape.forGpuCount(numGpus, GangShape.DEFAULT_MAX_GPUS_PER_REPLICA);
        return new JobSpec(id, tenant, user, name, priority, submitMs, shape, new GpuShare(gpuMilli, gpuMemMib),
                Set.copyOf(gpuTypes), preemptible, requireNvlink, estimateSec > 0 ? OptionalLong.of(estimateSec * 1000) : OptionalLong.empty(),
                new HostResources(cpuMilli, hostMemMib), timeLimitSec > 0 ? OptionalLong.of(timeLimitSec * 1000) : OptionalLong.empty());
    }

    /** Canonical JSON (all fields, fixed order): stored, and compared for idempotent retries. */
    public String toJson() {
        return toNode().toString();
    }

    public ObjectNode toNode() {
        ObjectNode o = JSON.createObjectNode();
        o.put("name", name);
        o.put("tenant", tenant);
        o.put("user", user);
        o.put("numGpus", numGpus);
        if (gpusPerReplica > 0) o.put("gpusPerReplica", gpusPerReplica);
        o.put("gpuMilli", gpuMilli);
        o.put("gpuMemMib", gpuMemMib);
        gpuTypes.forEach(o.putArray("gpuTypes")::add);
        o.put("priority", priority);
        o.put("preemptible", preemptible);
        o.put("requireNvlink", requireNvlink);
        if (estimateSec > 0) o.put("estimateSec", estimateSec);
        command.forEach(o.putArray("command")::add);
        ObjectNode e = o.putObject("env");
        env.forEach(e::put);
        if (workDir != null) o.put("workDir", workDir);
        // only when not the default, so jobs stored before restart policies existed keep their canonical form
        if (!restartPolicy.equals(REQUEUE)) o.put("restartPolicy", restartPolicy);
        if (cpuMilli > 0) o.put("cpuMilli", cpuMilli);
        if (hostMemMib > 0) o.put("hostMemMib", hostMemMib);
        if (runAs != null) o.put("runAs", runAs);
        if (timeLimitSec > 0) o.put("timeLimit", TimeLimit.format(timeLimitSec));
        if (reservation != null) o.put("reservation", reservation);
        return o;
    }

    /** Reads back what {@link #toJson()} wrote. */
    public static JobRequest fromJson(String json, GpuCatalog catalog) {
        try {
            return parse(JSON.readTree(json), catalog);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("stored job spec is not JSON: " + e.getOriginalMessage());
        }
    }

    private static String clip(String s) {
        return s.length() > 40 ? s.substring(0, 40) + "..." : s;
    }
}
