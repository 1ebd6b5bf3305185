package io.gpupool.cli;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** {@code gpupool logs JOB [--follow]}: a job's output as its agent shipped it to the server. */
@Command(name = "logs", description = "Print a job's output (stdout by default) as the server holds it; --follow keeps printing until the attempt ends.")
public final class LogsCommand extends ClientCommand {
    private static final long POLL_MS = 1000;
    /** After the attempt has ended, stop following when this many polls brought nothing (its output may never complete, e.g. a lost node). */
    private static final int IDLE_POLLS_AFTER_END = 5;

    @Parameters(paramLabel = "JOB", description = "Job id, e.g. j42.")
    String id;
    @Option(names = {"-f", "--follow"}, description = "Keep printing new output until the attempt has ended and all of it is shown.")
    boolean follow;
    @Option(names = "--stream", defaultValue = "stdout", paramLabel = "NAME", description = "stdout or stderr (default: ${DEFAULT-VALUE}).")
    String stream;
    @Option(names = "--attempt", paramLabel = "N", description = "The attempt (default: the latest).")
    Integer attempt;
    @Option(names = "--node", paramLabel = "NAME", description = "The node, for a job on several (default: the one of its first replica).")
    String node;

    @Override
    public Integer call() throws InterruptedException {
        ApiClient api = api();
        PrintWriter out = out();
        long offset = 0;
        Integer at = attempt;
        int idleAfterEnd = 0;
        while (true) {
            StringBuilder q = new StringBuilder("/api/v1/jobs/" + enc(id) + "/logs?stream=" + enc(stream) + "&offset=" + offset);
            if (at != null) q.append("&attempt=").append(at);
            if (node != null) q.append("&node=").append(enc(node));
            JsonNode r = api.get(q.toString());
            // follow one attempt, even if a new one starts meanwhile; a job still waiting has none yet (0)
            if (r.path("attempt").asInt() > 0) at = r.path("attempt").asInt();
            String text = r.path("text").asText("");
            out.print(text);
            out.flush();
            if (!text.isEmpty()) idleAfterEnd = 0;
            long next = r.path("nextOffset").asLong(offset);
            boolean more = next < r.path("length").asLong();
            offset = next;
            if (more) continue;
            if (!follow || r.path("complete").asBoolean()) return 0;
            if (attemptEnded(r) && ++idleAfterEnd >= IDLE_POLLS_AFTER_END) return 0;
            if (text.isEmpty() && r.path("attempts").isEmpty() && isEnded(r.path("state").asText())) return 0; // never ran
            Thread.sleep(POLL_MS);
        }
    }

    /** The followed attempt has ended on its node (so only output already on its way may still come). */
    private static boolean attemptEnded(JsonNode r) {
        for (JsonNode a : r.path("attempts")) {
            if (a.path("attempt").asInt() == r.path("attempt").asInt() && a.path("node").asText().equals(r.path("node").asText())) {
                return !a.path("state").asText().equals("ASSIGNED") && !a.path("state").asText().equals("RUNNING");
            }
        }
        return false;
    }

    private static boolean isEnded(String state) {
        return state.equals("SUCCEEDED") || state.equals("FAILED") || state.equals("CANCELLED") || state.equals("TIMEOUT");
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
