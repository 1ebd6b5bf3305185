// Where a short replay's time goes (docs/benchmarks.md, issue 16, "Start-up and warm-up against the replay itself"):
// runs one `gpupool simulate` command N times in one JVM, as the CLI runs it (output discarded), and prints each
// run's wall time. The first run pays class loading and the JIT's warm-up; the later ones are the replay on compiled
// code, which bounds what work in the engine alone can give a launcher run (JVM start-up, warm-up and replay).
// A single-file program against the CLI's jar (flags as ./gpupool's short replays: serial collector):
//   java -XX:+UseSerialGC -cp cli/target/gpupool.jar bench/sim/WarmReplay.java N simulate --trace ... --policy P
import io.gpupool.cli.GpupoolCommand;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.Arrays;

public class WarmReplay {
    public static void main(String[] args) {
        int runs = Integer.parseInt(args[0]);
        String[] command = Arrays.copyOfRange(args, 1, args.length);
        PrintStream out = System.out;
        long[] ms = new long[runs];
        for (int i = 0; i < runs; i++) {
            System.setOut(new PrintStream(OutputStream.nullOutputStream()));
            long t0 = System.nanoTime();
            int exit;
            try {
                exit = GpupoolCommand.forArgs(command).execute(command);
            } finally {
                System.setOut(out);
            }
            ms[i] = (System.nanoTime() - t0) / 1_000_000;
            if (exit != 0) throw new IllegalStateException("run " + (i + 1) + " exited with " + exit);
        }
        long[] warm = Arrays.copyOfRange(ms, 1, runs);
        Arrays.sort(warm);
        out.printf("runs (ms): %s%nfirst %d ms; later runs: min %d ms, median %d ms%n", Arrays.toString(ms), ms[0],
                warm.length == 0 ? 0 : warm[0], warm.length == 0 ? 0 : warm[warm.length / 2]);
    }
}
