package io.gpupool.agent.gpu;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Builds the stand-in NVML library (test resource nvml_standin.c) with gcc into target/nvml-standin/ once
 * per test run, and calls its standin_* controls. The library is dlopen'ed by path, so the agent's
 * handle and these controls share one copy of its data.
 */
public final class NvmlStandin {

    private static Path library;
    private static MethodHandle reset, failInit, memoryV2, initCalls, shutdownCalls, loseGpu, clearProcesses, addProcess, grow;

    private NvmlStandin() {
    }

    /** The built library (built on first use). */
    public static synchronized Path library() {
        if (library == null) {
            library = build();
            SymbolLookup l = SymbolLookup.libraryLookup(library, Arena.global());
            Linker linker = Linker.nativeLinker();
            reset = linker.downcallHandle(l.findOrThrow("standin_reset"), FunctionDescriptor.ofVoid());
            failInit = linker.downcallHandle(l.findOrThrow("standin_fail_init"), FunctionDescriptor.ofVoid(JAVA_INT));
            memoryV2 = linker.downcallHandle(l.findOrThrow("standin_memory_v2"), FunctionDescriptor.ofVoid(JAVA_INT));
            initCalls = linker.downcallHandle(l.findOrThrow("standin_init_calls"), FunctionDescriptor.of(JAVA_INT));
            shutdownCalls = linker.downcallHandle(l.findOrThrow("standin_shutdown_calls"), FunctionDescriptor.of(JAVA_INT));
            loseGpu = linker.downcallHandle(l.findOrThrow("standin_lose_gpu"), FunctionDescriptor.ofVoid(JAVA_INT));
            clearProcesses = linker.downcallHandle(l.findOrThrow("standin_clear_processes"), FunctionDescriptor.ofVoid(JAVA_INT));
            addProcess = linker.downcallHandle(l.findOrThrow("standin_add_process"), FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT, JAVA_LONG));
            grow = linker.downcallHandle(l.findOrThrow("standin_grow_after_size_query"), FunctionDescriptor.ofVoid(JAVA_INT, JAVA_INT));
        }
        return library;
    }

    public static void reset() throws Throwable {
        library();
        reset.invokeExact();
    }

    public static void failInit(int nvmlReturn) throws Throwable {
        failInit.invokeExact(nvmlReturn);
    }

    /** false: nvmlDeviceGetMemoryInfo_v2 answers NOT_SUPPORTED, as a driver older than the function would. */
    public static void memoryV2(boolean on) throws Throwable {
        memoryV2.invokeExact(on ? 1 : 0);
    }

    public static int initCalls() throws Throwable {
        return (int) initCalls.invokeExact();
    }

    public static int shutdownCalls() throws Throwable {
        return (int) shutdownCalls.invokeExact();
    }

    public static void loseGpu(int gpu) throws Throwable {
        loseGpu.invokeExact(gpu);
    }

    public static void clearProcesses(int gpu) throws Throwable {
        clearProcesses.invokeExact(gpu);
    }

    public static void addProcess(int gpu, long pid, long usedMib) throws Throwable {
        addProcess.invokeExact(gpu, (int) pid, usedMib * 1024 * 1024);
    }

    public static void growAfterSizeQuery(int gpu, int n) throws Throwable {
        grow.invokeExact(gpu, n);
    }

    private static Path build() {
        try {
            Path source = Path.of(NvmlStandin.class.getResource("nvml_standin.c").toURI());
            // target/test-classes/io/gpupool/agent/gpu/nvml_standin.c -> target/nvml-standin/
            Path target = source.getParent().getParent().getParent().getParent().getParent().getParent();
            Path out = target.resolve("nvml-standin").resolve("libnvidia-ml-standin.so");
            Files.createDirectories(out.getParent());
            Process gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", out.toString(), source.toString())
                    .redirectErrorStream(true).start();
            String log = new String(gcc.getInputStream().readAllBytes());
            if (!gcc.waitFor(60, TimeUnit.SECONDS) || gcc.exitValue() != 0) {
                throw new IllegalStateException("gcc could not build the NVML stand-in:\n" + log);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("the NVML binding test needs gcc on PATH to build its stand-in library: " + e.getMessage(), e);
        } catch (URISyntaxException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }
}
