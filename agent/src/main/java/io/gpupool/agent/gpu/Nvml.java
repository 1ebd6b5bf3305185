package io.gpupool.agent.gpu;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * The part of NVIDIA's management library (libnvidia-ml.so.1) the agent uses, called through
 * {@code java.lang.foreign}. Signatures, struct layouts, buffer sizes and return codes follow nvml.h
 * (NVML API version 11/12); the structs are declared below as {@link StructLayout}s so their offsets are
 * computed, not hand-written.
 *
 * <p>Every call returns an {@code nvmlReturn_t}; anything but success becomes an {@link NvmlException}
 * with NVML's own text ({@code nvmlErrorString}). Calls are synchronized: one agent thread samples, but
 * the CLI and tests may call from others.
 */
final class Nvml implements AutoCloseable {

    /** The soname the NVIDIA driver installs; found through the dynamic linker's search path. */
    static final String DEFAULT_LIBRARY = "libnvidia-ml.so.1";

    // nvmlReturn_t values (nvml.h)
    static final int SUCCESS = 0;
    static final int ERROR_INVALID_ARGUMENT = 2;
    static final int ERROR_NOT_SUPPORTED = 3;
    static final int ERROR_NO_PERMISSION = 4;
    static final int ERROR_NOT_FOUND = 6;
    static final int ERROR_INSUFFICIENT_SIZE = 7;
    static final int ERROR_DRIVER_NOT_LOADED = 9;
    static final int ERROR_FUNCTION_NOT_FOUND = 13;
    static final int ERROR_GPU_IS_LOST = 15;
    static final int ERROR_LIB_RM_VERSION_MISMATCH = 18;
    static final int ERROR_ARGUMENT_VERSION_MISMATCH = 25;

    /** NVML_VALUE_NOT_AVAILABLE: (unsigned long long) -1 in a field the driver cannot fill. */
    static final long VALUE_NOT_AVAILABLE = -1L;
    static final int TEMPERATURE_GPU = 0;          // nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU
    static final int FEATURE_ENABLED = 1;          // nvmlEnableState_t NVML_FEATURE_ENABLED
    static final int NVLINK_MAX_LINKS = 18;        // NVML_NVLINK_MAX_LINKS
    private static final int DRIVER_VERSION_BUFFER = 80; // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
    private static final int UUID_BUFFER = 96;           // NVML_DEVICE_UUID_V2_BUFFER_SIZE
    private static final int NAME_BUFFER = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE

    /** nvmlMemory_t: total, free, used; bytes. */
    static final StructLayout MEMORY = MemoryLayout.structLayout(
            JAVA_LONG.withName("total"), JAVA_LONG.withName("free"), JAVA_LONG.withName("used"));
    /**
     * nvmlMemory_v2_t: version, then total, reserved (for the driver and firmware), free, used; bytes. Its
     * used leaves the reserved memory out, as nvidia-smi shows it; nvmlMemory_t's used counts it in (615 MiB
     * on an idle H200 with driver 580, where nvidia-smi says 0).
     */
    static final StructLayout MEMORY_V2 = MemoryLayout.structLayout(
            JAVA_INT.withName("version"), MemoryLayout.paddingLayout(4), JAVA_LONG.withName("total"),
            JAVA_LONG.withName("reserved"), JAVA_LONG.withName("free"), JAVA_LONG.withName("used"));
    /** nvmlMemory_v2: NVML_STRUCT_VERSION(Memory, 2), the struct's size with the version in the top byte. */
    static final int MEMORY_V2_VERSION = (int) MEMORY_V2.byteSize() | (2 << 24);
    /** nvmlUtilization_t: percent of the last sample period. */
    static final StructLayout UTILIZATION = MemoryLayout.structLayout(
            JAVA_INT.withName("gpu"), JAVA_INT.withName("memory"));
    /** nvmlProcessInfo_t (v2 layout, used by the _v2 and _v3 process queries): 24 bytes with padding. */
    static final StructLayout PROCESS_INFO = MemoryLayout.structLayout(
            JAVA_INT.withName("pid"), MemoryLayout.paddingLayout(4),
            JAVA_LONG.withName("usedGpuMemory"),
            JAVA_INT.withName("gpuInstanceId"), JAVA_INT.withName("computeInstanceId"));
    /** nvmlPciInfo_t: busIdLegacy[16], domain, bus, device, pciDeviceId, pciSubSystemId, busId[32]. */
    static final StructLayout PCI_INFO = MemoryLayout.structLayout(
            MemoryLayout.sequenceLayout(16, java.lang.foreign.ValueLayout.JAVA_BYTE).withName("busIdLegacy"),
            JAVA_INT.withName("domain"), JAVA_INT.withName("bus"), JAVA_INT.withName("device"),
            JAVA_INT.withName("pciDeviceId"), JAVA_INT.withName("pciSubSystemId"),
            MemoryLayout.sequenceLayout(32, java.lang.foreign.ValueLayout.JAVA_BYTE).withName("busId"));

    /** A compute process as nvmlProcessInfo_t reports it; usedBytes is null for NVML_VALUE_NOT_AVAILABLE. */
    record ProcessInfo(long pid, Long usedBytes) {}

    /** nvmlMemory_t in bytes. */
    record Memory(long totalBytes, long freeBytes, long usedBytes) {}

    /** A PCI location (domain, bus, device): what identifies a GPU at the far end of an NVLink. */
    record PciAddress(int domain, int bus, int device) {}

    private final String library;
    private final Arena arena;
    private final MethodHandle init, shutdown, errorString, deviceCount, handleByIndex, uuid, name, memoryInfo, memoryInfoV2;
    private final MethodHandle driverVersion, cudaVersion, utilization, temperature, power, processes;
    private final MethodHandle nvlinkState, nvlinkRemotePci, pciInfo, minorNumber;
    private final String processesFunction;
    private final String cudaVersionFunction;

    private Nvml(String library, Arena arena, SymbolLookup lookup) throws GpuBackendException {
        this.library = library;
        this.arena = arena;
        Linker linker = Linker.nativeLinker();
        Functions f = new Functions(library, linker, lookup);
        FunctionDescriptor noArgs = FunctionDescriptor.of(JAVA_INT);
        FunctionDescriptor handleAndPointer = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
        FunctionDescriptor handleAndBuffer = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT);
        FunctionDescriptor handleLinkPointer = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);

        init = f.required("nvmlInit_v2", noArgs);
        shutdown = f.required("nvmlShutdown", noArgs);
        errorString = f.required("nvmlErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
        deviceCount = f.required("nvmlDeviceGetCount_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        handleByIndex = f.required("nvmlDeviceGetHandleByIndex_v2", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
        uuid = f.required("nvmlDeviceGetUUID", handleAndBuffer);
        name = f.required("nvmlDeviceGetName", handleAndBuffer);
        memoryInfo = f.required("nvmlDeviceGetMemoryInfo", handleAndPointer);
        memoryInfoV2 = f.optional("nvmlDeviceGetMemoryInfo_v2", handleAndPointer);

        driverVersion = f.optional("nvmlSystemGetDriverVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        FunctionDescriptor intOut = FunctionDescriptor.of(JAVA_INT, ADDRESS);
        cudaVersionFunction = f.firstPresent("nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion");
        cudaVersion = cudaVersionFunction == null ? null : f.optional(cudaVersionFunction, intOut);
        utilization = f.optional("nvmlDeviceGetUtilizationRates", handleAndPointer);
        temperature = f.optional("nvmlDeviceGetTemperature", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
        power = f.optional("nvmlDeviceGetPowerUsage", handleAndPointer);
        // _v3 and _v2 share nvmlProcessInfo_t's 24-byte layout; the unversioned v1 struct is smaller, so not used.
        processesFunction = f.firstPresent("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2");
        processes = processesFunction == null ? null
                : f.optional(processesFunction, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        nvlinkState = f.optional("nvmlDeviceGetNvLinkState", handleLinkPointer);
        nvlinkRemotePci = f.optional("nvmlDeviceGetNvLinkRemotePciInfo_v2", handleLinkPointer);
        pciInfo = f.optional("nvmlDeviceGetPciInfo_v3", handleAndPointer);
        minorNumber = f.optional("nvmlDeviceGetMinorNumber", handleAndPointer);
    }

    /**
     * Loads the library ({@link #DEFAULT_LIBRARY} through the linker's search path, or a file path) and
     * initialises NVML. The caller closes it, which shuts NVML down and unloads the library.
     */
    static Nvml open(String library) throws GpuBackendException {
        String lib = library == null || library.isBlank() ? DEFAULT_LIBRARY : library;
        Arena arena = Arena.ofShared();
        SymbolLookup lookup;
        try {
            lookup = lib.contains("/") ? SymbolLookup.libraryLookup(Path.of(lib), arena) : SymbolLookup.libraryLookup(lib, arena);
        } catch (IllegalArgumentException | IllegalCallerException e) {
            arena.close();
            String why = e instanceof IllegalCallerException
                    ? "native access is disabled (run java with --enable-native-access=ALL-UNNAMED)"
                    : "the library cannot be loaded (no NVIDIA driver on this machine, or not on the library path)";
            throw new GpuBackendException("NVML: cannot load " + lib + ": " + why, e);
        }
        Nvml nvml;
        try {
            nvml = new Nvml(lib, arena, lookup);
        } catch (GpuBackendException | RuntimeException e) {
            arena.close();
            throw e;
        }
        try {
            nvml.check("nvmlInit_v2", nvml.call(() -> (int) nvml.init.invokeExact()));
        } catch (GpuBackendException e) {
            arena.close();
            throw e;
        }
        return nvml;
    }

    /** The library that was loaded (as given). */
    String library() {
        return library;
    }

    synchronized String driverVersion() throws GpuBackendException {
        if (driverVersion == null) return null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(DRIVER_VERSION_BUFFER);
            check("nvmlSystemGetDriverVersion", call(() -> (int) driverVersion.invokeExact(buf, DRIVER_VERSION_BUFFER)));
            return buf.getString(0);
        }
    }

    /** The CUDA version the driver supports, as NVML encodes it (1000 x major + 10 x minor), e.g. 12040. */
    synchronized Integer cudaDriverVersion() throws GpuBackendException {
        if (cudaVersion == null) return null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(cudaVersionFunction, call(() -> (int) cudaVersion.invokeExact(out)));
            return out.get(JAVA_INT, 0);
        }
    }

    synchronized int deviceCount() throws GpuBackendException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check("nvmlDeviceGetCount_v2", call(() -> (int) deviceCount.invokeExact(out)));
            return out.get(JAVA_INT, 0);
        }
    }

    /** The opaque nvmlDevice_t of GPU {@code index}; valid until NVML shuts down. */
    synchronized MemorySegment handle(int index) throws GpuBackendException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            check("nvmlDeviceGetHandleByIndex_v2", call(() -> (int) handleByIndex.invokeExact(index, out)));
            return out.get(ADDRESS, 0);
        }
    }

    synchronized String uuid(MemorySegment device) throws GpuBackendException {
        return string("nvmlDeviceGetUUID", uuid, device, UUID_BUFFER);
    }

    synchronized String name(MemorySegment device) throws GpuBackendException {
        return string("nvmlDeviceGetName", name, device, NAME_BUFFER);
    }

    /** Memory in use without what the driver reserves (v2), else as nvmlMemory_t counts it (drivers before 510). */
    synchronized Memory memory(MemorySegment device) throws GpuBackendException {
        try (Arena a = Arena.ofConfined()) {
            if (memoryInfoV2 != null) {
                MemorySegment m = a.allocate(MEMORY_V2);
                m.set(JAVA_INT, MEMORY_V2.byteOffset(groupElement("version")), MEMORY_V2_VERSION);
                int rc = call(() -> (int) memoryInfoV2.invokeExact(device, m));
                if (rc == SUCCESS) {
                    return new Memory(field(m, MEMORY_V2, "total"), field(m, MEMORY_V2, "free"), field(m, MEMORY_V2, "used"));
                }
                if (rc != ERROR_NOT_SUPPORTED && rc != ERROR_FUNCTION_NOT_FOUND && rc != ERROR_ARGUMENT_VERSION_MISMATCH) {
                    check("nvmlDeviceGetMemoryInfo_v2", rc);
                }
            }
            MemorySegment m = a.allocate(MEMORY);
            check("nvmlDeviceGetMemoryInfo", call(() -> (int) memoryInfo.invokeExact(device, m)));
            return new Memory(field(m, MEMORY, "total"), field(m, MEMORY, "free"), field(m, MEMORY, "used"));
        }
    }

    /** GPU utilization in percent; null where this library has no such function. */
    synchronized Integer utilizationPercent(MemorySegment device) throws GpuBackendException {
        if (utilization == null) return null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment u = a.allocate(UTILIZATION);
            check("nvmlDeviceGetUtilizationRates", call(() -> (int) utilization.invokeExact(device, u)));
            return u.get(JAVA_INT, UTILIZATION.byteOffset(groupElement("gpu")));
        }
    }

    /** Core temperature in °C; null where this library has no such function. */
    synchronized Integer temperatureC(MemorySegment device) throws GpuBackendException {
        if (temperature == null) return null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check("nvmlDeviceGetTemperature", call(() -> (int) temperature.invokeExact(device, TEMPERATURE_GPU, out)));
            return out.get(JAVA_INT, 0);
        }
    }

    /** Board power in milliwatts; null where this library has no such function. */
    synchronized Long powerMilliwatts(MemorySegment device) throws GpuBackendException {
        if (power == null) return null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check("nvmlDeviceGetPowerUsage", call(() -> (int) power.invokeExact(device, out)));
            return Integer.toUnsignedLong(out.get(JAVA_INT, 0));
        }
    }

    /**
     * The compute processes on a GPU. NVML's protocol: call with a count of 0 to learn how many there are
     * (NVML_ERROR_INSUFFICIENT_SIZE with the count written back, or success when none), then with a buffer
     * of that size. Processes may start in between, so the buffer has room to spare and the call is
     * retried while the driver still says the buffer is too small.
     */
    synchronized List<ProcessInfo> computeProcesses(MemorySegment device) throws GpuBackendException {
        if (processes == null) return null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment count = a.allocate(JAVA_INT);
            count.set(JAVA_INT, 0, 0);
            int rc = call(() -> (int) processes.invokeExact(device, count, MemorySegment.NULL));
            if (rc == SUCCESS) return List.of();
            for (int attempt = 0; attempt < 5; attempt++) {
                if (rc != ERROR_INSUFFICIENT_SIZE) check(processesFunction, rc);
                int capacity = count.get(JAVA_INT, 0) + 8;
                MemorySegment infos = a.allocate(PROCESS_INFO, capacity);
                count.set(JAVA_INT, 0, capacity);
                rc = call(() -> (int) processes.invokeExact(device, count, infos));
                if (rc == SUCCESS) return readProcesses(infos, count.get(JAVA_INT, 0));
            }
            check(processesFunction, rc);
            return List.of(); // unreachable: check throws for anything but success
        }
    }

    private static List<ProcessInfo> readProcesses(MemorySegment infos, int n) {
        List<ProcessInfo> out = new ArrayList<>(n);
        long pidAt = PROCESS_INFO.byteOffset(groupElement("pid"));
        long memAt = PROCESS_INFO.byteOffset(groupElement("usedGpuMemory"));
        for (int i = 0; i < n; i++) {
            MemorySegment info = infos.asSlice(i * PROCESS_INFO.byteSize(), PROCESS_INFO);
            long used = info.get(JAVA_LONG, memAt);
            out.add(new ProcessInfo(Integer.toUnsignedLong(info.get(JAVA_INT, pidAt)), used == VALUE_NOT_AVAILABLE ? null : used));
        }
        return out;
    }

    /** The minor number of the GPU's device node /dev/nvidiaN; null where this library has no such function. */
    synchronized Integer minorNumber(MemorySegment device) throws GpuBackendException {
        if (minorNumber == null) return null;
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check("nvmlDeviceGetMinorNumber", call(() -> (int) minorNumber.invokeExact(device, out)));
            return out.get(JAVA_INT, 0);
        }
    }

    /** Whether this library can answer NVLink questions at all. */
    boolean hasNvlinkQueries() {
        return nvlinkState != null && nvlinkRemotePci != null && pciInfo != null;
    }

    synchronized PciAddress pciAddress(MemorySegment device) throws GpuBackendException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment pci = a.allocate(PCI_INFO);
            check("nvmlDeviceGetPciInfo_v3", call(() -> (int) pciInfo.invokeExact(device, pci)));
            return readPciAddress(pci);
        }
    }

    /**
     * The far ends of this GPU's active NVLinks (another GPU, or an NVSwitch). Empty when the GPU has no
     * NVLink (NVML answers "not supported") or none is up; a link index past the GPU's last link answers
     * "invalid argument", which ends the scan.
     */
    synchronized List<PciAddress> nvlinkRemotes(MemorySegment device) throws GpuBackendException {
        List<PciAddress> remotes = new ArrayList<>();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment state = a.allocate(JAVA_INT);
            MemorySegment pci = a.allocate(PCI_INFO);
            for (int link = 0; link < NVLINK_MAX_LINKS; link++) {
                int l = link;
                int rc = call(() -> (int) nvlinkState.invokeExact(device, l, state));
                if (rc == ERROR_NOT_SUPPORTED || rc == ERROR_INVALID_ARGUMENT || rc == ERROR_NOT_FOUND) break;
                check("nvmlDeviceGetNvLinkState", rc);
                if (state.get(JAVA_INT, 0) != FEATURE_ENABLED) continue;
                check("nvmlDeviceGetNvLinkRemotePciInfo_v2", call(() -> (int) nvlinkRemotePci.invokeExact(device, l, pci)));
                remotes.add(readPciAddress(pci));
            }
        }
        return remotes;
    }

    private static PciAddress readPciAddress(MemorySegment pci) {
        return new PciAddress(pci.get(JAVA_INT, PCI_INFO.byteOffset(groupElement("domain"))),
                pci.get(JAVA_INT, PCI_INFO.byteOffset(groupElement("bus"))),
                pci.get(JAVA_INT, PCI_INFO.byteOffset(groupElement("device"))));
    }

    /** NVML's text for a return code. */
    synchronized String errorString(int code) {
        try {
            MemorySegment text = (MemorySegment) errorString.invokeExact(code);
            return text.equals(MemorySegment.NULL) ? "unknown error" : text.reinterpret(1024).getString(0);
        } catch (Throwable t) {
            return "unknown error";
        }
    }

    @Override
    public synchronized void close() {
        if (!arena.scope().isAlive()) return;
        try {
            int rc = (int) shutdown.invokeExact();
        } catch (Throwable failure) {
            // shutting down: nothing to do about a failure
        } finally {
            arena.close();
        }
    }

    private String string(String function, MethodHandle h, MemorySegment device, int size) throws GpuBackendException {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(size);
            check(function, call(() -> (int) h.invokeExact(device, buf, size)));
            return buf.getString(0);
        }
    }

    private static long field(MemorySegment s, StructLayout layout, String name) {
        return s.get(JAVA_LONG, layout.byteOffset(groupElement(name)));
    }

    void check(String function, int rc) throws NvmlException {
        if (rc != SUCCESS) throw new NvmlException(function, rc, errorString(rc));
    }

    /** A native call; invokeExact declares Throwable, which here can only be a linkage or VM error. */
    @FunctionalInterface
    private interface NativeCall {
        int invoke() throws Throwable;
    }

    private int call(NativeCall c) {
        try {
            return c.invoke();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("NVML call failed unexpectedly", t);
        }
    }

    /** Looks functions up by name; a missing required one names the function and the library. */
    private record Functions(String library, Linker linker, SymbolLookup lookup) {
        MethodHandle required(String fn, FunctionDescriptor d) throws GpuBackendException {
            Optional<MemorySegment> s = lookup.find(fn);
            if (s.isEmpty()) {
                throw new GpuBackendException("NVML: " + library + " has no function " + fn
                        + " (driver too old? NVML 11 or newer is needed)");
            }
            return linker.downcallHandle(s.get(), d);
        }

        MethodHandle optional(String fn, FunctionDescriptor d) {
            return lookup.find(fn).map(s -> linker.downcallHandle(s, d)).orElse(null);
        }

        String firstPresent(String... fns) {
            for (String fn : fns) if (lookup.find(fn).isPresent()) return fn;
            return null;
        }
    }
}
