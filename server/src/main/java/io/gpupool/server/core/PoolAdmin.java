package io.gpupool.server.core;

import io.gpupool.engine.TenantConfig;
import io.gpupool.model.SpecException;
import io.gpupool.store.NodeRow;
import io.gpupool.store.TenantRow;
import io.gpupool.store.Write;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/** What admins change on the running pool: cordons and drains of nodes, tenants, the scheduler's settings. Loop thread only. */
final class PoolAdmin {
    private final PoolState pool;
    private final JobLifecycle jobs;

    PoolAdmin(PoolState pool, JobLifecycle jobs) {
        this.pool = pool;
        this.jobs = jobs;
    }

    /** Cordon (no new work) or uncordon a node. */
    CompletableFuture<Void> setCordoned(String node, boolean cordoned) {
        pool.writes.requireStore();
        NodeRow n = pool.requireNode(node);
        pool.engine.setCordoned(node, cordoned);
        putCordoned(n, cordoned);
        return pool.writes.commitOfThisIteration();
    }

    /** Cordons the node and sends its running jobs back to the queue (they restart elsewhere). */
    CompletableFuture<List<String>> drain(String node) {
        pool.writes.requireStore();
        NodeRow n = pool.requireNode(node);
        putCordoned(n, true);
        List<String> moved = jobs.drain(node, pool.clock.now());
        return pool.writes.commitOfThisIteration().thenApply(v -> moved);
    }

    private void putCordoned(NodeRow n, boolean cordoned) {
        NodeRow row = new NodeRow(n.name(), n.spec(), n.source(), cordoned, n.registeredMs());
        pool.nodes.put(n.name(), row);
        pool.writes.add(new Write.PutNode(row));
        pool.applySchedulable(n.name());
        pool.roundDue = true;
    }

    /**
     * Creates ({@code create}) or updates a tenant: weight, guarantee, limit, whether its jobs may run on nodes that
     * run every job as the agent's own account ({@code sharedAccountNodes}), and its jobs' default and maximum time
     * limits (seconds, 0 = none).
     */
    CompletableFuture<TenantRow> putTenant(String name, double weight, double guaranteed, double limit, boolean sharedAccountNodes,
                                           long defaultTimeLimitSec, long maxTimeLimitSec, boolean create) {
        pool.writes.requireStore();
        TenantRow old = pool.tenants.get(name);
        if (create && old != null) throw ServiceException.conflict("name", "tenant '" + name + "' already exists");
        if (!create && old == null) throw ServiceException.notFound("tenant '" + name + "'");
        try {
            new TenantConfig(name, weight, guaranteed, limit);
        } catch (SpecException e) {
            // the engine names the cluster file's fields (guaranteed_gpus); the caller sent the API's
            String field = switch (e.field()) {
                case "guaranteed_gpus" -> "guaranteedGpus";
                case "limit_gpus" -> "limitGpus";
                default -> e.field();
            };
            throw ServiceException.invalid(field, e.rule());
        }
        TenantTimeLimits.check(defaultTimeLimitSec, maxTimeLimitSec);
        TenantRow row = new TenantRow(name, weight, guaranteed, limit, old != null ? old.createdMs() : pool.clock.now(), sharedAccountNodes,
                defaultTimeLimitSec, maxTimeLimitSec);
        pool.tenants.put(name, row);
        pool.engine.reconfigure(pool.settings.toConfig(pool.tenantConfigs()));
        pool.writes.add(new Write.PutTenant(row));
        pool.roundDue = true;
        return pool.writes.commitOfThisIteration().thenApply(v -> row);
    }

    /** Applies new scheduler settings (validated by the caller) without a restart; running jobs keep their GPUs. */
    CompletableFuture<SchedulerSettings> reconfigure(SchedulerSettings s) {
        pool.writes.requireStore();
        try {
            pool.engine.reconfigure(s.toConfig(pool.tenantConfigs()));
        } catch (SpecException e) {
            throw ServiceException.invalid(e.field(), e.getMessage());
        }
        pool.settings = s;
        pool.writes.add(new Write.PutSetting("scheduler", s.toJson()));
        pool.roundDue = true;
        return pool.writes.commitOfThisIteration().thenApply(v -> s);
    }
}
