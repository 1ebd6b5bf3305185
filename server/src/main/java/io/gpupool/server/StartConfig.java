package io.gpupool.server;

import io.gpupool.engine.config.PoolConfig;
import io.gpupool.model.SpecException;
import io.gpupool.server.core.ConfigChange;
import io.gpupool.server.core.PoolService;
import io.gpupool.server.core.SchedulerSettings;
import io.gpupool.server.core.ServiceException;
import io.gpupool.store.TenantRow;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * {@code gpupool server --config FILE}: the configuration tree applied at every start. The file wins over the saved
 * configuration: it is read over the defaults (not over what an admin last PUT), so the same file gives the same
 * pool whatever happened since; changes made over the API last until the next start with the file. Tenants the
 * file names are created or updated; tenants it does not name stay (as with a PUT). Without --config the saved
 * configuration runs, and --policy only chooses a new pool's policy.
 */
final class StartConfig {
    private StartConfig() {}

    /** The file over the defaults, with --policy (null: not given) over the file's policy. */
    static PoolConfig read(Path file, String policyFlag) {
        if (!Files.isRegularFile(file)) throw new SpecException("--config", "config", "'" + file + "' does not exist or is not a file");
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new SpecException("--config", "config", "'" + file + "' cannot be read as UTF-8 text: " + e.getMessage());
        }
        PoolConfig tree = ConfigChange.READER.readYaml(text, file.toString(), SchedulerSettings.defaults("fair-share").tree());
        return policyFlag == null ? tree : tree.withPolicy(policy(policyFlag));
    }

    /** A policy the service runs (not one that needs true run times), else an error naming --policy. */
    static String policy(String name) {
        if (!ConfigChange.READER.policies().contains(name)) {
            throw new SpecException("--policy", "policy", "unknown policy '" + name + "'; the service runs: " + String.join(", ", ConfigChange.READER.policies()));
        }
        return name;
    }

    /** Applies the file's settings and tenants through the path of PUT /api/v1/config; returns the line to print. */
    static String apply(Path file, PoolConfig fromFile, PoolService pool) {
        Map<String, TenantRow> tenants = ConfigChange.byName(pool.tenants().join());
        ConfigChange change;
        try {
            change = ConfigChange.fromFile(fromFile, tenants);
        } catch (ServiceException e) {
            throw new SpecException(file.toString(), e.field(), e.rule());
        }
        SchedulerSettings applied = change.applyTo(pool, tenants).join();
        return "configuration: " + file + " (policy " + applied.policy() + ", placement " + applied.placement() + ", "
                + change.tenants().size() + " tenant" + (change.tenants().size() == 1 ? "" : "s") + " created or updated)";
    }
}
