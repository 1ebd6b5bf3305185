package io.gpupool.server;

import io.gpupool.agent.protocol.AccountIsolation;
import io.gpupool.server.core.AgentSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.gpupool.server.TestServer.ADMIN;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 14: where a tenant's jobs may run, by what nodes say of Unix accounts. A node whose agent runs every job as
 * its own account (not root) gets a tenant's jobs only if the tenant allows that; a node that lacks a job's account
 * gets none of that account's jobs until its agent stops listing the account; the node API shows both.
 */
class AccountPlacementTest {
    @TempDir Path dir;

    @Test
    void shared_account_nodes_only_for_tenants_that_allow_them_and_no_job_where_its_account_is_missing() throws Exception {
        ServerOptions o = TestServer.options(dir).withCluster(null).withAgents(new AgentSettings(200, 30_000));
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            TestNode shared = new TestNode(s.base, join, "acct-shared", "1xA10");
            shared.accounts = new AccountIsolation(false, "the agent is not root: every job runs as the agent's own account", List.of());
            shared.register();
            shared.report(List.of(), List.of(), List.of(), 0);
            // the node list is the pool snapshot's, which the engine loop publishes after its round
            TestServer.eventually("the node says it runs jobs under its agent's account", () -> s.get("/api/v1/nodes", ADMIN).body().path("nodes")
                    .findValues("accounts").stream().anyMatch(a -> a.has("switches") && !a.path("switches").asBoolean()));

            s.post("/api/v1/tenants", ADMIN, Map.of("name", "strict"));
            String strict = s.post("/api/v1/tenants/strict/tokens", ADMIN, Map.of("unixUser", "alice")).text("token");
            String waiting = submit(s, strict);
            TestServer.eventually("the job waits, saying why", () -> waitReason(s, strict, waiting).contains("agent's account"));
            assertThat(s.get("/api/v1/jobs/" + waiting, strict).body().path("state").asText()).isEqualTo("PENDING");

            // the admin allows the tenant on shared-account nodes: the waiting job is placed there
            TestServer.Reply put = s.call("PUT", "/api/v1/tenants/strict", ADMIN, Map.of("sharedAccountNodes", true), Map.of());
            assertThat(put.status()).as(put.body().toString()).isEqualTo(200);
            assertThat(put.body().path("sharedAccountNodes").asBoolean()).isTrue();
            TestServer.eventually("the job is placed", () -> s.get("/api/v1/jobs/" + waiting, strict).body().path("state").asText().equals("RUNNING"));

            // a root node that lacks alice's account: her next job is not placed there, until the node has it
            TestNode own = new TestNode(s.base, join, "acct-own", "1xL4");
            own.accounts = new AccountIsolation(true, null, List.of("alice"));
            own.register();
            own.report(List.of(), List.of(), List.of(), 0);
            String l4 = s.post("/api/v1/jobs", strict, Map.of("numGpus", 1, "gpuTypes", List.of("L4"), "command", List.of("true"))).text("id");
            TestServer.eventually("alice's job waits", () -> waitReason(s, strict, l4).contains("account missing"));
            own.accounts = new AccountIsolation(true, null, List.of());
            own.report(List.of(), List.of(), List.of(), 0);
            // the state is the engine's (live), the attempts the store's: wait for the attempt's row too
            TestServer.eventually(Duration.ofSeconds(10), "alice's job is placed once the node has her account",
                    () -> s.get("/api/v1/jobs/" + l4, strict).body().path("state").asText().equals("RUNNING")
                            && s.get("/api/v1/jobs/" + l4, strict).body().path("attempts").size() == 1);
            assertThat(s.get("/api/v1/jobs/" + l4, strict).body().path("attempts").get(0).path("node").asText()).isEqualTo("acct-own");
        }
    }

    @Test
    void an_attempt_that_finds_its_account_missing_runs_again_on_a_node_that_has_it() throws Exception {
        ServerOptions o = TestServer.options(dir).withCluster(null).withAgents(new AgentSettings(200, 30_000));
        try (TestServer s = TestServer.start(o)) {
            String join = s.post("/api/v1/agent-tokens", ADMIN, Map.of()).text("token");
            TestNode lacking = new TestNode(s.base, join, "acct-lacking", "1xA10");
            lacking.register();
            lacking.report(List.of(), List.of(), List.of(), 0);
            s.post("/api/v1/tenants", ADMIN, Map.of("name", "team"));
            String bob = s.post("/api/v1/tenants/team/tokens", ADMIN, Map.of("unixUser", "bob")).text("token");
            String id = s.post("/api/v1/jobs", bob, Map.of("numGpus", 1, "gpuTypes", List.of("A10"), "command", List.of("true"))).text("id");
            lacking.launch(id);
            // the agent could not start it: no account bob there, which its report says
            lacking.accounts = new AccountIsolation(true, null, List.of("bob"));
            lacking.report(lacking.status(id, 1, io.gpupool.agent.protocol.JobPhase.FAILED, null));
            TestServer.eventually("the job waits again, not failed", () -> waitReason(s, bob, id).contains("account missing"));
            assertThat(s.get("/api/v1/jobs/" + id, bob).body().path("state").asText()).isEqualTo("PENDING");

            TestNode having = new TestNode(s.base, join, "acct-having", "1xA10");
            having.register();
            having.report(List.of(), List.of(), List.of(), 0);
            TestServer.eventually(Duration.ofSeconds(10), "it runs on the node that has bob", () -> s.get("/api/v1/jobs/" + id, bob).body()
                    .path("attempts").findValuesAsText("node").contains("acct-having"));
            assertThat(s.get("/api/v1/jobs/" + id, bob).body().path("attempt").asInt()).isEqualTo(2);
        }
    }

    private static String submit(TestServer s, String token) {
        TestServer.Reply r = s.post("/api/v1/jobs", token, Map.of("numGpus", 1, "gpuTypes", List.of("A10"), "command", List.of("true")));
        assertThat(r.status()).as(r.body().toString()).isEqualTo(201);
        assertThat(r.text("runAs")).isEqualTo("alice");
        return r.text("id");
    }

    private static String waitReason(TestServer s, String token, String id) {
        return s.get("/api/v1/jobs/" + id, token).body().path("waitReason").asText();
    }
}
