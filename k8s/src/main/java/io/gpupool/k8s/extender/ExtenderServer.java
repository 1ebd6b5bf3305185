package io.gpupool.k8s.extender;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderBindingArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderBindingResult;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderFilterResult;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderPreemptionArgs;
import io.gpupool.k8s.extender.ExtenderTypes.ExtenderPreemptionResult;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The extender's HTTP side: {@code POST /filter}, {@code /prioritize}, {@code /bind}, {@code /preempt}
 * (kube-scheduler's filterVerb, prioritizeVerb, bindVerb, preemptVerb with urlPrefix at the root), and
 * {@code GET /healthz}. A body that is not the verb's JSON gets 400 with the verb's result type carrying
 * the reason in Error, never a 500.
 */
public final class ExtenderServer implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(ExtenderServer.class.getName());
    private final HttpServer http;
    private final ExtenderJson json = new ExtenderJson();

    public ExtenderServer(Extender extender, String host, int port) throws IOException {
        http = HttpServer.create(new InetSocketAddress(host, port), 128);
        http.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        route("/filter", ExtenderArgs.class, extender::filter, why -> new ExtenderFilterResult(null, null, Map.of(), Map.of(), why));
        route("/prioritize", ExtenderArgs.class, extender::prioritize, why -> List.of());
        route("/bind", ExtenderBindingArgs.class, extender::bind, ExtenderBindingResult::new);
        route("/preempt", ExtenderPreemptionArgs.class, extender::preempt, why -> new ExtenderPreemptionResult(Map.of()));
        http.createContext("/healthz", ex -> respond(ex, 200, "ok", "text/plain"));
    }

    public void start() { http.start(); }

    public int port() { return http.getAddress().getPort(); }

    @Override
    public void close() { http.stop(0); }

    private <A> void route(String path, Class<A> type, Function<A, Object> verb, Function<String, Object> badRequest) {
        http.createContext(path, ex -> {
            try (ex) {
                if (!ex.getRequestURI().getPath().equals(path)) {
                    respond(ex, 404, "no such verb: " + ex.getRequestURI().getPath(), "text/plain");
                    return;
                }
                if (!ex.getRequestMethod().equals("POST")) {
                    ex.getResponseHeaders().add("Allow", "POST");
                    respond(ex, 405, path + " takes POST", "text/plain");
                    return;
                }
                A args;
                try (InputStream in = ex.getRequestBody()) {
                    args = json.read(in, type);
                } catch (RuntimeException e) {
                    String why = "request body is not a valid " + type.getSimpleName() + ": " + firstLine(e.getMessage());
                    respond(ex, 400, json.write(badRequest.apply(why)), "application/json");
                    return;
                }
                if (args == null) {
                    respond(ex, 400, json.write(badRequest.apply("empty request body; expected a " + type.getSimpleName())), "application/json");
                    return;
                }
                Object result;
                try {
                    result = verb.apply(args);
                } catch (RuntimeException e) {
                    LOG.log(Level.WARNING, path + " failed", e);
                    result = badRequest.apply(path + " failed: " + e);
                }
                respond(ex, 200, json.write(result), "application/json");
            }
        });
    }

    private static String firstLine(String s) {
        if (s == null) return "";
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static void respond(HttpExchange ex, int code, String body, String type) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", type);
        ex.sendResponseHeaders(code, b.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(b);
        }
    }
}
