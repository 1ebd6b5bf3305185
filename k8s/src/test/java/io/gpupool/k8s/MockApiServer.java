package io.gpupool.k8s;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * fabric8's mock API server in CRUD mode, with the one API server behaviour a scheduler needs that CRUD
 * mode lacks: creating a Binding sets the pod's spec.nodeName (and is refused with 409 when the pod is
 * already assigned), instead of storing a Binding object.
 */
public final class MockApiServer implements AutoCloseable {
    private final KubernetesMockServer server;
    private final KubernetesClient client;
    private final io.fabric8.kubernetes.client.Config config;

    public MockApiServer() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new BindingDispatcher(), false);
        server.init();
        try (KubernetesClient base = server.createClient()) {
            config = new io.fabric8.kubernetes.client.ConfigBuilder(base.getConfiguration()).withRequestTimeout(60_000).build();
        }
        client = newClient();
    }

    public KubernetesClient client() { return client; }

    /**
     * A client of its own, as each scheduler replica has one; with a long request timeout, since a loaded
     * test machine (CI) can keep the mock server from answering within the default 10 s.
     */
    public KubernetesClient newClient() {
        return server.createClient(b -> b.withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(config).build()));
    }

    @Override
    public void close() {
        client.close();
        try {
            server.destroy();
        } catch (IllegalStateException e) {
            // the mock server's own shutdown timed out on a busy machine; its port is released with the JVM
        }
    }

    private static final class BindingDispatcher extends KubernetesCrudDispatcher {
        private static final Pattern BINDINGS = Pattern.compile("^/api/v1/namespaces/([^/]+)/(?:bindings|pods/([^/]+)/binding)/?(?:\\?.*)?$");
        private final KubernetesSerialization json = new KubernetesSerialization();

        @Override
        public MockResponse handleCreate(RecordedRequest request) {
            Matcher m = BINDINGS.matcher(request.getPath());
            if (!m.matches()) return super.handleCreate(request);
            synchronized (this) {
                Binding b = json.unmarshal(request.getUtf8Body(), Binding.class);
                String ns = m.group(1);
                String name = m.group(2) != null ? m.group(2) : b.getMetadata().getName();
                String podPath = "/api/v1/namespaces/" + ns + "/pods/" + name;
                MockResponse current = handleGet(podPath);
                if (current.code() != 200) return current;
                Pod pod = json.unmarshal(new String(current.getBody().getBytes(), StandardCharsets.UTF_8), Pod.class);
                if (pod.getSpec().getNodeName() != null && !pod.getSpec().getNodeName().isEmpty()) {
                    return status(409, "Conflict", "Operation cannot be fulfilled on pods/binding \"" + name + "\": pod " + name
                            + " is already assigned to node \"" + pod.getSpec().getNodeName() + "\"");
                }
                String patch = "{\"spec\":{\"nodeName\":\"" + b.getTarget().getName() + "\"}}";
                MockResponse r = handlePatch(new RecordedRequest("HTTP/1.1", HttpMethod.PATCH, podPath,
                        Headers.builder().add("Content-Type", "application/merge-patch+json").build(), new Buffer(patch.getBytes(StandardCharsets.UTF_8))));
                if (r.code() >= 300) return r;
                return new MockResponse().setResponseCode(201).setBody(request.getUtf8Body());
            }
        }

        private static MockResponse status(int code, String reason, String message) {
            return new MockResponse().setResponseCode(code).setBody("{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\""
                    + reason + "\",\"code\":" + code + ",\"message\":\"" + message.replace("\"", "\\\"") + "\"}");
        }
    }
}
