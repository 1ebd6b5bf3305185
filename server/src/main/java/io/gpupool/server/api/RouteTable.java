package io.gpupool.server.api;

import io.javalin.config.RoutesConfig;
import io.javalin.http.Handler;

import java.util.ArrayList;
import java.util.List;

/** Registers routes and remembers them, so a test can check the OpenAPI document covers every one. */
public final class RouteTable {
    /** One route: method and Javalin path (e.g. {@code /api/v1/jobs/{id}}). */
    public record Route(String method, String path) {}

    private final RoutesConfig routes;
    private final List<Route> all = new ArrayList<>();

    RouteTable(RoutesConfig routes) {
        this.routes = routes;
    }

    void get(String path, Handler h) { all.add(new Route("get", path)); routes.get(path, h); }
    void post(String path, Handler h) { all.add(new Route("post", path)); routes.post(path, h); }
    void put(String path, Handler h) { all.add(new Route("put", path)); routes.put(path, h); }
    void patch(String path, Handler h) { all.add(new Route("patch", path)); routes.patch(path, h); }
    void delete(String path, Handler h) { all.add(new Route("delete", path)); routes.delete(path, h); }

    public List<Route> all() { return List.copyOf(all); }
}
