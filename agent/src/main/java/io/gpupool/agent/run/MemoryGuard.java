package io.gpupool.agent.run;

import io.gpupool.agent.protocol.GpuInfo;
import io.gpupool.agent.protocol.GpuProcess;
import io.gpupool.agent.protocol.GpuSample;
import io.gpupool.agent.protocol.GrantedGpu;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Compares the GPU memory each job's processes hold, as the driver reports it per process (NVML counts
 * everything a process reserved: a caching allocator's free blocks and the CUDA context too, not only
 * live tensors), with what the job was granted. Processes are tied to jobs by session (every job is its
 * own session), else by walking up their parents to a job's process.
 */
final class MemoryGuard {

    /** A job holds more on a GPU than its grant plus the allowance, or holds memory on a GPU it was not granted. */
    record Violation(RunningJob job, String gpuUuid, long usedMib, long grantedMib, long allowanceMib) {
        String describe() {
            if (grantedMib == 0) {
                return "holds " + usedMib + " MiB on GPU " + gpuUuid + ", which it was not granted";
            }
            return "exceeded its GPU memory grant on " + gpuUuid + ": its processes hold " + usedMib
                    + " MiB, granted " + grantedMib + " MiB (+" + allowanceMib + " MiB allowance)";
        }
    }

    private MemoryGuard() {
    }

    static List<Violation> check(List<GpuSample> samples, Collection<RunningJob> jobs, Map<String, GpuInfo> gpus, long allowanceMib) {
        if (jobs.isEmpty()) return List.of();
        Map<Long, RunningJob> byPid = new HashMap<>();
        for (RunningJob j : jobs) byPid.put(j.pid(), j);
        // (job, gpu) -> MiB held, in a stable order for the reports
        Map<RunningJob, Map<String, Long>> held = new LinkedHashMap<>();
        for (GpuSample s : samples) {
            for (GpuProcess p : s.processes()) {
                if (p.usedMemoryMib() == null) continue;
                ownerOf(p.pid(), byPid).ifPresent(j ->
                        held.computeIfAbsent(j, k -> new LinkedHashMap<>()).merge(p.gpuUuid(), p.usedMemoryMib(), Long::sum));
            }
        }
        List<Violation> out = new ArrayList<>();
        held.forEach((job, perGpu) -> perGpu.forEach((uuid, used) -> {
            Optional<GrantedGpu> grant = job.launch().gpus().stream().filter(g -> g.uuid().equals(uuid)).findFirst();
            if (grant.isEmpty()) {
                out.add(new Violation(job, uuid, used, 0, allowanceMib));
                return;
            }
            if (grant.get().whole()) return; // all of the GPU is the job's
            GpuInfo gpu = gpus.get(uuid);
            long granted = grant.get().memoryOn(gpu == null ? 0 : gpu.memoryTotalMib());
            if (used > granted + allowanceMib) out.add(new Violation(job, uuid, used, granted, allowanceMib));
        }));
        return out;
    }

    private static Optional<RunningJob> ownerOf(long pid, Map<Long, RunningJob> byPid) {
        if (byPid.containsKey(pid)) return Optional.of(byPid.get(pid)); // the job's own process: no need to ask /proc
        OptionalLong session = ProcFs.sessionId(pid);
        if (session.isPresent() && byPid.containsKey(session.getAsLong())) return Optional.of(byPid.get(session.getAsLong()));
        Optional<ProcessHandle> h = ProcessHandle.of(pid);
        for (int depth = 0; h.isPresent() && depth < 64; depth++) {
            RunningJob j = byPid.get(h.get().pid());
            if (j != null) return Optional.of(j);
            h = h.get().parent();
        }
        return Optional.empty();
    }
}
